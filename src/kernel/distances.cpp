#include "kembed/kernel/distances.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

#include "kembed/core/error.hpp"
#include "kembed/kernel/distance_checks.hpp"
#include "kembed/kernel/local_blocks.hpp"
#include "kembed/kernel/scaled_distances.hpp"

namespace kembed::kernel {

Metric parse_metric(const std::string& name) {
  if (name == "euclidean") return Metric::euclidean;
  if (name == "sqeuclidean") return Metric::sqeuclidean;
  if (name == "manhattan") return Metric::manhattan;
  if (name == "cosine") return Metric::cosine;
  throw Error("unknown metric '" + name +
              "' (expected euclidean, sqeuclidean, manhattan or cosine)");
}

namespace {

// The block of distances, block-locally: the fast path for ordinary rows,
// then the pairs with a huge row again from their differences (whose
// squared norms overflow, ||x||^2 + ||y||^2 - 2 x.y = inf - inf).
void fill_distances(Metric metric, const std::vector<double>& row_panel,
                    const std::vector<double>& col_panel, int d, DistMatrix& out) {
  const auto pair = [&](int li, int lj) {
    return std::make_pair(&row_panel[std::size_t(li) * d], &col_panel[std::size_t(lj) * d]);
  };
  if (metric == Metric::manhattan) {
    const double safe = safe_l1_magnitude(d);
    const auto x_max = row_max_magnitudes(row_panel, out.local_rows(), d);
    const auto y_max = row_max_magnitudes(col_panel, out.local_cols(), d);
    map_local(out, [&](double, int li, int lj) {
      const auto [x, y] = pair(li, lj);
      if (!(x_max[li] <= safe && y_max[lj] <= safe)) return l1_distance_scaled(x, y, d).value();
      double s = 0;
      for (int t = 0; t < d; ++t) s += std::abs(x[t] - y[t]);
      return s;
    });
    return;
  }
  // The Gram product and the map to distances in one pass, tile by tile.
  auto xn = row_norms_squared(row_panel, out.local_rows(), d);
  auto yn = row_norms_squared(col_panel, out.local_cols(), d);
  const auto huge = [](double norm) { return !(norm <= kSafeSquaredNorm); };
  const auto x_huge = rows_where(xn, huge), y_huge = rows_where(yn, huge);
  switch (metric) {
    case Metric::euclidean:
      local_gram_map(row_panel, col_panel, d, out, [&](double g, int li, int lj) {
        return std::sqrt(std::max(0.0, xn[li] + yn[lj] - 2 * g));
      });
      refill_pairs(out, x_huge, y_huge, [&](int li, int lj) {
        const auto [x, y] = pair(li, lj);
        const Scaled s = squared_distance_scaled(x, y, d);
        // sqrt(m 2^(2e)) = sqrt(m) 2^e: no overflow where the distance fits.
        return std::ldexp(std::sqrt(s.mantissa), s.exponent / 2);
      });
      break;
    case Metric::sqeuclidean:
      local_gram_map(row_panel, col_panel, d, out, [&](double g, int li, int lj) {
        return std::max(0.0, xn[li] + yn[lj] - 2 * g);
      });
      refill_pairs(out, x_huge, y_huge, [&](int li, int lj) {
        const auto [x, y] = pair(li, lj);
        return squared_distance_scaled(x, y, d).value();
      });
      break;
    case Metric::cosine: {
      // Zero rows are rejected beforehand (check_points_for_metric). Rows
      // whose norms overflow or underflow are recomputed on scaled rows.
      const auto x_max = row_max_magnitudes(row_panel, out.local_rows(), d);
      const auto y_max = row_max_magnitudes(col_panel, out.local_cols(), d);
      const auto x_bad = badly_scaled_rows(xn, x_max), y_bad = badly_scaled_rows(yn, y_max);
      for (auto* v : {&xn, &yn})
        for (double& s : *v) s = 1 / std::sqrt(s);
      local_gram_map(row_panel, col_panel, d, out, [&](double g, int li, int lj) {
        return std::max(0.0, 1 - g * xn[li] * yn[lj]);
      });
      refill_pairs(out, x_bad, y_bad, [&](int li, int lj) {
        const auto [x, y] = pair(li, lj);
        return std::max(0.0, 1 - cosine_scaled(x, y, d));
      });
      break;
    }
    case Metric::manhattan:
      break;
  }
}

}  // namespace

std::string metric_name(Metric metric) {
  switch (metric) {
    case Metric::euclidean:
      return "euclidean";
    case Metric::sqeuclidean:
      return "sqeuclidean";
    case Metric::manhattan:
      return "manhattan";
    case Metric::cosine:
      return "cosine";
  }
  return "unknown";
}

void check_points_for_metric(Metric metric, const std::vector<double>& panel,
                             const BlockCyclic1D& dist, int d, const Comm& comm,
                             const std::string& source) {
  if (metric != Metric::cosine) return;
  long long first = std::numeric_limits<long long>::max();
  const auto largest = row_max_magnitudes(panel, dist.local_size(), d);
  for (int l = 0; l < dist.local_size(); ++l)
    if (largest[l] == 0) first = std::min<long long>(first, dist.to_global(l));
  first = comm.min(first);
  std::string error;
  if (first != std::numeric_limits<long long>::max())
    error = source + ": row " + std::to_string(first + 1) +
            " is the zero vector, whose cosine distance to any point is undefined";
  agree(comm, error);
}

void assemble_distances(Metric metric, const std::vector<double>& row_panel,
                        const std::vector<double>& col_panel, int d, DistMatrix& out,
                        std::int64_t column_offset) {
  fill_distances(metric, row_panel, col_panel, d, out);
  check_squares(out, "distances of the points", column_offset);
}

void square_distances(DistMatrix& a, double scale) {
  for (int lj = 0; lj < a.local_cols(); ++lj) {
    double* column = a.column(lj);
    for (int li = a.stored_from(lj); li < a.local_rows(); ++li)
      column[li] = scale * column[li] * column[li];
  }
}

}  // namespace kembed::kernel
