#pragma once
/// @file Distances between pairs of points whose squared norms overflow or
/// whose Gram-trick distance ||x||^2 + ||y||^2 - 2 x.y would lose every digit
/// to cancellation: computed from the differences x_t - y_t, scaled by a
/// power of two so that no intermediate overflows or underflows needlessly.
/// The fallback of kernel and distance assembly for the rows that need it.
#include <cfloat>
#include <vector>

namespace kembed::kernel {

/// A non-negative number held as mantissa * 2^exponent, so that values far
/// beyond DBL_MAX (the squared distance of points near 1e200) stay exact
/// enough to decide what they are used for.
struct Scaled {
  double mantissa = 0;  ///< in [0, 4 d]: a sum of d terms, each below 4
  int exponent = 0;
  /// mantissa * 2^exponent, +inf when it overflows.
  double value() const;
  /// factor * mantissa * 2^exponent (factor >= 0), +inf when it overflows.
  double times(double factor) const;
};

/// ||x - y||_2^2 of two d-vectors from their differences.
Scaled squared_distance_scaled(const double* x, const double* y, int d);

/// ||x - y||_1 of two d-vectors from their differences.
Scaled l1_distance_scaled(const double* x, const double* y, int d);

/// x.y / (||x|| ||y||) with each vector scaled by a power of two first (the
/// cosine does not change), so huge or tiny vectors give the right value;
/// 0 when either vector is zero.
double cosine_scaled(const double* x, const double* y, int d);

/// Largest squared norm for which the Gram-trick distance
/// ||x||^2 + ||y||^2 - 2 x.y cannot overflow (the terms add up to at most
/// 4 max(||x||^2, ||y||^2)).
inline constexpr double kSafeSquaredNorm = DBL_MAX / 8;

/// Largest max |x_t| for which sum_t |x_t - y_t| over d terms cannot overflow.
double safe_l1_magnitude(int d);

/// Indices l < rows of the rows of a row-major panel for which `needs` holds
/// (given the row's squared norm).
template <class Predicate>
std::vector<int> rows_where(const std::vector<double>& norms, Predicate&& needs) {
  std::vector<int> found;
  for (int l = 0; l < static_cast<int>(norms.size()); ++l)
    if (needs(norms[l])) found.push_back(l);
  return found;
}

/// Rows whose squared norm overflows, or underflows although the row is not
/// zero (`largest` holds each row's largest magnitude): the rows whose cosine
/// must be computed on scaled copies.
inline std::vector<int> badly_scaled_rows(const std::vector<double>& norms,
                                          const std::vector<double>& largest) {
  std::vector<int> found;
  for (int l = 0; l < static_cast<int>(norms.size()); ++l)
    if (!(norms[l] <= kSafeSquaredNorm) || (norms[l] < DBL_MIN && largest[l] > 0))
      found.push_back(l);
  return found;
}

}  // namespace kembed::kernel
