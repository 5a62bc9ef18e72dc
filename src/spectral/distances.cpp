#include "kembed/spectral/distances.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kembed/core/error.hpp"
#include "kembed/kernel/local_blocks.hpp"

namespace kembed {

Metric parse_metric(const std::string& name) {
  if (name == "euclidean") return Metric::euclidean;
  if (name == "sqeuclidean") return Metric::sqeuclidean;
  if (name == "manhattan") return Metric::manhattan;
  if (name == "cosine") return Metric::cosine;
  throw Error("unknown metric '" + name +
              "' (expected euclidean, sqeuclidean, manhattan or cosine)");
}

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
  const auto norms = row_norms_squared(panel, dist.local_size(), d);
  for (int l = 0; l < dist.local_size(); ++l)
    if (norms[l] == 0) first = std::min<long long>(first, dist.to_global(l));
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_LONG_LONG, MPI_MIN, comm.get());
  std::string error;
  if (first != std::numeric_limits<long long>::max())
    error = source + ": row " + std::to_string(first + 1) +
            " is the zero vector, whose cosine distance to any point is undefined";
  agree(comm, error);
}

void assemble_distances(Metric metric, const std::vector<double>& row_panel,
                        const std::vector<double>& col_panel, int d, DistMatrix& out) {
  if (metric == Metric::manhattan) {
    map_local(out, [&](double, int li, int lj) {
      const double* x = &row_panel[std::size_t(li) * d];
      const double* y = &col_panel[std::size_t(lj) * d];
      double s = 0;
      for (int t = 0; t < d; ++t) s += std::abs(x[t] - y[t]);
      return s;
    });
    return;
  }
  local_gram(row_panel, col_panel, d, out);
  auto xn = row_norms_squared(row_panel, out.local_rows(), d);
  auto yn = row_norms_squared(col_panel, out.local_cols(), d);
  switch (metric) {
    case Metric::euclidean:
      map_local(out, [&](double g, int li, int lj) {
        return std::sqrt(std::max(0.0, xn[li] + yn[lj] - 2 * g));
      });
      break;
    case Metric::sqeuclidean:
      map_local(out,
                [&](double g, int li, int lj) { return std::max(0.0, xn[li] + yn[lj] - 2 * g); });
      break;
    case Metric::cosine:
      // Zero rows are rejected beforehand (check_points_for_metric).
      for (auto* v : {&xn, &yn})
        for (double& s : *v) s = 1 / std::sqrt(s);
      map_local(out,
                [&](double g, int li, int lj) { return std::max(0.0, 1 - g * xn[li] * yn[lj]); });
      break;
    case Metric::manhattan:
      break;
  }
}

}  // namespace kembed
