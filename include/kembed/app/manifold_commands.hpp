#pragma once
/// @file `kembed isomap` and `kembed spectral`: options -> grid -> neighbourhood
/// graph or affinity -> spectral step -> result directory.
#include <boost/program_options.hpp>

#include "kembed/app/transform_command.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::app {

boost::program_options::options_description isomap_options();
/// Collective: runs Isomap and commits embedding.csv, eigenvalues.csv,
/// spectrum.csv (evd), run.json and model/. Throws agreed Errors.
void run_isomap(const boost::program_options::variables_map& vm, const Comm& world);
/// Collective: places new points with an Isomap model (see Projector).
Projection project_isomap(const io::Model& model, io::MatrixFile& points, const BlacsGrid& grid,
                          int block_size);

boost::program_options::options_description spectral_options();
/// Collective: runs Laplacian eigenmaps (scikit-learn's SpectralEmbedding)
/// and commits embedding.csv, eigenvalues.csv, run.json and model/ (left
/// out, with the reason in run.json, when a kept eigenvalue of M is below
/// spectral::kMinExtensionEigenvalue). Throws agreed Errors.
void run_spectral(const boost::program_options::variables_map& vm, const Comm& world);
/// Collective: places new points with a spectral model by the Nystrom
/// extension (spectral::spectral_transform; see Projector).
Projection project_spectral(const io::Model& model, io::MatrixFile& points, const BlacsGrid& grid,
                            int block_size);

}  // namespace kembed::app
