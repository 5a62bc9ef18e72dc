#pragma once
/// @file A graph laid out for many single-source shortest-path searches
/// (landmark Isomap runs one per landmark): the vertices renumbered in
/// breadth-first order, so that a search's wavefront touches nearby memory,
/// 32-bit edge targets beside their lengths, and the heap and distances kept between searches.
#include <cstdint>
#include <vector>

#include "kembed/graph/graph.hpp"

namespace kembed::graph {

/// Dijkstra from one vertex at a time on a copy of a graph. The distances
/// equal shortest_paths_from's bit for bit: with non-negative weights and
/// rounding that is monotone, the computed distances are the unique
/// solution of d(v) = min over edges (u, v) of fl(d(u) + w), d(source) = 0,
/// whatever order the vertices are settled in.
class GeodesicSearch {
 public:
  /// Copies g (about 4 n + 12 E bytes besides the 8 (n + 1) of its offsets
  /// and the 12 n of the search's buffers; E = directed edges).
  /// @pre g.n < 2^32 (a graph held whole on every rank is far smaller),
  /// non-negative weights
  explicit GeodesicSearch(const Graph& g);

  /// Bytes a search on a graph of n vertices with `entries` directed edges
  /// (Graph::targets.size()) holds at its most, in its constructor: the
  /// offsets, the packed edges, the distances, the heap (reserved n), the
  /// heap slots, the renumbering and the breadth-first order it is made from.
  static double bytes(std::int64_t n, std::int64_t entries);

  /// Runs Dijkstra from vertex `source` (the graph's own numbering); the
  /// distances stay until the next search. O(E log_4 n).
  void run(std::int64_t source);

  /// The last search's distance to vertex v (the graph's numbering); +inf
  /// where no path exists.
  double distance(std::int64_t v) const { return dist_[std::size_t(position_[std::size_t(v)])]; }

  std::int64_t vertices() const { return static_cast<std::int64_t>(position_.size()); }

 private:
  void sift_up(std::uint32_t slot);
  void sift_down(std::uint32_t slot);

  std::vector<std::uint32_t> position_;  ///< graph vertex -> vertex here
  // An edge's length and target side by side, 12 bytes: a search reads
  // each vertex's edges once, from one stream rather than two (no change
  // measured at n = 40,000, where the edges take 5.5 MB; meant for graphs
  // of 10^6 points, 270 MB, where each vertex's edges miss the cache).
#pragma pack(push, 4)
  struct Edge {
    double weight;
    std::uint32_t target;
  };
#pragma pack(pop)
  std::vector<std::int64_t> offsets_;  ///< edges of vertex u: [offsets_[u], offsets_[u+1])
  std::vector<Edge> edges_;
  std::vector<double> dist_;         ///< by vertex here
  std::vector<std::uint32_t> heap_;  ///< 4-ary min-heap of vertices keyed by dist_
  std::vector<std::uint32_t> slot_;  ///< vertex -> its heap slot, or kOutside
};

}  // namespace kembed::graph
