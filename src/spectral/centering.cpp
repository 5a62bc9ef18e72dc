#include "kembed/spectral/centering.hpp"

#include <algorithm>
#include <cmath>

#include "kembed/core/error.hpp"
#include "kembed/linalg/reductions.hpp"

namespace kembed::spectral {

namespace {

// Global index of every local index, computed once (the index maps divide).
std::vector<std::int64_t> globals(const BlockCyclic1D& dist) {
  std::vector<std::int64_t> g(dist.local_size());
  for (int l = 0; l < dist.local_size(); ++l) g[l] = dist.to_global(l);
  return g;
}

// Both passes over the local block go kColumns columns at a time: a row's
// running value (its sum, its mean) is loaded and stored once per group rather
// than once per column, and the group's columns stream side by side. One
// column at a time ran both passes at about half the memory bandwidth.
constexpr int kColumns = 4;
// Each column sum runs in kPartials interleaved partial sums: a single running
// sum is a chain of dependent additions, slower than reading the column.
constexpr int kPartials = 4;  // sum_columns adds them pairwise, as written for 4

// Adds the C columns from lj on into row_sums (in column order, the rounding
// of one column at a time) and stores their sums in column_sums[0..C).
template <int C>
void sum_columns(const DistMatrix& k, int lj, std::vector<double>& row_sums, double* column_sums) {
  const int m = k.local_rows();
  const double* column[C];
  for (int q = 0; q < C; ++q) column[q] = k.column(lj + q);
  double partial[C][kPartials] = {};
  int li = 0;
  for (; li + kPartials <= m; li += kPartials)
    for (int p = 0; p < kPartials; ++p) {
      double row = row_sums[li + p];
      for (int q = 0; q < C; ++q) {
        partial[q][p] += column[q][li + p];
        row += column[q][li + p];
      }
      row_sums[li + p] = row;
    }
  for (int q = 0; q < C; ++q) {
    double sum = (partial[q][0] + partial[q][2]) + (partial[q][1] + partial[q][3]);
    for (int i = li; i < m; ++i) sum += column[q][i];
    column_sums[q] = sum;
  }
  for (; li < m; ++li) {
    double row = row_sums[li];
    for (int q = 0; q < C; ++q) row += column[q][li];
    row_sums[li] = row;
  }
}

// column q from lj on, entry li += shift[q] - row_means[li], for q < C.
// (With float storage the sum is formed in double and rounded once.) The
// stored results' squares go into squares[0..C) as they are written, in
// ColumnSquares' partials (entry li into partial li mod kSquareChains), so
// the Frobenius norm of the centered matrix needs no pass of its own.
template <int C, class T>
void shift_columns(BasicDistMatrix<T>& k, int lj, const double* shift,
                   const std::vector<double>& row_means, ColumnSquares* squares) {
  constexpr int kChains = kSquareChains;
  T* column[C];
  for (int q = 0; q < C; ++q) column[q] = k.column(lj + q);
  double sum[C][kChains] = {}, top[C][kChains] = {};
  const auto update = [&](int li, int chain, double weight) {
    const double row = row_means[li];
    for (int q = 0; q < C; ++q) {
      column[q][li] += shift[q] - row;
      const double v = column[q][li];
      sum[q][chain] += weight * (v * v);
      top[q][chain] = std::max(top[q][chain], std::abs(v));
    }
  };
  // Rows [from, below) with weight 1, [below, m) with 2: with lower-block
  // storage an entry below the diagonal block stands for itself and its
  // mirror image in the Frobenius norm. (Full storage: from = below = 0.)
  const int m = k.local_rows(), from = k.stored_from(lj), below = k.below_diagonal_from(lj);
  const auto rows = [&](int begin, int end, double weight) {
    int li = begin;
    for (; li < end && li % kChains != 0; ++li) update(li, li % kChains, weight);
    for (; li + kChains <= end; li += kChains)
      for (int c = 0; c < kChains; ++c) update(li + c, c, weight);
    for (; li < end; ++li) update(li, li % kChains, weight);
  };
  rows(from, below, 1.0);
  rows(below, m, k.storage() == Storage::lower_blocks ? 2.0 : 1.0);
  for (int q = 0; q < C; ++q) {
    squares[q] = ColumnSquares{};
    for (int c = 0; c < kChains; ++c) {
      squares[q].sum_squares += sum[q][c];
      squares[q].largest = std::max(squares[q].largest, top[q][c]);
    }
  }
}

// Collective: the means from every rank's local sums.
template <class T>
CenteringStats means_from_local_sums(const BasicDistMatrix<T>& k,
                                     const std::vector<double>& local_row_sums,
                                     const std::vector<double>& local_col_sums) {
  CenteringStats stats;
  stats.row_means.assign(k.rows(), 0.0);
  stats.col_means.assign(k.cols(), 0.0);
  const auto row_index = globals(k.row_dist());
  const auto col_index = globals(k.col_dist());
  for (int lj = 0; lj < k.local_cols(); ++lj) stats.col_means[col_index[lj]] = local_col_sums[lj];
  for (int li = 0; li < k.local_rows(); ++li) stats.row_means[row_index[li]] = local_row_sums[li];
  const Comm& comm = k.grid().comm();
  if (k.storage() == Storage::lower_blocks) {
    // Symmetric: row i's sum is its stored entries' (the local row sums)
    // plus column i's entries below the diagonal block (the local column
    // sums, which leave the diagonal block out); rows and columns agree.
    for (int lj = 0; lj < k.local_cols(); ++lj)
      stats.row_means[col_index[lj]] += local_col_sums[lj];
    comm.sum_in_place(stats.row_means);
    stats.col_means = stats.row_means;
  } else {
    comm.sum_in_place(stats.row_means);
    comm.sum_in_place(stats.col_means);
  }
  double total = 0;
  for (double& s : stats.col_means) {
    total += s;
    s /= static_cast<double>(k.rows());
  }
  for (double& s : stats.row_means) s /= static_cast<double>(k.cols());
  stats.grand_mean = total / (static_cast<double>(k.rows()) * static_cast<double>(k.cols()));
  return stats;
}

// The update pass: entry (i, j) += grand mean - row mean i - column mean j;
// then the centered matrix's Frobenius norm from the squares it took.
template <class T>
void subtract_means(BasicDistMatrix<T>& k, CenteringStats& stats) {
  const auto row_index = globals(k.row_dist());
  const auto col_index = globals(k.col_dist());
  std::vector<double> local_row_means(k.local_rows());
  for (int li = 0; li < k.local_rows(); ++li) local_row_means[li] = stats.row_means[row_index[li]];
  const int n = k.local_cols();
  std::vector<ColumnSquares> squares(n);
  double shift[kColumns];
  // A group's columns share their stored rows (one column block).
  const auto one_block = [&](int first) {
    return k.stored_from(first) == k.stored_from(first + kColumns - 1) &&
           k.below_diagonal_from(first) == k.below_diagonal_from(first + kColumns - 1);
  };
  for (int lj = 0; lj < n;) {
    if (lj + kColumns <= n && one_block(lj)) {
      for (int q = 0; q < kColumns; ++q)
        shift[q] = stats.grand_mean - stats.col_means[col_index[lj + q]];
      shift_columns<kColumns, T>(k, lj, shift, local_row_means, &squares[lj]);
      lj += kColumns;
    } else {
      shift[0] = stats.grand_mean - stats.col_means[col_index[lj]];
      shift_columns<1, T>(k, lj, shift, local_row_means, &squares[lj]);
      ++lj;
    }
  }
  stats.frobenius_norm = frobenius_norm(k, squares);
}

}  // namespace

CenteringStats kernel_means(const DistMatrix& k) {
  if (k.storage() == Storage::lower_blocks) {
    const kernel::LocalSums sums = kernel::local_sums(k);
    return means_from_local_sums(k, sums.rows, sums.cols);
  }
  // Local row sums accumulate in local order (the rounding of
  // kernel::local_sums and of assembly's fused sums), then scatter to global slots.
  std::vector<double> local_row_sums(k.local_rows(), 0.0), local_col_sums(k.local_cols(), 0.0);
  const int n = k.local_cols();
  int lj = 0;
  for (; lj + kColumns <= n; lj += kColumns)
    sum_columns<kColumns>(k, lj, local_row_sums, &local_col_sums[lj]);
  for (; lj < n; ++lj) sum_columns<1>(k, lj, local_row_sums, &local_col_sums[lj]);
  return means_from_local_sums(k, local_row_sums, local_col_sums);
}

CenteringStats center_kernel(DistMatrix& k) {
  CenteringStats stats = kernel_means(k);
  subtract_means(k, stats);
  return stats;
}

namespace {

template <class T>
CenteringStats center_from_sums(BasicDistMatrix<T>& k, const kernel::LocalSums& sums) {
  const bool match = sums.rows.size() == std::size_t(k.local_rows()) &&
                     sums.cols.size() == std::size_t(k.local_cols());
  agree(k.grid().comm(),
        match ? "" : "center_kernel: the local sums do not match the matrix's local block");
  CenteringStats stats = means_from_local_sums(k, sums.rows, sums.cols);
  subtract_means(k, stats);
  return stats;
}

}  // namespace

CenteringStats center_kernel(DistMatrix& k, const kernel::LocalSums& sums) {
  return center_from_sums(k, sums);
}

CenteringStats center_kernel(SingleMatrix& k, const kernel::LocalSums& sums) {
  return center_from_sums(k, sums);
}

}  // namespace kembed::spectral
