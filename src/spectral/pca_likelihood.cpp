#include "kembed/spectral/pca_likelihood.hpp"

#include <algorithm>
#include <cmath>

#include "kembed/linalg/lapack.hpp"

namespace kembed::spectral {

namespace {

constexpr double kLog2Pi = 1.8378770664093454836;  // log(2 pi)

int k_of(const PpcaParameters& p) { return static_cast<int>(p.explained_variance.size()); }

// c_j = max(l_j, s): the variance of C along axis j (scikit-learn clips
// l_j - s at 0).
double along_axis(const PpcaParameters& p, int j) {
  return std::max(p.explained_variance[j], p.noise_variance);
}

// W^T diag(w) W + diagonal I, d x d (symmetric, so row- and column-major
// alike); `axes` is W, k x d row-major = W^T column-major with ld d.
std::vector<double> low_rank_plus_diagonal(const PpcaParameters& p, const std::vector<double>& axes,
                                           const std::vector<double>& w, double diagonal) {
  const int d = static_cast<int>(p.d), k = k_of(p);
  std::vector<double> scaled(axes);
  for (int j = 0; j < k; ++j)
    for (int t = 0; t < d; ++t) scaled[std::size_t(j) * d + t] *= w[j];
  std::vector<double> out(std::size_t(d) * d, 0.0);
  if (k > 0)
    lapack::gemm('N', 'T', d, d, k, 1.0, scaled.data(), d, axes.data(), d, 0.0, out.data(), d);
  for (int t = 0; t < d; ++t) out[std::size_t(t) * d + t] += diagonal;
  return out;
}

}  // namespace

double ppca_noise_variance(std::int64_t n, std::int64_t d, const std::vector<double>& kept,
                           double total_variance, const std::vector<double>& spectrum) {
  const auto k = static_cast<std::int64_t>(kept.size());
  const std::int64_t most = std::min(n, d);
  if (k >= most) return 0;
  double discarded = 0;
  if (!spectrum.empty()) {
    for (std::size_t j = kept.size(); j < spectrum.size(); ++j) discarded += spectrum[j];
  } else {
    double sum = 0;
    for (double v : kept) sum += v;
    discarded = total_variance - sum;
  }
  return std::max(0.0, discarded) / static_cast<double>(most - k);
}

std::string ppca_undefined_reason(const PpcaParameters& p) {
  const int k = k_of(p);
  if (k < p.d && !(p.noise_variance > 0))
    return "the noise variance is 0 with " + std::to_string(k) + " of " + std::to_string(p.d) +
           " components, so the probabilistic PCA covariance is singular";
  for (int j = 0; j < k; ++j)
    if (!(along_axis(p, j) > 0))
      return "component " + std::to_string(j + 1) +
             " has zero variance, so the probabilistic PCA covariance is singular";
  return {};
}

double ppca_log_det_covariance(const PpcaParameters& p) {
  const int k = k_of(p);
  double sum = 0;
  for (int j = 0; j < k; ++j) sum += std::log(along_axis(p, j));
  if (k < p.d) sum += static_cast<double>(p.d - k) * std::log(p.noise_variance);
  return sum;
}

double ppca_training_log_likelihood(const PpcaParameters& p, std::int64_t n,
                                    double total_variance) {
  const int k = k_of(p);
  double trace = 0, kept = 0;
  for (int j = 0; j < k; ++j) {
    trace += p.explained_variance[j] / along_axis(p, j);
    kept += p.explained_variance[j];
  }
  if (k < p.d) trace += std::max(0.0, total_variance - kept) / p.noise_variance;
  const double scatter = static_cast<double>(n - 1) / static_cast<double>(n);
  return -0.5 * scatter * trace -
         0.5 * (static_cast<double>(p.d) * kLog2Pi + ppca_log_det_covariance(p));
}

std::vector<double> ppca_covariance(const PpcaParameters& p, const std::vector<double>& axes) {
  std::vector<double> w(k_of(p));
  for (int j = 0; j < k_of(p); ++j) w[j] = along_axis(p, j) - p.noise_variance;
  return low_rank_plus_diagonal(p, axes, w, p.noise_variance);
}

std::vector<double> ppca_precision(const PpcaParameters& p, const std::vector<double>& axes) {
  const bool noise = k_of(p) < p.d;  // k = d: C = W^T diag(c) W, no noise term
  std::vector<double> w(k_of(p));
  for (int j = 0; j < k_of(p); ++j)
    w[j] = 1 / along_axis(p, j) - (noise ? 1 / p.noise_variance : 0.0);
  return low_rank_plus_diagonal(p, axes, w, noise ? 1 / p.noise_variance : 0.0);
}

std::vector<double> ppca_score_rows(const PpcaParameters& p, const std::vector<double>& axes,
                                    bool axes_as_rows, const std::vector<double>& centered,
                                    const std::vector<double>& projected, std::int64_t rows) {
  const int d = static_cast<int>(p.d), k = k_of(p);
  const bool noise = k < d;
  std::vector<double> out(static_cast<std::size_t>(rows));
  if (rows == 0) return out;
  // The residuals R = Xr - Y W, row-major rows x d: R^T = Xr^T - W^T Y^T
  // column-major, W^T being `axes` column-major (ld d) when stored k x d,
  // its transpose (ld k) when stored d x k.
  std::vector<double> residual;
  if (noise) {
    residual = centered;
    lapack::gemm(axes_as_rows ? 'N' : 'T', 'N', d, static_cast<int>(rows), k, -1.0, axes.data(),
                 axes_as_rows ? d : k, projected.data(), k, 1.0, residual.data(), d);
  }
  const double constant = static_cast<double>(d) * kLog2Pi + ppca_log_det_covariance(p);
  std::vector<double> inverse(k);
  for (int j = 0; j < k; ++j) inverse[j] = 1 / along_axis(p, j);
  for (std::int64_t i = 0; i < rows; ++i) {
    double inside = 0, outside = 0;
    for (int j = 0; j < k; ++j) {
      const double y = projected[std::size_t(i) * k + j];
      inside += y * y * inverse[j];
    }
    if (noise) {
      for (int t = 0; t < d; ++t) {
        const double r = residual[std::size_t(i) * d + t];
        outside += r * r;
      }
      outside /= p.noise_variance;
    }
    out[std::size_t(i)] = -0.5 * (inside + outside) - 0.5 * constant;
  }
  return out;
}

}  // namespace kembed::spectral
