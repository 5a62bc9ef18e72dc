#include "kembed/spectral/feature_reconstruction.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

#include "kembed/distribute/read_distributed.hpp"
#include "kembed/kernel/assemble.hpp"
#include "kembed/linalg/lapack.hpp"

namespace kembed::spectral {

namespace {

// Column block of the n x m gamma matrix: small enough that every process
// column gets points when m is small.
int column_block(std::int64_t m, int npcol, int block_size) {
  const std::int64_t even = (m + npcol - 1) / npcol;
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(block_size, even)));
}

// Sum over all training rows of f(local row) (a vector of `width`): each
// row is counted once, by the ranks of process column 0; every rank gets
// the identical total.
template <class F>
std::vector<double> sum_over_rows(const DistMatrix& layout, int width, F&& f) {
  std::vector<double> total(width, 0.0);
  if (layout.grid().mycol() == 0)
    for (int li = 0; li < layout.local_rows(); ++li) f(li, total);
  layout.grid().comm().sum_in_place(total);
  return total;
}

}  // namespace

FeatureReconstruction::FeatureReconstruction(const KpcaModelStats& model,
                                             io::MatrixFile& training,
                                             io::MatrixFile& coefficients, std::vector<double> z,
                                             int c, const BlacsGrid& grid, int block_size)
    : model_(model),
      m_(static_cast<std::int64_t>(z.size()) / std::max(c, 1)),
      c_(c),
      z_(std::move(z)),
      gamma_(grid, model.n, m_, block_size, column_block(m_, grid.npcol(), block_size)),
      kxy_(grid, model.n, m_, block_size, column_block(m_, grid.npcol(), block_size)) {
  const int d = static_cast<int>(model_.d), k = model_.k;
  const double n = static_cast<double>(model_.n);
  x_panel_ = distribute::read_panel(training, gamma_.row_dist());
  a_panel_ = distribute::read_panel(coefficients, gamma_.row_dist());
  const int rows = gamma_.local_rows();

  // Column means of A (zero up to round-off for eigenvectors of a centered
  // kernel, kept for exactness) and s_j = <mean, u_j> = sum_i (a_ij - abar_j) c_i.
  const auto abar = sum_over_rows(gamma_, k, [&](int li, std::vector<double>& acc) {
    for (int j = 0; j < k; ++j) acc[j] += a_panel_[std::size_t(li) * k + j] / n;
  });
  const auto s = sum_over_rows(gamma_, k, [&](int li, std::vector<double>& acc) {
    const double ci = model_.col_means[gamma_.row_dist().to_global(li)];
    for (int j = 0; j < k; ++j) acc[j] += (a_panel_[std::size_t(li) * k + j] - abar[j]) * ci;
  });

  norm2_.assign(m_, model_.grand_mean);
  for (std::int64_t q = 0; q < m_; ++q)
    for (int j = 0; j < c_; ++j) {
      const double zj = z_[std::size_t(q) * c_ + j];
      norm2_[q] += zj * (2 * s[j] + zj);
    }

  gamma_.fill([&](std::int64_t i, std::int64_t q) {
    const double* a = &a_panel_[std::size_t(gamma_.row_dist().to_local(i)) * k];
    double g = 1 / n;
    for (int j = 0; j < c_; ++j) g += (a[j] - abar[j]) * z_[std::size_t(q) * c_ + j];
    return g;
  });

  // K~_jj = k(x_j, x_j) - 2 c_j + g.
  centered_self_.resize(rows);
  for (int li = 0; li < rows; ++li) {
    const double* x = &x_panel_[std::size_t(li) * d];
    centered_self_[li] = model_.kernel(x, x, d) -
                         2 * model_.col_means[gamma_.row_dist().to_global(li)] +
                         model_.grand_mean;
  }
}

std::vector<std::int64_t> FeatureReconstruction::nearest_training(
    const std::vector<std::vector<std::int64_t>>& excluded) const {
  const int k = model_.k;
  const Comm::ValueIndex init{std::numeric_limits<double>::infinity(), INT_MAX};
  std::vector<Comm::ValueIndex> best(m_, init);
  for (int lq = 0; lq < gamma_.local_cols(); ++lq) {
    const std::int64_t q = gamma_.col_dist().to_global(lq);
    const double* z = &z_[std::size_t(q) * c_];
    double zz = 0;
    for (int j = 0; j < c_; ++j) zz += z[j] * z[j];
    for (int li = 0; li < gamma_.local_rows(); ++li) {
      const std::int64_t i = gamma_.row_dist().to_global(li);
      if (std::find(excluded[q].begin(), excluded[q].end(), i) != excluded[q].end()) continue;
      const double* a = &a_panel_[std::size_t(li) * k];
      double cross = 0;
      for (int j = 0; j < c_; ++j) cross += model_.eigenvalues[j] * a[j] * z[j];
      const double dist = centered_self_[li] - 2 * cross + zz;
      // Ascending local rows: strict < keeps the smallest index on ties.
      if (dist < best[q].value) best[q] = {dist, static_cast<int>(i)};
    }
  }
  // MINLOC keeps the smaller index on equal values, so the choice does not
  // depend on the grid.
  gamma_.grid().comm().minloc_in_place(best);
  std::vector<std::int64_t> index(m_);
  for (std::int64_t q = 0; q < m_; ++q)
    index[q] = best[q].index == INT_MAX ? -1 : best[q].index;
  return index;
}

std::vector<double> FeatureReconstruction::training_rows(
    const std::vector<std::int64_t>& index) const {
  const int d = static_cast<int>(model_.d);
  std::vector<double> rows(std::size_t(m_) * d, 0.0);
  // The rank holding entry (index[q], q) of gamma contributes row q.
  for (std::int64_t q = 0; q < m_; ++q) {
    const std::int64_t i = index[q];
    if (i < 0 || !gamma_.row_dist().is_local(i) || !gamma_.col_dist().is_local(q)) continue;
    const double* x = &x_panel_[std::size_t(gamma_.row_dist().to_local(i)) * d];
    std::copy(x, x + d, &rows[std::size_t(q) * d]);
  }
  gamma_.grid().comm().sum_in_place(rows);
  return rows;
}

WeightedSums FeatureReconstruction::weighted_sums(const std::vector<double>& y,
                                                  bool use_kernel) {
  const int d = static_cast<int>(model_.d);
  const int rows = gamma_.local_rows(), cols = gamma_.local_cols();
  // kxy_ <- gamma_iq k(x_i, y_q) (or gamma_iq alone).
  if (use_kernel) {
    std::vector<double> y_panel(std::size_t(cols) * d);
    for (int lq = 0; lq < cols; ++lq) {
      const std::int64_t q = gamma_.col_dist().to_global(lq);
      std::copy(&y[std::size_t(q) * d], &y[std::size_t(q) * d] + d, &y_panel[std::size_t(lq) * d]);
    }
    kernel::assemble_kernel(model_.kernel, x_panel_, y_panel, d, kxy_);
  } else {
    for (int lq = 0; lq < cols; ++lq)
      for (int li = 0; li < rows; ++li) kxy_.local(li, lq) = 1;
  }
  for (int lq = 0; lq < cols; ++lq)
    for (int li = 0; li < rows; ++li) kxy_.local(li, lq) *= gamma_.local(li, lq);

  // Per point: d numerator entries, the weight sum and the absolute weight
  // sum, packed so one reduction carries them all.
  const int width = d + 2;
  std::vector<double> packed(std::size_t(m_) * width, 0.0);
  if (rows > 0 && cols > 0) {
    std::vector<double> numerator(std::size_t(d) * cols);
    // (d x rows, column-major view of the row-major panel) * (rows x cols).
    lapack::gemm('N', 'N', d, cols, rows, 1.0, x_panel_.data(), d, kxy_.data(), kxy_.ld(), 0.0,
                 numerator.data(), d);
    for (int lq = 0; lq < cols; ++lq) {
      double* out = &packed[std::size_t(gamma_.col_dist().to_global(lq)) * width];
      std::copy(&numerator[std::size_t(lq) * d], &numerator[std::size_t(lq) * d] + d, out);
      for (int li = 0; li < rows; ++li) {
        out[d] += kxy_.local(li, lq);
        out[d + 1] += std::abs(kxy_.local(li, lq));
      }
    }
  }
  gamma_.grid().comm().sum_in_place(packed);

  WeightedSums sums;
  sums.numerator.resize(std::size_t(m_) * d);
  sums.weight.resize(m_);
  sums.abs_weight.resize(m_);
  for (std::int64_t q = 0; q < m_; ++q) {
    const double* p = &packed[std::size_t(q) * width];
    std::copy(p, p + d, &sums.numerator[std::size_t(q) * d]);
    sums.weight[q] = p[d];
    sums.abs_weight[q] = p[d + 1];
    // The weight sum is <phi(y), phi_hat> only when the kernel was applied.
    if (!use_kernel) continue;
    const double* yq = &y[std::size_t(q) * d];
    sums.distance.push_back(std::max(0.0, model_.kernel(yq, yq, d) - 2 * p[d] + norm2_[q]));
  }
  return sums;
}

}  // namespace kembed::spectral
