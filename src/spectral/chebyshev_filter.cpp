#include "kembed/spectral/chebyshev_filter.hpp"

#include <algorithm>
#include <utility>

#include "kembed/core/error.hpp"

namespace kembed::spectral {

ChebyshevFilter::ChebyshevFilter(SymmetricOperator& a, int degree, ChebyshevInterval interval)
    : a_(a), degree_(degree), interval_(interval) {
  if (degree < 1 || !(interval.lower < interval.cut && interval.cut < interval.upper))
    throw Error("Chebyshev filter: needs degree >= 1 and lower < cut < upper");
}

// Zhou and Saad's scaled three-term recurrence: with e the half width and c
// the centre of [lower, cut], sigma_1 = e / (upper - c), and
//   Y_1 = (sigma_1 / e) (A - c) X,
//   Y_{j+1} = (2 sigma_{j+1} / e) (A - c) Y_j - sigma_j sigma_{j+1} Y_{j-1},
//   sigma_{j+1} = 1 / (2 / sigma_1 - sigma_j),
// Y_m = T_m(L(A)) X / T_m(L(upper)): no overflow at any degree.
double ChebyshevFilter::value(double lambda) const {
  const double e = (interval_.cut - interval_.lower) / 2, c = (interval_.cut + interval_.lower) / 2;
  const double sigma1 = e / (interval_.upper - c);
  double sigma = sigma1, prev = 1, cur = (lambda - c) * sigma1 / e;
  for (int j = 1; j < degree_; ++j) {
    const double next_sigma = 1 / (2 / sigma1 - sigma);
    const double next = 2 * next_sigma / e * (lambda - c) * cur - sigma * next_sigma * prev;
    prev = cur, cur = next, sigma = next_sigma;
  }
  return cur;
}

void ChebyshevFilter::apply(const double* x, int ldx, int width, double* y, int ldy) {
  const int rows = a_.rows().local_size(), ld = std::max(1, rows);
  const std::size_t size = std::size_t(ld) * width;
  const double e = (interval_.cut - interval_.lower) / 2, c = (interval_.cut + interval_.lower) / 2;
  const double sigma1 = e / (interval_.upper - c);
  prev_.resize(size), cur_.resize(size), next_.resize(size);
  for (int j = 0; j < width; ++j)
    std::copy_n(x + std::size_t(j) * ldx, rows, prev_.data() + std::size_t(j) * ld);
  a_.apply(prev_.data(), ld, width, cur_.data(), ld);
  for (std::size_t t = 0; t < size; ++t) cur_[t] = (cur_[t] - c * prev_[t]) * (sigma1 / e);
  double sigma = sigma1;
  for (int step = 1; step < degree_; ++step) {
    const double next_sigma = 1 / (2 / sigma1 - sigma);
    a_.apply(cur_.data(), ld, width, next_.data(), ld);
    const double s = 2 * next_sigma / e, r = sigma * next_sigma;
    for (std::size_t t = 0; t < size; ++t) next_[t] = s * (next_[t] - c * cur_[t]) - r * prev_[t];
    std::swap(prev_, cur_);
    std::swap(cur_, next_);
    sigma = next_sigma;
  }
  for (int j = 0; j < width; ++j)
    std::copy_n(cur_.data() + std::size_t(j) * ld, rows, y + std::size_t(j) * ldy);
}

OperatorCost ChebyshevFilter::cost(int width) const {
  OperatorCost inner = a_.cost(width);
  inner.work_bytes += 3 * std::size_t(std::max(1, a_.rows().local_size())) * width * sizeof(double);
  inner.flops = degree_ * (inner.flops + 4.0 * a_.rows().local_size() * width);
  return inner;
}

}  // namespace kembed::spectral
