#include "kembed/kernel/scaled_distances.hpp"

#include <algorithm>
#include <cmath>

namespace kembed::kernel {

namespace {

// Exponents below this would make the scale factor 2^-e overflow; such
// vectors are subnormal, and their distances round to 0 anyway.
constexpr int kLowestExponent = -1000;

// 2^-e with e the exponent of `largest` (largest in [2^e, 2^(e+1))), so that
// values up to `largest` scale into [0, 2). Multiplying by it is exact.
int scale_exponent(double largest) { return std::max(std::ilogb(largest), kLowestExponent); }

// The halves x_t / 2 - y_t / 2 cannot overflow (x_t - y_t can, for values
// near DBL_MAX of opposite signs), and halving is exact for normal numbers.
double half_difference(double x, double y) { return 0.5 * x - 0.5 * y; }

double largest_half_difference(const double* x, const double* y, int d) {
  double largest = 0;
  for (int t = 0; t < d; ++t) largest = std::max(largest, std::abs(half_difference(x[t], y[t])));
  return largest;
}

double largest_magnitude(const double* x, int d) {
  double largest = 0;
  for (int t = 0; t < d; ++t) largest = std::max(largest, std::abs(x[t]));
  return largest;
}

}  // namespace

double Scaled::value() const { return std::ldexp(mantissa, exponent); }

double Scaled::times(double factor) const {
  int factor_exponent = 0;
  const double factor_mantissa = std::frexp(factor, &factor_exponent);
  // factor_mantissa * mantissa < 4 d cannot overflow; ldexp rounds the end once.
  return std::ldexp(factor_mantissa * mantissa, exponent + factor_exponent);
}

Scaled squared_distance_scaled(const double* x, const double* y, int d) {
  const double largest = largest_half_difference(x, y, d);
  if (largest == 0) return {0, 0};
  const int e = scale_exponent(largest);
  const double scale = std::ldexp(1.0, -e);
  double sum = 0;
  for (int t = 0; t < d; ++t) {
    const double u = half_difference(x[t], y[t]) * scale;  // |u| < 2
    sum += u * u;
  }
  // x_t - y_t = 2 u 2^e, so its square is u^2 2^(2e + 2).
  return {sum, 2 * e + 2};
}

Scaled l1_distance_scaled(const double* x, const double* y, int d) {
  const double largest = largest_half_difference(x, y, d);
  if (largest == 0) return {0, 0};
  const int e = scale_exponent(largest);
  const double scale = std::ldexp(1.0, -e);
  double sum = 0;
  for (int t = 0; t < d; ++t) sum += std::abs(half_difference(x[t], y[t]) * scale);
  return {sum, e + 1};
}

double cosine_scaled(const double* x, const double* y, int d) {
  const double mx = largest_magnitude(x, d), my = largest_magnitude(y, d);
  if (mx == 0 || my == 0) return 0;
  const double sx = std::ldexp(1.0, -scale_exponent(mx)), sy = std::ldexp(1.0, -scale_exponent(my));
  double dot = 0, xx = 0, yy = 0;
  for (int t = 0; t < d; ++t) {
    const double a = x[t] * sx, b = y[t] * sy;
    dot += a * b;
    xx += a * a;
    yy += b * b;
  }
  return dot / std::sqrt(xx * yy);
}

double safe_l1_magnitude(int d) { return DBL_MAX / (4.0 * std::max(d, 1)); }

}  // namespace kembed::kernel
