#include "kembed/spectral/magnitude.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

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
bool any_above(const double* values, std::int64_t count, double limit) {
  constexpr std::uint64_t magnitude = ~std::uint64_t{0} >> 1;
  std::uint64_t limit_bits;
  std::memcpy(&limit_bits, &limit, sizeof limit_bits);
  const std::uint64_t complement = magnitude - limit_bits;
  std::uint64_t carries = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    std::uint64_t bits;
    std::memcpy(&bits, values + i, sizeof bits);
    carries |= (bits & magnitude) + complement;
  }
  return (carries >> 63) != 0;
}

bool any_above(const DistMatrix& x, double limit) {
  bool any = false;
  for (int lj = 0; lj < x.local_cols() && x.local_rows() > 0; ++lj)
    any = any_above(x.data() + static_cast<std::size_t>(lj) * x.ld(), x.local_rows(), limit) || any;
  return any;
}

// The agreed message for entry (i, j) (0-based) of n x d data.
std::string too_large(const std::string& source, std::int64_t i, std::int64_t j, double v,
                      double limit, std::int64_t n, std::int64_t d) {
  char value[32], bound[32];
  std::snprintf(value, sizeof value, "%.6g", v);
  std::snprintf(bound, sizeof bound, "%.3g", limit);
  return source + ": row " + std::to_string(i + 1) + ", column " + std::to_string(j + 1) +
         " (1-based): value " + value + " is too large for PCA: the covariance sums of " +
         std::to_string(n) + " x " + std::to_string(d) + " data overflow above |x| = " + bound +
         " (values too large; rescale the data)";
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
  agree(comm, too_large(source, e->i, e->j, e->value, limit, x.rows(), x.cols()));
}

void check_pca_magnitude(const Comm& comm, const double* values, std::int64_t rows,
                         std::int64_t first_row, std::int64_t n, std::int64_t d,
                         const std::string& source) {
  const double limit = largest_pca_magnitude(n, d);
  const std::int64_t count = rows * d;
  if (comm.max(any_above(values, count, limit) ? 1LL : 0LL) == 0) return;
  // The rows are contiguous in file order: this rank's first flagged entry
  // is its earliest, and the earliest over all ranks is the first one.
  std::int64_t local = -1;
  for (std::int64_t t = 0; t < count && local < 0; ++t)
    if (!(std::abs(values[t]) <= limit)) local = t;
  const long long none = std::numeric_limits<long long>::max();
  const long long mine = local < 0 ? none : first_row * d + local;
  const long long first = comm.min(mine);
  agree(comm, first == mine && mine != none
                  ? too_large(source, first / d, first % d, values[local], limit, n, d)
                  : "");
}

}  // namespace kembed::spectral
