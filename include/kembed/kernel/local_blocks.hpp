#pragma once
/// @file Block-local building blocks of kernel and distance matrices: the
/// Gram product of two row panels and elementwise maps over a rank's block.
#include <vector>

#include "kembed/kernel/vector_exp.hpp"
#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::kernel {

/// Squared Euclidean norm of each of the `rows` rows of a row-major panel.
std::vector<double> row_norms_squared(const std::vector<double>& panel, int rows, int d);

/// max_t |x_t| of each of the `rows` rows of a row-major panel.
std::vector<double> row_max_magnitudes(const std::vector<double>& panel, int rows, int d);

/// out's local block <- X_rows X_cols^T: one dgemm on the row-major panels
/// (which are column-major d x m matrices). No communication.
void local_gram(const std::vector<double>& row_panel, const std::vector<double>& col_panel, int d,
                DistMatrix& out);

/// out's local block <- the L1 distances ||x_i - y_j||_1 between the rows of
/// the two row-major panels. No communication. Each sum runs over t = 0..d-1
/// in order, as the pair-by-pair loop does, but many rows at a time.
void local_l1_distances(const std::vector<double>& row_panel, const std::vector<double>& col_panel,
                        int d, DistMatrix& out);

/// out(li, lj) <- f(li, lj) for the entries whose local row is in `rows`
/// or whose local column is in `cols` (each entry once): the pairs that need
/// a slower, exact evaluation after the fast path filled the block.
template <class F>
void refill_pairs(DistMatrix& out, const std::vector<int>& rows, const std::vector<int>& cols,
                  F&& f) {
  if (rows.empty() && cols.empty()) return;
  std::vector<char> whole_column(out.local_cols(), 0);
  for (int lj : cols) whole_column[lj] = 1;
  for (int lj = 0; lj < out.local_cols(); ++lj) {
    if (whole_column[lj]) {
      for (int li = 0; li < out.local_rows(); ++li) out.local(li, lj) = f(li, lj);
    } else {
      for (int li : rows) out.local(li, lj) = f(li, lj);
    }
  }
}

/// out(li, lj) <- f(out(li, lj), li, lj) over this rank's local block.
template <class F>
void map_local(DistMatrix& out, F&& f) {
  for (int lj = 0; lj < out.local_cols(); ++lj) {
    double* column = out.data() + std::size_t(lj) * out.ld();
    for (int li = 0; li < out.local_rows(); ++li) column[li] = f(column[li], li, lj);
  }
}

/// out(li, lj) <- exp(f(out(li, lj), li, lj)) over this rank's local block:
/// f one column at a time, then exp_in_place on that column while it is still
/// in cache.
template <class F>
void map_local_exp(DistMatrix& out, F&& f) {
  const int m = out.local_rows();
  for (int lj = 0; lj < out.local_cols(); ++lj) {
    double* column = out.data() + std::size_t(lj) * out.ld();
    for (int li = 0; li < m; ++li) column[li] = f(column[li], li, lj);
    exp_in_place(column, std::size_t(m));
  }
}

}  // namespace kembed::kernel
