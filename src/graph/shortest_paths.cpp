#include "kembed/graph/shortest_paths.hpp"

#include <functional>
#include <limits>
#include <queue>
#include <utility>

namespace kembed::graph {

void shortest_paths_from(const Graph& g, std::int64_t source, std::vector<double>& dist) {
  shortest_paths_from(g, std::vector<Neighbor>{{source, 0.0}}, dist);
}

void shortest_paths_from(const Graph& g, const std::vector<Neighbor>& sources,
                         std::vector<double>& dist) {
  dist.assign(static_cast<std::size_t>(g.n), std::numeric_limits<double>::infinity());
  using Item = std::pair<double, std::int64_t>;
  // Lazy deletion: a vertex may sit in the heap several times; stale entries
  // (longer than its settled distance) are skipped when popped.
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  for (const Neighbor& s : sources)
    if (s.distance < dist[s.index]) {
      dist[s.index] = s.distance;
      heap.emplace(s.distance, s.index);
    }
  while (!heap.empty()) {
    const auto [du, u] = heap.top();
    heap.pop();
    if (du > dist[u]) continue;
    for (std::int64_t t = g.offsets[u]; t < g.offsets[u + 1]; ++t) {
      const double alt = du + g.weights[t];
      const std::int64_t v = g.targets[t];
      if (alt < dist[v]) {
        dist[v] = alt;
        heap.emplace(alt, v);
      }
    }
  }
}

void fill_geodesic_distances(const Graph& g, DistMatrix& out) {
  std::vector<double> dist;
  const bool by_columns = out.grid().npcol() >= out.grid().nprow();
  if (by_columns) {
    for (int lj = 0; lj < out.local_cols(); ++lj) {
      shortest_paths_from(g, out.col_dist().to_global(lj), dist);
      for (int li = 0; li < out.local_rows(); ++li)
        out.local(li, lj) = dist[out.row_dist().to_global(li)];
    }
  } else {
    for (int li = 0; li < out.local_rows(); ++li) {
      shortest_paths_from(g, out.row_dist().to_global(li), dist);
      for (int lj = 0; lj < out.local_cols(); ++lj)
        out.local(li, lj) = dist[out.col_dist().to_global(lj)];
    }
  }
}

}  // namespace kembed::graph
