#include "kembed/graph/sparse_rows_stats.hpp"

#include <algorithm>

namespace kembed::graph {

namespace {

std::int64_t find(std::vector<std::int64_t>& parent, std::int64_t v) {
  while (parent[v] != v) {
    parent[v] = parent[parent[v]];  // path halving
    v = parent[v];
  }
  return v;
}

// The smaller root becomes the parent, so every root is its component's
// smallest vertex whatever the order of the joins.
void join(std::vector<std::int64_t>& parent, std::int64_t a, std::int64_t b) {
  a = find(parent, a);
  b = find(parent, b);
  if (a < b)
    parent[b] = a;
  else if (b < a)
    parent[a] = b;
}

}  // namespace

GraphStats graph_stats(const SparseRows& w, const Comm& comm) {
  const std::int64_t n = w.rows.global_size();
  const int p = comm.size(), me = comm.rank();
  GraphStats s;
  long long stored = 0, low = n > 0 ? n : 0, high = 0;
  std::vector<std::int64_t> parent(static_cast<std::size_t>(n));
  for (std::int64_t v = 0; v < n; ++v) parent[v] = v;
  for (int li = 0; li < w.rows.local_size(); ++li) {
    const std::int64_t i = w.rows.to_global(li);
    long long degree = 0;
    for (std::int64_t t = w.offsets[li]; t < w.offsets[li + 1]; ++t)
      if (w.columns[t] != i) {
        ++degree;
        join(parent, i, w.columns[t]);
      }
    stored += degree;
    low = std::min(low, degree);
    high = std::max(high, degree);
  }
  s.edges = comm.sum(stored) / 2;
  s.min_degree = comm.min(low);
  s.max_degree = comm.max(high);

  // Rank r + step sends its forest to rank r (r a multiple of 2 step), which
  // joins every vertex with its root there: the partitions' union.
  std::vector<std::int64_t> counts(static_cast<std::size_t>(p), 0);
  for (int step = 1; step < p; step *= 2) {
    std::fill(counts.begin(), counts.end(), 0);
    const bool sender = me % (2 * step) == step;
    if (sender) {
      for (std::int64_t v = 0; v < n; ++v) parent[v] = find(parent, v);
      counts[me - step] = n;
    }
    const std::vector<std::int64_t> from =
        comm.alltoallv(sender ? parent : std::vector<std::int64_t>{}, counts);
    if (me % (2 * step) == 0 && me + step < p)
      for (std::int64_t v = 0; v < n; ++v) join(parent, v, from[v]);
  }
  // Rank 0's roots are the components' smallest vertices: sizes in that order.
  std::vector<std::int64_t> sizes;
  if (me == 0) {
    std::vector<std::int64_t> label(static_cast<std::size_t>(n), -1);
    for (std::int64_t v = 0; v < n; ++v) {
      const std::int64_t r = find(parent, v);
      if (label[r] < 0) {
        label[r] = static_cast<std::int64_t>(sizes.size());
        sizes.push_back(0);
      }
      ++sizes[label[r]];
    }
  }
  comm.broadcast(sizes);
  s.component_sizes = std::move(sizes);
  s.components = static_cast<std::int64_t>(s.component_sizes.size());
  return s;
}

}  // namespace kembed::graph
