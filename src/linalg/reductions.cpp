#include "kembed/linalg/reductions.hpp"

#include <algorithm>
#include <cmath>

#include "core/fingerprint_sum.hpp"
#include "kembed/core/data_fingerprint.hpp"
#include "kembed/core/error.hpp"

namespace kembed {

namespace {

template <class T>
double trace_of(const BasicDistMatrix<T>& a) {
  double local_sum = 0;
  for (int lj = 0; lj < a.local_cols(); ++lj) {
    const std::int64_t j = a.col_dist().to_global(lj);
    if (a.row_dist().is_local(j)) local_sum += a.local(a.row_dist().to_local(j), lj);
  }
  return a.grid().comm().sum(local_sum);
}

// Squares of entries up to this magnitude neither overflow nor fall into the
// subnormal range when the column's largest entry is at least its inverse:
// the plain sum of squares is then as accurate as the scaled one.
constexpr double kSafeHigh = 1e150, kSafeLow = 1e-150;
constexpr int kChains = kSquareChains;

template <class T>
ColumnSquares column_pass(const T* column, std::int64_t rows) {
  double sum[kChains] = {}, top[kChains] = {};
  std::int64_t i = 0;
  for (; i + kChains <= rows; i += kChains)
    for (int c = 0; c < kChains; ++c) {
      const double v = column[i + c];
      sum[c] += v * v;
      top[c] = std::max(top[c], std::abs(v));
    }
  for (int c = 0; i < rows; ++i, ++c) {
    const double v = column[i];
    sum[c] += v * v;
    top[c] = std::max(top[c], std::abs(v));
  }
  ColumnSquares pass;
  for (int c = 0; c < kChains; ++c) {
    pass.sum_squares += sum[c];
    pass.largest = std::max(pass.largest, top[c]);
  }
  return pass;
}

template <class T>
double scaled_sum_squares(const T* column, std::int64_t rows, double inverse) {
  double sum[kChains] = {};
  std::int64_t i = 0;
  for (; i + kChains <= rows; i += kChains)
    for (int c = 0; c < kChains; ++c) {
      const double v = column[i + c] * inverse;
      sum[c] += v * v;
    }
  for (int c = 0; i < rows; ++i, ++c) {
    const double v = column[i] * inverse;
    sum[c] += v * v;
  }
  double total = 0;
  for (double v : sum) total += v;
  return total;
}

// With lower-block storage an entry below the diagonal block stands for two.
template <class T>
double stored_weight(const BasicDistMatrix<T>& a) {
  return a.storage() == Storage::lower_blocks ? 2.0 : 1.0;
}

template <class T>
std::vector<ColumnSquares> column_passes(const BasicDistMatrix<T>& a) {
  std::vector<ColumnSquares> passes(a.local_cols());
  for (int lj = 0; lj < a.local_cols(); ++lj) {
    const T* column = a.column(lj);
    const int from = a.stored_from(lj), below = a.below_diagonal_from(lj);
    if (a.storage() == Storage::full) {
      passes[lj] = column_pass(column, a.local_rows());
      continue;
    }
    const ColumnSquares diagonal = column_pass(column + from, below - from);
    const ColumnSquares lower = column_pass(column + below, a.local_rows() - below);
    passes[lj] = {diagonal.sum_squares + stored_weight(a) * lower.sum_squares,
                  std::max(diagonal.largest, lower.largest)};
  }
  return passes;
}

template <class T>
std::vector<double> column_norms_of(const BasicDistMatrix<T>& a,
                                    const std::vector<ColumnSquares>& passes) {
  // One pass gave every column's sum of squares and largest entry. Columns
  // whose largest entry (over all ranks) lies outside [kSafeLow, kSafeHigh]
  // are summed again after scaling by it, so entries beyond 1e154 do not
  // overflow the squares and tiny ones do not underflow.
  const bool match = passes.size() == std::size_t(a.local_cols());
  agree(a.grid().comm(), match ? "" : "frobenius_norm: the column squares do not match the local block");
  std::vector<double> scale(a.cols(), 0.0), sums(a.cols(), 0.0);
  for (int lj = 0; lj < a.local_cols(); ++lj) {
    const ColumnSquares& pass = passes[lj];
    const std::int64_t j = a.col_dist().to_global(lj);
    scale[j] = pass.largest;
    sums[j] = pass.sum_squares;
  }
  const Comm& comm = a.grid().comm();
  MPI_Allreduce(MPI_IN_PLACE, scale.data(), static_cast<int>(scale.size()), MPI_DOUBLE, MPI_MAX,
                comm.get());
  for (int lj = 0; lj < a.local_cols(); ++lj) {
    const std::int64_t j = a.col_dist().to_global(lj);
    if (scale[j] == 0 || (scale[j] >= kSafeLow && scale[j] <= kSafeHigh)) continue;
    const T* column = a.column(lj);
    const int from = a.stored_from(lj), below = a.below_diagonal_from(lj);
    sums[j] = scaled_sum_squares(column + from, below - from, 1 / scale[j]) +
              stored_weight(a) * scaled_sum_squares(column + below, a.local_rows() - below,
                                                    1 / scale[j]);
  }
  comm.sum_in_place(sums);
  for (std::size_t j = 0; j < sums.size(); ++j) {
    const bool scaled = scale[j] != 0 && !(scale[j] >= kSafeLow && scale[j] <= kSafeHigh);
    sums[j] = scaled ? scale[j] * std::sqrt(sums[j]) : std::sqrt(sums[j]);
  }
  return sums;
}

template <class T>
double frobenius_norm_of(const BasicDistMatrix<T>& a, const std::vector<ColumnSquares>& passes) {
  // Scaled by the largest column norm, so entries beyond 1e154 do not overflow the squares.
  const auto norms = column_norms_of(a, passes);
  double largest = 0, sum = 0;
  for (double c : norms) largest = std::max(largest, c);
  if (!(largest > 0) || !std::isfinite(largest)) return largest;
  for (double c : norms) sum += (c / largest) * (c / largest);
  return largest * std::sqrt(sum);
}

}  // namespace

double trace(const DistMatrix& a) { return trace_of(a); }
double trace(const SingleMatrix& a) { return trace_of(a); }
std::vector<double> column_norms(const DistMatrix& a) { return column_norms_of(a, column_passes(a)); }
double frobenius_norm(const DistMatrix& a) { return frobenius_norm_of(a, column_passes(a)); }
double frobenius_norm(const SingleMatrix& a) { return frobenius_norm_of(a, column_passes(a)); }
double frobenius_norm(const DistMatrix& a, const std::vector<ColumnSquares>& local) {
  return frobenius_norm_of(a, local);
}
double frobenius_norm(const SingleMatrix& a, const std::vector<ColumnSquares>& local) {
  return frobenius_norm_of(a, local);
}

std::string data_fingerprint(const DistMatrix& a) {
  // A row block is contiguous in the local column, and its global row-major
  // indices step by cols: one strided run per block, summed in SIMD lanes.
  std::uint64_t sum = 0;
  const auto cols = static_cast<std::uint64_t>(a.cols());
  const std::vector<IndexRange> rows = a.row_dist().owned_ranges();
  for (int lj = 0; lj < a.local_cols() && a.local_rows() > 0; ++lj) {
    const auto j = static_cast<std::uint64_t>(a.col_dist().to_global(lj));
    const double* column = a.column(lj);
    for (const IndexRange& block : rows) {
      const auto length = static_cast<std::uint64_t>(block.end - block.begin);
      sum += fingerprint_strided(column, length,
                                 static_cast<std::uint64_t>(block.begin) * cols + j, cols);
      column += length;
    }
  }
  return fingerprint_hex(a.grid().comm().sum_modular(sum));
}

double frobenius_norm(const Comm& comm, const double* values, std::int64_t count) {
  return frobenius_norm(comm, values, count, column_pass(values, count));
}

double frobenius_norm(const Comm& comm, const double* values, std::int64_t count,
                      const ColumnSquares& pass) {
  // One run is one column of column_norms_of: squares summed plainly unless
  // the largest entry over all ranks lies outside [kSafeLow, kSafeHigh].
  const double scale = comm.max(pass.largest);
  const bool scaled = scale != 0 && !(scale >= kSafeLow && scale <= kSafeHigh);
  const double local = scaled ? scaled_sum_squares(values, count, 1 / scale) : pass.sum_squares;
  const double root = std::sqrt(comm.sum(local));
  return scaled ? scale * root : root;
}

std::string data_fingerprint(const Comm& comm, const double* values, std::int64_t rows,
                             std::int64_t first_row, std::int64_t cols) {
  const auto count = static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols);
  const std::uint64_t local =
      count == 0 ? 0
                 : fingerprint_strided(values, count,
                                       static_cast<std::uint64_t>(first_row) *
                                           static_cast<std::uint64_t>(cols),
                                       1);
  return fingerprint_hex(comm.sum_modular(local));
}

}  // namespace kembed
