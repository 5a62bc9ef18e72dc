#include "kembed/graph/graph.hpp"

#include <algorithm>
#include <numeric>

namespace kembed::graph {

Graph symmetrize(std::int64_t n, const std::vector<std::int64_t>& list_offsets,
                 const std::vector<Neighbor>& lists) {
  // Counting sort of both directions of every listed pair, then each row
  // sorted by target and its duplicates merged: O(n K log K), no global sort.
  std::vector<std::int64_t> count(static_cast<std::size_t>(n) + 1, 0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t t = list_offsets[i]; t < list_offsets[i + 1]; ++t)
      if (lists[t].index != i) {
        ++count[i + 1];
        ++count[lists[t].index + 1];
      }
  std::partial_sum(count.begin(), count.end(), count.begin());
  struct Entry {
    std::int64_t target;
    double weight;
  };
  std::vector<Entry> entries(static_cast<std::size_t>(count[n]));
  std::vector<std::int64_t> fill(count.begin(), count.end() - 1);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t t = list_offsets[i]; t < list_offsets[i + 1]; ++t) {
      const auto& e = lists[t];
      if (e.index == i) continue;
      entries[fill[i]++] = {e.index, e.distance};
      entries[fill[e.index]++] = {i, e.distance};
    }
  Graph g;
  g.n = n;
  g.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
  g.targets.reserve(entries.size());
  g.weights.reserve(entries.size());
  g.listed.reserve(entries.size());
  for (std::int64_t i = 0; i < n; ++i) {
    auto first = entries.begin() + count[i], last = entries.begin() + count[i + 1];
    std::sort(first, last, [](const Entry& a, const Entry& b) {
      return a.target < b.target || (a.target == b.target && a.weight < b.weight);
    });
    for (auto it = first; it != last; ++it) {
      if (!g.targets.empty() && static_cast<std::int64_t>(g.targets.size()) > g.offsets[i] &&
          g.targets.back() == it->target) {
        g.listed.back() = 2;  // listed from both ends (weights sorted: the smaller kept)
        continue;
      }
      g.targets.push_back(it->target);
      g.weights.push_back(it->weight);
      g.listed.push_back(1);
    }
    g.offsets[i + 1] = static_cast<std::int64_t>(g.targets.size());
  }
  return g;
}

std::vector<std::int64_t> component_labels(const Graph& g) {
  std::vector<std::int64_t> label(static_cast<std::size_t>(g.n), -1), stack;
  std::int64_t next = 0;
  for (std::int64_t s = 0; s < g.n; ++s) {
    if (label[s] >= 0) continue;
    label[s] = next;
    stack.assign(1, s);
    while (!stack.empty()) {
      const std::int64_t v = stack.back();
      stack.pop_back();
      for (std::int64_t t = g.offsets[v]; t < g.offsets[v + 1]; ++t)
        if (label[g.targets[t]] < 0) {
          label[g.targets[t]] = next;
          stack.push_back(g.targets[t]);
        }
    }
    ++next;
  }
  return label;
}

GraphStats graph_stats(const Graph& g) {
  GraphStats s;
  s.edges = g.edge_count();
  const auto label = component_labels(g);
  for (std::int64_t l : label) {
    if (l >= static_cast<std::int64_t>(s.component_sizes.size()))
      s.component_sizes.resize(static_cast<std::size_t>(l) + 1, 0);
    ++s.component_sizes[l];
  }
  s.components = static_cast<std::int64_t>(s.component_sizes.size());
  if (g.n > 0) {
    s.min_degree = s.max_degree = g.degree(0);
    for (std::int64_t i = 1; i < g.n; ++i) {
      s.min_degree = std::min(s.min_degree, g.degree(i));
      s.max_degree = std::max(s.max_degree, g.degree(i));
    }
  }
  return s;
}

}  // namespace kembed::graph
