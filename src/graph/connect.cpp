#include "kembed/graph/connect.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "kembed/core/error.hpp"
#include "kembed/graph/pair_distance.hpp"

namespace kembed::graph {

namespace {

// A strict total order on candidate edges (source < target in each), so the
// Boruvka rounds never close a cycle and pick Kruskal's tree.
bool shorter(const Edge& a, const Edge& b) {
  if (a.length != b.length) return a.length < b.length;
  if (a.source != b.source) return a.source < b.source;
  return a.target < b.target;
}

struct UnionFind {
  std::vector<std::int64_t> parent;
  explicit UnionFind(std::int64_t n) : parent(static_cast<std::size_t>(n)) {
    std::iota(parent.begin(), parent.end(), std::int64_t{0});
  }
  std::int64_t find(std::int64_t v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  }
  bool join(std::int64_t a, std::int64_t b) {
    a = find(a), b = find(b);
    if (a == b) return false;
    parent[std::max(a, b)] = std::min(a, b);
    return true;
  }
};

}  // namespace

void add_edges(Graph& g, const std::vector<Edge>& edges) {
  std::vector<std::vector<std::pair<std::int64_t, double>>> extra(static_cast<std::size_t>(g.n));
  for (const Edge& e : edges) {
    extra[e.source].push_back({e.target, e.length});
    extra[e.target].push_back({e.source, e.length});
  }
  Graph out;
  out.n = g.n;
  out.offsets.assign(static_cast<std::size_t>(g.n) + 1, 0);
  const std::size_t total = g.targets.size() + 2 * edges.size();
  out.targets.reserve(total);
  out.weights.reserve(total);
  out.listed.reserve(total);
  for (std::int64_t i = 0; i < g.n; ++i) {
    auto& more = extra[i];
    std::sort(more.begin(), more.end());
    std::size_t m = 0;
    for (std::int64_t t = g.offsets[i]; t <= g.offsets[i + 1]; ++t) {
      // Merge by target, keeping each row ascending.
      while (m < more.size() && (t == g.offsets[i + 1] || more[m].first < g.targets[t])) {
        out.targets.push_back(more[m].first);
        out.weights.push_back(more[m].second);
        out.listed.push_back(0);
        ++m;
      }
      if (t == g.offsets[i + 1]) break;
      out.targets.push_back(g.targets[t]);
      out.weights.push_back(g.weights[t]);
      out.listed.push_back(g.listed[t]);
    }
    out.offsets[i + 1] = static_cast<std::int64_t>(out.targets.size());
  }
  g = std::move(out);
}

std::vector<Edge> connect_components(Graph& g, io::MatrixFile& points,
                                     const NeighborSettings& settings, const Comm& comm) {
  const std::vector<std::int64_t> label = component_labels(g);
  const std::int64_t n = g.n;
  const std::int64_t c = label.empty() ? 0 : *std::max_element(label.begin(), label.end()) + 1;
  std::vector<Edge> added;
  if (c <= 1) return added;

  const int d = static_cast<int>(points.cols());
  const IndexRange mine = neighbor_rows(n, comm.rank(), comm.size());
  const auto own =
      points.read_rows(mine.size() > 0 ? std::vector<IndexRange>{mine} : std::vector<IndexRange>{});
  const bool cosine = settings.metric == kernel::Metric::cosine;
  std::vector<double> own_norms(static_cast<std::size_t>(mine.size()), 1);
  if (cosine)
    for (std::int64_t r = 0; r < mine.size(); ++r)
      own_norms[r] = norm2(&own[std::size_t(r) * d], d);

  UnionFind sets(c);
  std::int64_t remaining = c;
  const std::int64_t chunk = std::max<std::int64_t>(1, settings.chunk_rows);
  const Edge none{-1, -1, std::numeric_limits<double>::infinity()};
  std::vector<std::int64_t> part(static_cast<std::size_t>(n));
  while (remaining > 1) {
    for (std::int64_t i = 0; i < n; ++i) part[i] = sets.find(label[i]);
    // Each rank: the shortest edge leaving each current part from its own
    // rows; the other end's rank sees the same edge from the other side.
    std::vector<Edge> best(static_cast<std::size_t>(c), none);
    for (std::int64_t c0 = 0; c0 < n; c0 += chunk) {
      const IndexRange range{c0, std::min(n, c0 + chunk)};
      const auto other = points.read_rows({range});
      collectively(comm, [&] {
        for (std::int64_t r = 0; r < mine.size(); ++r) {
          const std::int64_t i = mine.begin + r;
          const double* x = &own[std::size_t(r) * d];
          Edge& b = best[part[i]];
          for (std::int64_t j = range.begin; j < range.end; ++j) {
            if (part[j] == part[i]) continue;
            const double* y = &other[std::size_t(j - range.begin) * d];
            const Edge cand{
                std::min(i, j), std::max(i, j),
                pair_distance(settings.metric, x, y, d, own_norms[r], cosine ? norm2(y, d) : 1.0)};
            if (shorter(cand, b)) b = cand;
          }
        }
      });
    }
    const std::vector<Edge> all = comm.allgatherv(best);
    std::vector<Edge> round(static_cast<std::size_t>(c), none);
    for (std::size_t t = 0; t < all.size(); ++t)
      if (shorter(all[t], round[t % c])) round[t % c] = all[t];
    std::sort(round.begin(), round.end(), shorter);
    for (const Edge& e : round) {
      if (e.source < 0) break;
      if (sets.join(label[e.source], label[e.target])) {
        added.push_back(e);
        --remaining;
      }
    }
  }
  std::sort(added.begin(), added.end(), shorter);
  add_edges(g, added);
  return added;
}

}  // namespace kembed::graph
