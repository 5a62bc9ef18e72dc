#include "kembed/spectral/magnitude.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

#include "kembed/core/error.hpp"
#include "kembed/kernel/first_entry.hpp"

namespace kembed::spectral {

double largest_pca_magnitude(std::int64_t n, std::int64_t d) {
  const double rows = static_cast<double>(std::max<std::int64_t>(n, 1));
  const double most = static_cast<double>(std::max<std::int64_t>({n, d, 1}));
  return std::sqrt(DBL_MAX / (16 * rows * most));
}

void check_pca_magnitude(const DistMatrix& x, const std::string& source) {
  const double limit = largest_pca_magnitude(x.rows(), x.cols());
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
