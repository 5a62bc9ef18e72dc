#pragma once
/// @file The learned pre-image map of kernel PCA (kernel ridge regression
/// from the embedding back to input space).
///
/// At fit time, with the training embedding Z (n x k, z_i = sqrt(lambda) v_i),
/// the same kernel evaluated on embeddings K_Z(i, j) = k(z_i, z_j), and the
/// column means mu of X:
///   (K_Z + alpha I) W = X - 1 mu^T      (distributed Cholesky, pdposv)
/// The pre-image of an embedding z is mu + sum_i k(z, z_i) W_i. The mean is
/// an intercept that scikit-learn's fit_inverse_transform does not have; with
/// it, a linear kernel gives mean + sum_j z_j lambda_j / (lambda_j + alpha) u_j,
/// the PCA reconstruction shrunk by the regularization.
#include <cstdint>
#include <vector>

#include "kembed/io/matrix_file.hpp"
#include "kembed/kernel/kernel.hpp"
#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::spectral {

struct InverseMap {
  std::vector<double> mean;  ///< mu, length d
  DistMatrix weights;        ///< W, n x d block-cyclic
};

/// Collective: fits the map. `embedding` is the n x k training embedding,
/// row-major and identical on every rank; `x` the n x d training samples.
/// Throws (agreed) when alpha <= 0 or K_Z + alpha I is not positive definite.
InverseMap fit_inverse_map(const kernel::Kernel& kernel, const std::vector<double>& embedding, int k,
                           io::MatrixFile& x, double alpha, const BlacsGrid& grid, int block_size);

/// Collective: the m x d pre-images (row-major, every rank) of the m x k
/// embeddings `z` (row-major, every rank). The training embedding is
/// rebuilt as A diag(lambda) from the n x k coefficients A (the fit used
/// the same product), W is read from `weights`.
std::vector<double> apply_inverse_map(const kernel::Kernel& kernel, const std::vector<double>& z, int k,
                                      io::MatrixFile& coefficients,
                                      const std::vector<double>& eigenvalues,
                                      io::MatrixFile& weights, const std::vector<double>& mean,
                                      const BlacsGrid& grid, int block_size);

}  // namespace kembed::spectral
