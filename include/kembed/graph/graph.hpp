#pragma once
/// @file An undirected weighted graph held whole on every rank (compressed
/// rows), built by symmetrizing per-vertex neighbour lists.
#include <cstdint>
#include <vector>

namespace kembed::graph {

/// One entry of a vertex's neighbour list.
struct Neighbor {
  std::int64_t index = 0;  ///< the neighbour, 0-based
  double distance = 0;     ///< its distance from the vertex
};

/// Undirected graph in compressed rows: the neighbours of vertex i are
/// targets[offsets[i] .. offsets[i+1]), ascending, each edge stored in both
/// directions with the same weight.
struct Graph {
  std::int64_t n = 0;
  std::vector<std::int64_t> offsets;  ///< n + 1 entries
  std::vector<std::int64_t> targets;
  std::vector<double> weights;  ///< edge lengths (distances)
  /// 2 when both endpoints list each other, 1 when only one does (the
  /// kNN affinity of scikit-learn weighs these 1 and 1/2).
  std::vector<std::uint8_t> listed;
  std::int64_t edge_count() const { return static_cast<std::int64_t>(targets.size()) / 2; }
  std::int64_t degree(std::int64_t i) const { return offsets[i + 1] - offsets[i]; }
};

/// The symmetrized graph of directed lists: vertex i lists
/// lists[list_offsets[i] .. list_offsets[i+1]); i and j are joined when either
/// lists the other (weight: the smaller of the two distances). Self entries
/// are ignored. Deterministic: the same input gives the same graph everywhere.
Graph symmetrize(std::int64_t n, const std::vector<std::int64_t>& list_offsets,
                 const std::vector<Neighbor>& lists);

/// Connected components: label of each vertex, numbered 0, 1, ... in the
/// order of each component's smallest vertex.
std::vector<std::int64_t> component_labels(const Graph& g);

/// What run.json reports about a graph.
struct GraphStats {
  std::int64_t edges = 0;       ///< undirected edges
  std::int64_t components = 0;  ///< connected components
  std::int64_t min_degree = 0, max_degree = 0;
  std::vector<std::int64_t> component_sizes;  ///< by label
};

GraphStats graph_stats(const Graph& g);

}  // namespace kembed::graph
