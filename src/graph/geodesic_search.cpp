#include "kembed/graph/geodesic_search.hpp"

#include <algorithm>
#include <limits>

#include "kembed/core/error.hpp"

namespace kembed::graph {

namespace {

constexpr std::uint32_t kOutside = std::numeric_limits<std::uint32_t>::max();

}  // namespace

GeodesicSearch::GeodesicSearch(const Graph& g) {
  const std::int64_t n = g.n;
  if (n >= std::int64_t{kOutside})
    throw Error("a graph of " + std::to_string(n) + " vertices is too large for 32-bit indices");
  // Breadth-first order, component by component from its lowest vertex:
  // neighbours get nearby numbers, so a search's frontier, its distances
  // and its edges stay in a narrow band of memory (the input order of the
  // points is arbitrary: at n = 40,000 the searches took 76% of landmark
  // Isomap's time, most of it waiting on cache misses).
  position_.assign(static_cast<std::size_t>(n), kOutside);
  std::vector<std::uint32_t> order;
  order.reserve(static_cast<std::size_t>(n));
  for (std::int64_t root = 0; root < n; ++root) {
    if (position_[root] != kOutside) continue;
    std::size_t head = order.size();
    position_[root] = static_cast<std::uint32_t>(order.size());
    order.push_back(static_cast<std::uint32_t>(root));
    for (; head < order.size(); ++head) {
      const std::uint32_t u = order[head];
      for (std::int64_t t = g.offsets[u]; t < g.offsets[u + 1]; ++t) {
        const std::int64_t v = g.targets[t];
        if (position_[v] != kOutside) continue;
        position_[v] = static_cast<std::uint32_t>(order.size());
        order.push_back(static_cast<std::uint32_t>(v));
      }
    }
  }
  offsets_.assign(static_cast<std::size_t>(n) + 1, 0);
  edges_.resize(g.targets.size());
  for (std::int64_t u = 0; u < n; ++u) {
    const std::uint32_t old = order[u];
    std::int64_t at = offsets_[u];
    for (std::int64_t t = g.offsets[old]; t < g.offsets[old + 1]; ++t, ++at) {
      edges_[at] = {g.weights[t], position_[g.targets[t]]};
    }
    offsets_[u + 1] = at;
  }
  dist_.resize(static_cast<std::size_t>(n));
  slot_.assign(static_cast<std::size_t>(n), kOutside);
  heap_.reserve(static_cast<std::size_t>(n));
}

double GeodesicSearch::bytes(std::int64_t n, std::int64_t entries) {
  const double per_vertex = double(sizeof(std::uint32_t)) * 4 + double(sizeof(double));
  return double(sizeof(std::int64_t)) * double(n + 1) + double(sizeof(Edge)) * double(entries) +
         per_vertex * double(n);
}

void GeodesicSearch::sift_up(std::uint32_t slot) {
  const std::uint32_t v = heap_[slot];
  const double key = dist_[v];
  while (slot > 0) {
    const std::uint32_t parent = (slot - 1) / 4;
    const std::uint32_t p = heap_[parent];
    if (!(key < dist_[p])) break;
    heap_[slot] = p;
    slot_[p] = slot;
    slot = parent;
  }
  heap_[slot] = v;
  slot_[v] = slot;
}

void GeodesicSearch::sift_down(std::uint32_t slot) {
  const std::uint32_t size = static_cast<std::uint32_t>(heap_.size());
  const std::uint32_t v = heap_[slot];
  const double key = dist_[v];
  for (;;) {
    const std::uint64_t first = std::uint64_t(slot) * 4 + 1;
    if (first >= size) break;
    const std::uint32_t last = static_cast<std::uint32_t>(std::min<std::uint64_t>(first + 4, size));
    std::uint32_t best = static_cast<std::uint32_t>(first);
    double best_key = dist_[heap_[best]];
    for (std::uint32_t c = best + 1; c < last; ++c) {
      const double ck = dist_[heap_[c]];
      if (ck < best_key) best = c, best_key = ck;
    }
    if (!(best_key < key)) break;
    heap_[slot] = heap_[best];
    slot_[heap_[slot]] = slot;
    slot = best;
  }
  heap_[slot] = v;
  slot_[v] = slot;
}

void GeodesicSearch::run(std::int64_t source) {
  std::fill(dist_.begin(), dist_.end(), std::numeric_limits<double>::infinity());
  // The heap is empty after every search, so every slot_ is kOutside.
  heap_.clear();
  const std::uint32_t s = position_[std::size_t(source)];
  dist_[s] = 0;
  heap_.push_back(s);
  slot_[s] = 0;
  const std::int64_t* offsets = offsets_.data();
  const Edge* edges = edges_.data();
  double* dist = dist_.data();
  std::uint32_t* slots = slot_.data();
  while (!heap_.empty()) {
    const std::uint32_t u = heap_.front();
    slots[u] = kOutside;
    const std::uint32_t back = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) {
      heap_.front() = back;
      sift_down(0);
    }
    // A vertex settled before u is never improved: fl(d(u) + w) >= d(u)
    // >= its distance, so only vertices still open enter or rise.
    const double du = dist[u];
    for (std::int64_t t = offsets[u]; t < offsets[u + 1]; ++t) {
      const std::uint32_t v = edges[t].target;
      const double alt = du + edges[t].weight;
      if (alt < dist[v]) {
        dist[v] = alt;
        if (slots[v] == kOutside) {
          heap_.push_back(v);
          sift_up(static_cast<std::uint32_t>(heap_.size() - 1));
        } else {
          sift_up(slots[v]);
        }
      }
    }
  }
}

}  // namespace kembed::graph
