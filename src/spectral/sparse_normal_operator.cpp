#include "kembed/spectral/sparse_normal_operator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "kembed/core/error.hpp"

namespace kembed::spectral {

void check_csr_rows(const io::CsrRows& x, const Comm& comm, const std::string& source) {
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
  if (error.empty() && (all[1] < 1 || all[1] > std::numeric_limits<std::int32_t>::max()))
    error = source + ": " + std::to_string(all[1]) + " columns; expected 1 to 2^31 - 1";
  agree(comm, error);
}

SparseNormalOperator::SparseNormalOperator(const io::CsrRows& x, const BlacsGrid& grid,
                                           int block_size, NormalFactors factors)
    : x_(x),
      grid_(grid),
      rows_(std::max<std::int64_t>(x.cols, 0), std::max(block_size, 1), grid.comm().rank(),
            grid.comm().size()),
      factors_(std::move(factors)) {
  const Comm& comm = grid.comm();
  const auto local = static_cast<std::size_t>(x.local_rows());
  const auto d = static_cast<std::size_t>(std::max<std::int64_t>(x.cols, 0));
  agree(comm, factors_.row_scale.size() == local && factors_.row_shift.size() == local &&
                      factors_.col_scale.size() == d && factors_.col_shift.size() == d
                  ? ""
                  : "sparse normal operator: the factors' lengths do not match the " +
                        std::to_string(local) + " local rows and " + std::to_string(d) +
                        " columns");
  const int p = comm.size();
  owned_.assign(p, 0);
  owned_before_.assign(p, 0);
  owner_.resize(d);
  owner_local_.resize(d);
  for (int r = 0; r < p; ++r) {
    const BlockCyclic1D theirs(std::int64_t(d), rows_.block_size(), r, p);
    owned_[r] = theirs.local_size();
    if (r > 0) owned_before_[r] = owned_before_[r - 1] + owned_[r - 1];
    for (int l = 0; l < theirs.local_size(); ++l) {
      const std::int64_t g = theirs.to_global(l);
      owner_[g] = r;
      owner_local_[g] = l;
    }
  }
}

std::vector<double> SparseNormalOperator::shift(const double* v, std::size_t w) const {
  std::vector<double> beta(w, 0.0);
  const std::vector<double>& b = factors_.col_shift;
  for (std::size_t j = 0; j < b.size(); ++j) {
    if (b[j] == 0) continue;
    for (std::size_t c = 0; c < w; ++c) beta[c] += b[j] * v[j * w + c];
  }
  return beta;
}

void SparseNormalOperator::left_product(const double* v, int width, double* t) const {
  const std::size_t w = static_cast<std::size_t>(width);
  const std::vector<double> beta = shift(v, w);
  for (std::int64_t i = 0; i < x_.local_rows(); ++i)
    normal_row(x_, factors_, i, v, w, beta.data(), t + std::size_t(i) * w);
}

void SparseNormalOperator::apply(const double* x, int ldx, int width, double* y, int ldy) {
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
  v_.resize(d * w);
  for (std::size_t g = 0; g < d; ++g)
    for (std::size_t c = 0; c < w; ++c) v_[g * w + c] = gathered_[place(g, c)];
  // 2. Row by row (normal_sweep): each row of B_r V, its share of
  // X_r^T D_a T and of gamma = a^T T.
  const std::vector<double> beta = shift(v_.data(), w);
  std::vector<double> gamma(w, 0.0);
  u_.assign(d * w, 0.0);
  normal_sweep(x_, factors_, v_.data(), w, beta.data(), u_.data(), gamma.data(), simd_);
  // 3. U_r = D_b U_r - b gamma^T, each rank's rows of it to their owner (the
  // gathered layout again), summed there in rank order.
  for (std::size_t g = 0; g < d; ++g) {
    const double scale = factors_.col_scale[g], b = factors_.col_shift[g];
    for (std::size_t c = 0; c < w; ++c)
      gathered_[place(g, c)] = scale * u_[g * w + c] - b * gamma[c];
  }
  std::vector<std::int64_t> send(p), receive(p, std::int64_t(local) * width);
  for (int r = 0; r < p; ++r) send[r] = owned_[r] * width;
  received_.resize(std::size_t(p) * local * w);
  comm.alltoallv(gathered_.data(), send, received_.data(), receive);
  for (int l = 0; l < local; ++l)
    for (std::size_t c = 0; c < w; ++c) {
      double s = 0;
      for (int r = 0; r < p; ++r)
        s += received_[std::size_t(r) * local * w + c * std::size_t(local) + std::size_t(l)];
      y[std::size_t(l) + c * std::size_t(ldy)] = s;
    }
  ++products_;
}

OperatorCost SparseNormalOperator::cost(int width) const {
  const double w = width, d = static_cast<double>(x_.cols),
               nnz = static_cast<double>(x_.nonzeros());
  const double local = rows_.local_size(), p = grid_.comm().size();
  OperatorCost c;
  c.held_bytes = static_cast<std::size_t>(nnz * (4 + 8) + (x_.local_rows() + 1) * 8.0 +
                                          double(x_.local_rows()) * 2 * 8 + d * (2 * 8 + 2 * 4));
  // The gathered block, V, U, T and the received sums.
  c.work_bytes = static_cast<std::size_t>(
      (3 * d * w + double(x_.local_rows()) * w + p * local * w + local * w) * 8);
  c.flops = 4 * nnz * w + 6 * d * w;
  return c;
}

KrylovSettings sparse_krylov(KrylovSettings asked, int k, std::int64_t order) {
  if (asked.depth > 0) return asked;
  const std::int64_t keep = k + std::max(4, k / 4), b = kSparseKrylovBlock;
  const std::int64_t basis = std::min(order / 2, std::max<std::int64_t>(kSparseKrylovBasis, 6 * keep));
  if (keep + 2 * b <= basis) {
    asked.block = int(b);
    asked.keep = int(keep);
    asked.depth = int(basis / b);
    return asked;
  }
  const std::int64_t wide = std::max(1, krylov_block_width(k, asked));
  asked.depth =
      static_cast<int>(std::clamp<std::int64_t>(order / (2 * wide), 8, kSparseKrylovDepth));
  return asked;
}

}  // namespace kembed::spectral
