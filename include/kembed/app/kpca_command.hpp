#pragma once
/// @file `kembed kpca`: options -> grid -> fit -> result directory and model.
#include <boost/program_options.hpp>

#include "kembed/app/transform_command.hpp"
#include "kembed/approx/nystrom.hpp"
#include "kembed/mpi/comm.hpp"
#include "kembed/spectral/feature_reconstruction.hpp"

namespace kembed::app {

boost::program_options::options_description kpca_options();

/// The Nystrom request of --landmarks (required), --landmark-selection,
/// --landmark-rcond, --panel-rows, --seed and --max-memory-per-rank, those
/// that `vm` holds, checked as `kembed kpca --approx nystrom` checks them
/// (`kembed plan kpca --approx nystrom` calls it too). Throws Error.
approx::NystromSettings nystrom_options(const boost::program_options::variables_map& vm);

/// Collective: runs kernel PCA and commits embedding.csv, eigenvalues.csv,
/// run.json and model/ to the output directory. Throws agreed Errors.
void run_kpca(const boost::program_options::variables_map& vm, const Comm& world);

/// Collective: projects new points with a kernel PCA model (see Projector).
Projection project_kpca(const io::Model& model, io::MatrixFile& points, const BlacsGrid& grid,
                        int block_size);

/// Collective: the statistics of a kernel PCA model that feature-space
/// reconstructions need (kernel, shape, eigenvalues, kernel means).
spectral::KpcaModelStats kpca_model_stats(const io::Model& model, const Comm& comm);
}  // namespace kembed::app
