#pragma once
/// @file Joining the connected components of a neighbourhood graph by their
/// shortest inter-component edges (Isomap's --connect).
#include <cstdint>
#include <vector>

#include "kembed/graph/graph.hpp"
#include "kembed/graph/neighbors.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::graph {

/// An undirected edge, source < target (0-based vertices).
struct Edge {
  std::int64_t source = 0, target = 0;
  double length = 0;
};

/// Collective: joins the c connected components of g (built from `points`
/// under settings.metric) with the c - 1 edges of the minimum spanning tree
/// of the components: repeatedly the shortest edge between two points of
/// different components, ties to the lower (source, target), until one
/// component is left (Kruskal's order, computed by Boruvka rounds, each a
/// pass over all point pairs split across the ranks). scikit-learn (>= 1.2)
/// instead adds the shortest edge of every pair of components, c (c - 1) / 2
/// edges. Returns the added edges in the order they join, the same on every
/// rank; g gains them. @pre points passed neighborhood_graph's checks.
std::vector<Edge> connect_components(Graph& g, io::MatrixFile& points,
                                     const NeighborSettings& settings, const Comm& comm);

/// Adds edges (none already in g) to g in both directions; they count as
/// listed by neither endpoint (listed = 0).
void add_edges(Graph& g, const std::vector<Edge>& edges);

}  // namespace kembed::graph
