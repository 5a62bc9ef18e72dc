#include "kembed/spectral/sparse_covariance_operator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "kembed/core/error.hpp"
#include "kembed/spectral/pca.hpp"

namespace kembed::spectral {

SparseCovarianceOperator::SparseCovarianceOperator(const io::CsrRows& x, const BlacsGrid& grid,
                                                   int block_size, bool center, bool standardize,
                                                   const std::string& source)
    : x_(x),
      grid_(grid),
      rows_(std::max<std::int64_t>(x.cols, 0), std::max(block_size, 1), grid.comm().rank(),
            grid.comm().size()),
      center_(center) {
  check_rows(source);
  const Comm& comm = grid.comm();
  const int p = comm.size();
  const std::int64_t d = x.cols;
  owned_.assign(p, 0);
  owned_before_.assign(p, 0);
  owner_.resize(d);
  owner_local_.resize(d);
  for (int r = 0; r < p; ++r) {
    const BlockCyclic1D theirs(d, rows_.block_size(), r, p);
    owned_[r] = theirs.local_size();
    if (r > 0) owned_before_[r] = owned_before_[r - 1] + owned_[r - 1];
    for (int l = 0; l < theirs.local_size(); ++l) {
      const std::int64_t g = theirs.to_global(l);
      owner_[g] = r;
      owner_local_[g] = l;
    }
  }
  take_statistics(standardize, source);
}

void SparseCovarianceOperator::check_rows(const std::string& source) const {
  const Comm& comm = grid_.comm();
  const io::CsrRows& x = x_;
  std::string error;
  const auto row_name = [&](std::int64_t li) {
    return "row " + std::to_string(x.first_row + li + 1) + " (1-based)";
  };
  if (x.offsets.empty() || x.offsets.front() != 0)
    error = source + ": the sparse rows' offsets must start at 0";
  else if (x.offsets.back() != x.nonzeros() || x.values.size() != x.columns.size())
    error = source + ": the sparse rows hold " + std::to_string(x.columns.size()) +
            " column indices and " + std::to_string(x.values.size()) +
            " values, but their offsets end at " + std::to_string(x.offsets.back());
  for (std::int64_t li = 0; error.empty() && li < x.local_rows(); ++li) {
    const std::int64_t from = x.offsets[li], to = x.offsets[li + 1];
    if (to < from || to > x.nonzeros()) {
      error = source + ": " + row_name(li) + ": its offsets decrease or run past the entries";
      break;
    }
    for (std::int64_t t = from; t < to; ++t) {
      const std::int32_t j = x.columns[t];
      if (j < 0 || j >= x.cols)
        error = source + ": " + row_name(li) + ": column index " + std::to_string(j) +
                " is outside [0, " + std::to_string(x.cols) + ")";
      else if (t > from && j <= x.columns[t - 1])
        error = source + ": " + row_name(li) + ": column indices are not strictly ascending (" +
                std::to_string(x.columns[t - 1]) + " then " + std::to_string(j) + ")";
      else if (!std::isfinite(x.values[t]))
        error = source + ": " + row_name(li) + ", column " + std::to_string(j + 1) +
                " (1-based): the value is not finite";
      if (!error.empty()) break;
    }
  }
  // Every rank's shape, and its rows: one contiguous range each, in rank order.
  const std::vector<std::int64_t> mine{x.rows, x.cols, x.first_row, x.local_rows()};
  const std::vector<std::int64_t> all = comm.allgatherv(mine);
  std::int64_t next = 0;
  for (int r = 0; error.empty() && r < comm.size(); ++r) {
    const std::int64_t* s = all.data() + 4 * std::size_t(r);
    if (s[0] != all[0] || s[1] != all[1])
      error = source + ": the ranks disagree on the matrix's shape (" + std::to_string(all[0]) +
              " x " + std::to_string(all[1]) + " on rank 0, " + std::to_string(s[0]) + " x " +
              std::to_string(s[1]) + " on rank " + std::to_string(r) + ")";
    else if (s[2] != next || s[3] < 0)
      error = source + ": rank " + std::to_string(r) + " holds rows from " + std::to_string(s[2]) +
              ", expected " + std::to_string(next) +
              " (each rank one contiguous range, in rank order)";
    next += s[3];
  }
  if (error.empty() && next != all[0])
    error =
        source + ": the ranks hold " + std::to_string(next) + " rows of " + std::to_string(all[0]);
  if (error.empty() && all[0] < 2)
    error = source + ": PCA needs at least 2 samples, found " + std::to_string(all[0]);
  if (error.empty() && (all[1] < 1 || all[1] > std::numeric_limits<std::int32_t>::max()))
    error = source + ": " + std::to_string(all[1]) + " columns; expected 1 to 2^31 - 1";
  agree(comm, error);
}

void SparseCovarianceOperator::take_statistics(bool standardize, const std::string& source) {
  const Comm& comm = grid_.comm();
  const std::int64_t n = x_.rows;
  const auto d = static_cast<std::size_t>(x_.cols);
  const double n1 = static_cast<double>(n - 1);
  // Means, and how many entries each column stores (exact in a double).
  std::vector<double> sums(2 * d, 0.0);
  for (std::int64_t t = 0; t < x_.nonzeros(); ++t) {
    sums[x_.columns[t]] += x_.values[t];
    sums[d + x_.columns[t]] += 1;
  }
  comm.sum_in_place(sums);
  mean_.assign(d, 0.0);
  for (std::size_t j = 0; j < d; ++j) mean_[j] = sums[j] / static_cast<double>(n);
  // Squared deviations from the mean (two-pass): the stored entries here,
  // the unstored zeros' (n - stored) mu_j^2 once (on rank 0); and the plain
  // squares for the uncentered trace.
  std::vector<double> squares(d, 0.0), plain(d, 0.0);
  std::vector<double> low(d, std::numeric_limits<double>::infinity());
  std::vector<double> high(d, -std::numeric_limits<double>::infinity());
  for (std::int64_t t = 0; t < x_.nonzeros(); ++t) {
    const std::size_t j = static_cast<std::size_t>(x_.columns[t]);
    const double v = x_.values[t];
    squares[j] += (v - mean_[j]) * (v - mean_[j]);
    plain[j] += v * v;
    low[j] = std::min(low[j], v);
    high[j] = std::max(high[j], v);
  }
  for (std::size_t j = 0; j < d; ++j) {
    const double unstored = static_cast<double>(n) - sums[d + j];
    if (unstored > 0) {
      low[j] = std::min(low[j], 0.0);
      high[j] = std::max(high[j], 0.0);
      if (comm.is_root()) squares[j] += unstored * mean_[j] * mean_[j];
    }
  }
  ColumnStats stats{mean_, std::vector<double>(d, 1.0)};
  if (standardize) {
    // finish_scales sums `squares` over the ranks and agrees on constant columns.
    finish_scales(comm, n, std::move(low), std::move(high), squares, source, stats);
  }
  comm.sum_in_place(squares);
  comm.sum_in_place(plain);
  scale_ = std::move(stats.scale);
  double centered = 0, uncentered = 0;
  for (std::size_t j = 0; j < d; ++j) {
    const double s2 = scale_[j] * scale_[j];
    centered += squares[j] / s2;
    uncentered += plain[j] / s2;
  }
  total_variance_ = centered / n1;
  trace_ = center_ ? total_variance_ : uncentered / n1;
  std::string error;
  if (!std::isfinite(trace_) || !std::isfinite(total_variance_))
    error = source +
            ": the column sums of squares are not finite (values too large to square; "
            "rescale the data)";
  else if (!(trace_ > 0))
    error = source + (center_ ? ": every column is constant; there is no variance to analyse"
                              : ": every stored value is zero; there is nothing to analyse");
  agree(comm, error);
}

std::vector<double> SparseCovarianceOperator::mean_shift(const double* v, std::size_t w) const {
  std::vector<double> shift(w, 0.0);
  if (center_)
    for (std::size_t j = 0; j < mean_.size(); ++j) {
      const double m = mean_[j] / scale_[j];
      if (m == 0) continue;
      for (std::size_t c = 0; c < w; ++c) shift[c] += m * v[j * w + c];
    }
  return shift;
}

void SparseCovarianceOperator::row_product(std::int64_t i, const double* v, std::size_t w,
                                           const double* shift, double* row) const {
  for (std::size_t c = 0; c < w; ++c) row[c] = -shift[c];
  for (std::int64_t e = x_.offsets[i]; e < x_.offsets[i + 1]; ++e) {
    const std::size_t j = static_cast<std::size_t>(x_.columns[e]);
    const double a = x_.values[e] / scale_[j];
    const double* vj = v + j * w;
    for (std::size_t c = 0; c < w; ++c) row[c] += a * vj[c];
  }
}

void SparseCovarianceOperator::centered_product(const double* v, int width, double* t) const {
  const std::size_t w = static_cast<std::size_t>(width);
  const std::vector<double> shift = mean_shift(v, w);
  for (std::int64_t i = 0; i < x_.local_rows(); ++i)
    row_product(i, v, w, shift.data(), t + std::size_t(i) * w);
}

void SparseCovarianceOperator::apply(const double* x, int ldx, int width, double* y, int ldy) {
  const Comm& comm = grid_.comm();
  const int p = comm.size();
  const std::size_t w = static_cast<std::size_t>(width);
  const std::size_t d = static_cast<std::size_t>(x_.cols);
  const int local = rows_.local_size();
  // 1. This rank's rows, column-major and packed, gathered in rank order:
  // rank r's piece starts at owned_before_[r] w, column c at c owned_[r].
  std::vector<double> piece(std::size_t(local) * w);
  for (std::size_t c = 0; c < w; ++c)
    std::copy_n(x + c * std::size_t(ldx), local, piece.data() + c * std::size_t(local));
  gathered_ = comm.allgatherv(piece);
  const auto place = [&](std::size_t g, std::size_t c) {
    const int r = owner_[g];
    return std::size_t(owned_before_[r]) * w + c * std::size_t(owned_[r]) +
           std::size_t(owner_local_[g]);
  };
  // V row-major (S^{-1} is applied entry by entry in row_product).
  v_.resize(d * w);
  for (std::size_t g = 0; g < d; ++g)
    for (std::size_t c = 0; c < w; ++c) v_[g * w + c] = gathered_[place(g, c)];
  // 2-3. Row by row: t = row i of (X_r - 1 mu^T) S^{-1} V, then its share
  // of U_r = X_r^T T - mu (1^T T), row-major d x w; T is never stored.
  const std::vector<double> shift = mean_shift(v_.data(), w);
  std::vector<double> t(w), column_sums(w, 0.0);
  u_.assign(d * w, 0.0);
  for (std::int64_t i = 0; i < x_.local_rows(); ++i) {
    row_product(i, v_.data(), w, shift.data(), t.data());
    for (std::size_t c = 0; c < w; ++c) column_sums[c] += t[c];
    for (std::int64_t e = x_.offsets[i]; e < x_.offsets[i + 1]; ++e) {
      const double a = x_.values[e];
      double* uj = u_.data() + std::size_t(x_.columns[e]) * w;
      for (std::size_t c = 0; c < w; ++c) uj[c] += a * t[c];
    }
  }
  if (center_)
    for (std::size_t g = 0; g < d; ++g)
      for (std::size_t c = 0; c < w; ++c) u_[g * w + c] -= mean_[g] * column_sums[c];
  // 4. Each rank's rows of U to their owner (the gathered layout again),
  // summed there in rank order.
  for (std::size_t g = 0; g < d; ++g)
    for (std::size_t c = 0; c < w; ++c) gathered_[place(g, c)] = u_[g * w + c];
  std::vector<std::int64_t> send(p), receive(p, std::int64_t(local) * width);
  for (int r = 0; r < p; ++r) send[r] = owned_[r] * width;
  received_.resize(std::size_t(p) * local * w);
  comm.alltoallv(gathered_.data(), send, received_.data(), receive);
  const double n1 = static_cast<double>(x_.rows - 1);
  for (int l = 0; l < local; ++l) {
    const double factor = 1 / (scale_[rows_.to_global(l)] * n1);
    for (std::size_t c = 0; c < w; ++c) {
      double s = 0;
      for (int r = 0; r < p; ++r)
        s += received_[std::size_t(r) * local * w + c * std::size_t(local) + std::size_t(l)];
      y[std::size_t(l) + c * std::size_t(ldy)] = s * factor;
    }
  }
  ++products_;
}

OperatorCost SparseCovarianceOperator::cost(int width) const {
  const double w = width, d = static_cast<double>(x_.cols),
               nnz = static_cast<double>(x_.nonzeros());
  const double local = rows_.local_size(), p = grid_.comm().size();
  OperatorCost c;
  c.held_bytes =
      static_cast<std::size_t>(nnz * (4 + 8) + (x_.local_rows() + 1) * 8.0 + d * (2 * 8 + 2 * 4));
  // The gathered block, V', U, T and the received sums.
  c.work_bytes = static_cast<std::size_t>(
      (3 * d * w + double(x_.local_rows()) * w + p * local * w + local * w) * 8);
  c.flops = 4 * nnz * w + 6 * d * w;
  return c;
}

}  // namespace kembed::spectral
