#pragma once
/// @file Projecting new points onto a fitted kernel PCA.
#include <cstdint>
#include <vector>

#include "kembed/io/matrix_file.hpp"
#include "kembed/kernel/kernel.hpp"
#include "kembed/linalg/blacs_grid.hpp"

namespace kembed::spectral {

/// What projection needs from a kernel PCA fit besides the training samples
/// and the coefficient vectors (which are read in parallel from files).
struct KpcaProjection {
  kernel::Kernel kernel;                   ///< gamma resolved
  std::int64_t n = 0, d = 0;       ///< training shape (d = 0 for precomputed)
  int k = 0;
  std::vector<double> col_means;   ///< (1/n) 1^T K of the training kernel
  double grand_mean = 0;           ///< (1/n^2) 1^T K 1
};

/// Collective: the m x k embedding (row-major, on rank 0 only) of the m new
/// points in `points`: Z* = K~* A with the test kernel K*(i, j) = k(y_i, x_j)
/// assembled block-cyclically and centered with the training statistics,
/// K~* = K* - 1_m (1^T K / n) - (K* 1_n / n) 1^T + (1^T K 1 / n^2).
/// For a precomputed kernel `points` holds K* itself (m x n) and
/// `training` is unused. `coefficients` is the n x k matrix A.
std::vector<double> kpca_transform(const KpcaProjection& model, io::MatrixFile* training,
                                   io::MatrixFile& coefficients, io::MatrixFile& points,
                                   const BlacsGrid& grid, int block_size);

}  // namespace kembed::spectral
