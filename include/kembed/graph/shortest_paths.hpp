#pragma once
/// @file Geodesic (shortest-path) distances along a graph held on every rank.
#include <cstdint>
#include <vector>

#include "kembed/graph/graph.hpp"
#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::graph {

/// Lengths of the shortest paths from `source` to every vertex (Dijkstra
/// with a binary heap, O(E log V)); +inf where no path exists. `dist` is
/// resized to g.n. @pre non-negative weights
void shortest_paths_from(const Graph& g, std::int64_t source, std::vector<double>& dist);

/// The same from several sources at once, each at its starting distance
/// (a new point joined to its nearest vertices: the shortest path to v through
/// any of them). @pre non-negative distances
void shortest_paths_from(const Graph& g, const std::vector<Neighbor>& sources,
                         std::vector<double>& dist);

/// Fills the block of the n x n geodesic distance matrix `out` that this
/// rank owns, without communication. The matrix is symmetric, so a rank
/// runs Dijkstra from its local columns when the grid has at least as many
/// process columns as rows (else from its local rows): n / max(P, Q)
/// searches per rank, no rank holds more than its block.
/// @pre out is g.n x g.n, g connected (else entries are +inf)
void fill_geodesic_distances(const Graph& g, DistMatrix& out);

}  // namespace kembed::graph
