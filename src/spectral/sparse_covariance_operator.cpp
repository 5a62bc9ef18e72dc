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
    : root_n1_(std::sqrt(static_cast<double>(std::max<std::int64_t>(x.rows - 1, 1)))),
      stats_(take_statistics(x, grid.comm(), center, standardize, source)),
      core_(x, grid, block_size, factors(x, stats_, center)) {}

NormalFactors SparseCovarianceOperator::factors(const io::CsrRows& x, const Statistics& stats,
                                                bool center) {
  const double inverse_root = 1 / std::sqrt(static_cast<double>(x.rows - 1));
  const auto local = static_cast<std::size_t>(x.local_rows());
  NormalFactors f;
  f.row_scale.assign(local, inverse_root);
  f.row_shift.assign(local, center ? inverse_root : 0.0);
  f.col_scale.resize(stats.scale.size());
  f.col_shift.resize(stats.scale.size());
  for (std::size_t j = 0; j < stats.scale.size(); ++j) {
    f.col_scale[j] = 1 / stats.scale[j];
    f.col_shift[j] = center ? stats.mean[j] / stats.scale[j] : 0.0;
  }
  return f;
}

SparseCovarianceOperator::Statistics SparseCovarianceOperator::take_statistics(
    const io::CsrRows& x, const Comm& comm, bool center, bool standardize,
    const std::string& source) {
  check_csr_rows(x, comm, source);
  agree(comm, x.rows < 2
                  ? source + ": PCA needs at least 2 samples, found " + std::to_string(x.rows)
                  : "");
  Statistics out;
  std::vector<double>& mean = out.mean;
  const std::int64_t n = x.rows;
  const auto d = static_cast<std::size_t>(x.cols);
  const double n1 = static_cast<double>(n - 1);
  // Means, and how many entries each column stores (exact in a double).
  std::vector<double> sums(2 * d, 0.0);
  for (std::int64_t t = 0; t < x.nonzeros(); ++t) {
    sums[x.columns[t]] += x.values[t];
    sums[d + x.columns[t]] += 1;
  }
  comm.sum_in_place(sums);
  mean.assign(d, 0.0);
  for (std::size_t j = 0; j < d; ++j) mean[j] = sums[j] / static_cast<double>(n);
  // Squared deviations from the mean (two-pass): the stored entries here,
  // the unstored zeros' (n - stored) mu_j^2 once (on rank 0); and the plain
  // squares for the uncentered trace.
  std::vector<double> squares(d, 0.0), plain(d, 0.0);
  std::vector<double> low(d, std::numeric_limits<double>::infinity());
  std::vector<double> high(d, -std::numeric_limits<double>::infinity());
  for (std::int64_t t = 0; t < x.nonzeros(); ++t) {
    const std::size_t j = static_cast<std::size_t>(x.columns[t]);
    const double v = x.values[t];
    squares[j] += (v - mean[j]) * (v - mean[j]);
    plain[j] += v * v;
    low[j] = std::min(low[j], v);
    high[j] = std::max(high[j], v);
  }
  for (std::size_t j = 0; j < d; ++j) {
    const double unstored = static_cast<double>(n) - sums[d + j];
    if (unstored > 0) {
      low[j] = std::min(low[j], 0.0);
      high[j] = std::max(high[j], 0.0);
      if (comm.is_root()) squares[j] += unstored * mean[j] * mean[j];
    }
  }
  ColumnStats stats{mean, std::vector<double>(d, 1.0)};
  if (standardize) {
    // finish_scales sums `squares` over the ranks and agrees on constant columns.
    finish_scales(comm, n, std::move(low), std::move(high), squares, source, stats);
  }
  comm.sum_in_place(squares);
  comm.sum_in_place(plain);
  out.scale = std::move(stats.scale);
  const std::vector<double>& scale = out.scale;
  double centered = 0, uncentered = 0;
  for (std::size_t j = 0; j < d; ++j) {
    const double s2 = scale[j] * scale[j];
    centered += squares[j] / s2;
    uncentered += plain[j] / s2;
  }
  double& total_variance = out.total_variance;
  double& trace = out.trace;
  total_variance = centered / n1;
  trace = center ? total_variance : uncentered / n1;
  std::string error;
  if (!std::isfinite(trace) || !std::isfinite(total_variance))
    error = source +
            ": the column sums of squares are not finite (values too large to square; "
            "rescale the data)";
  else if (!(trace > 0))
    error = source + (center ? ": every column is constant; there is no variance to analyse"
                             : ": every stored value is zero; there is nothing to analyse");
  agree(comm, error);
  return out;
}

void SparseCovarianceOperator::centered_product(const double* v, int width, double* t) const {
  core_.left_product(v, width, t);
  const std::size_t count =
      static_cast<std::size_t>(core_.factors().row_scale.size()) * static_cast<std::size_t>(width);
  for (std::size_t e = 0; e < count; ++e) t[e] *= root_n1_;
}

}  // namespace kembed::spectral
