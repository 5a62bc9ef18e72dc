#pragma once
/// @file Kernel matrices assembled block-locally in block-cyclic layout.
#include <vector>

#include "kembed/io/matrix_file.hpp"
#include "kembed/kernel/kernel.hpp"
#include "kembed/linalg/dist_matrix.hpp"

namespace kembed {

/// Collective: the rows of the data matrix in `file` whose global indices
/// `dist` gives this rank, row-major (dist.local_size() x file.cols()), in
/// local index order. These are the data a rank needs for its rows (or
/// columns) of a kernel matrix; no rank holds more of X than that.
std::vector<double> read_panel(io::MatrixFile& file, const BlockCyclic1D& dist);

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

/// Collective: reads the m x n matrix in `file` into the block-cyclic `k`,
/// one block row at a time (memory: one nb x n stripe per rank).
/// @pre file is k.rows() x k.cols()
void read_block_cyclic(io::MatrixFile& file, DistMatrix& k);

}  // namespace kembed
