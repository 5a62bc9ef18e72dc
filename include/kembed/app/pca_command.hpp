#pragma once
/// @file `kembed pca`: options -> grid -> fit -> result directory and model.
#include <boost/program_options.hpp>

#include "kembed/app/options.hpp"
#include "kembed/app/transform_command.hpp"
#include "kembed/mpi/comm.hpp"
#include "kembed/spectral/pca.hpp"

namespace kembed::app {

boost::program_options::options_description pca_options();

/// Collective: runs linear PCA and commits embedding.csv, eigenvalues.csv,
/// components.csv, run.json and model/ to the output directory. Throws
/// agreed Errors.
void run_pca(const boost::program_options::variables_map& vm, const Comm& world);

/// The default grid of pca on an n x d input: P x 1 for the covariance
/// route (the d x d product of whole rows), 1 x P for the Gram route.
GridPreference pca_grid(spectral::PcaRoute route, std::int64_t n, std::int64_t d);

/// Collective: projects new points with a PCA model (see Projector):
/// Z* = ((Y - mean) / scale) U_k, whitened when the model was.
Projection project_pca(const io::Model& model, io::MatrixFile& points, const BlacsGrid& grid,
                       int block_size);

/// Collective: project_pca, and `log_likelihood` (rank 0: one per point)
/// set to the points' log-likelihoods under the model's probabilistic PCA
/// (scikit-learn's score_samples), each rank scoring the rows it projects.
/// A model without a noise variance or with a singular covariance is an
/// agreed error naming --score.
Projection project_pca_scored(const io::Model& model, io::MatrixFile& points, const BlacsGrid& grid,
                              std::vector<double>& log_likelihood);

}  // namespace kembed::app
