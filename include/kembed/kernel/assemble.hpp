#pragma once
/// @file Kernel matrices assembled block-locally in block-cyclic layout.
#include <vector>

#include "kembed/kernel/kernel.hpp"
#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::kernel {

/// Fills k(i, j) = kernel(x_i, y_j) for this rank's block of `k`, where
/// `row_panel` holds the x rows of k's local rows and `col_panel` the y rows
/// of its local columns (both row-major with `d` columns). Dot-product kernels
/// use one local dgemm and one elementwise pass. Rows whose squared norms
/// overflow (or whose Gram-trick distances would lose their digits) are
/// evaluated from differences instead for rbf, laplacian and cosine, so
/// e.g. distinct points near 1e200 give the identity under rbf.
/// Collective over k's grid for linear, poly and sigmoid (no communication
/// for the others): an entry that is not finite, or too large to sum over a
/// row, is an agreed Error naming the first such (i, j), 1-based, and the cause.
/// @pre kernel.type != precomputed, gamma resolved (with_default_gamma)
void assemble_kernel(const Kernel& kernel, const std::vector<double>& row_panel,
                     const std::vector<double>& col_panel, int d, DistMatrix& k);

}  // namespace kembed::kernel
