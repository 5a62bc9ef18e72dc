#include "kembed/spectral/magnitude.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "kembed/core/error.hpp"
#include "kembed/kernel/first_entry.hpp"

namespace kembed::spectral {

double largest_pca_magnitude(std::int64_t n, std::int64_t d) {
  const double rows = static_cast<double>(std::max<std::int64_t>(n, 1));
  const double most = static_cast<double>(std::max<std::int64_t>({n, d, 1}));
  return std::sqrt(DBL_MAX / (16 * rows * most));
}

namespace {

// Whether some entry of the local block fails |v| <= limit, NaN included.
// The magnitude bits of a double (sign cleared) order as |v| does, and NaN's
// lie above every number's; adding (2^63 - 1) - bits(limit) carries into bit
// 63 exactly when they exceed bits(limit). OR-ing those sums is branch-free
// and uses only SSE2 integer operations, so the compiler vectorizes it (a
// double comparison converted to an int flag, or a 64-bit compare, is not).
bool any_above(const DistMatrix& x, double limit) {
  constexpr std::uint64_t magnitude = ~std::uint64_t{0} >> 1;
  std::uint64_t limit_bits;
  std::memcpy(&limit_bits, &limit, sizeof limit_bits);
  const std::uint64_t complement = magnitude - limit_bits;
  std::uint64_t carries = 0;
  for (int lj = 0; lj < x.local_cols() && x.local_rows() > 0; ++lj) {
    const double* column = x.data() + static_cast<std::size_t>(lj) * x.ld();
    for (int li = 0; li < x.local_rows(); ++li) {
      std::uint64_t bits;
      std::memcpy(&bits, column + li, sizeof bits);
      carries |= (bits & magnitude) + complement;
    }
  }
  return (carries >> 63) != 0;
}

}  // namespace

void check_pca_magnitude(const DistMatrix& x, const std::string& source) {
  const double limit = largest_pca_magnitude(x.rows(), x.cols());
  // Usually nothing is too large: one vectorized pass and one agreement say
  // so; only then does the (collective) search for the first entry run.
  const Comm& comm = x.grid().comm();
  if (comm.max(any_above(x, limit) ? 1LL : 0LL) == 0) return;
  const auto e =
      kernel::first_flagged_entry(x, [&](double v, int, int) { return std::abs(v) <= limit ? 0 : 1; });
  if (!e) return;
  char value[32], bound[32];
  std::snprintf(value, sizeof value, "%.6g", e->value);
  std::snprintf(bound, sizeof bound, "%.3g", limit);
  agree(x.grid().comm(),
        source + ": row " + std::to_string(e->i + 1) + ", column " + std::to_string(e->j + 1) +
            " (1-based): value " + value + " is too large for PCA: the covariance sums of " +
            std::to_string(x.rows()) + " x " + std::to_string(x.cols()) +
            " data overflow above |x| = " + bound + " (values too large; rescale the data)");
}

}  // namespace kembed::spectral
