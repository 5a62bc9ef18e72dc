#include "kembed/app/command.hpp"

#include "kembed/app/ca_command.hpp"
#include "kembed/app/generate_command.hpp"
#include "kembed/app/kpca_command.hpp"
#include "kembed/app/manifold_commands.hpp"
#include "kembed/app/mds_command.hpp"
#include "kembed/app/pca_command.hpp"
#include "kembed/app/plan_command.hpp"
#include "kembed/app/preimage_command.hpp"
#include "kembed/app/transform_command.hpp"

namespace kembed::app {

const std::vector<Command>& commands() {
  static const std::vector<Command> all = {
      {"ca", "correspondence analysis of a contingency table", ca_options, run_ca},
      {"generate", "write a synthetic data set (.npy) in parallel", generate_options, run_generate},
      {"isomap", "Isomap: classical MDS of geodesic distances along a neighbourhood graph",
       isomap_options, run_isomap},
      {"kpca", "kernel PCA of a data matrix (or of a precomputed kernel)", kpca_options, run_kpca},
      {"mca", "multiple correspondence analysis of categorical variables", mca_options, run_mca},
      {"mds", "classical MDS of a distance matrix or of points", mds_options, run_mds},
      {"pca", "linear PCA of a data matrix (covariance or Gram route)", pca_options, run_pca},
      {"plan",
       "memory per rank and grid of a kpca, pca, mds, isomap or spectral run, computing nothing",
       plan_options, run_plan, "method"},
      {"preimage", "pre-images of kernel PCA reconstructions (denoising)", preimage_options,
       run_preimage},
      {"spectral", "Laplacian eigenmaps (scikit-learn's SpectralEmbedding) of points",
       spectral_options, run_spectral},
      {"transform", "project new data with a saved model (OUTPUT-DIR/model)", transform_options,
       run_transform},
  };
  return all;
}

}  // namespace kembed::app
