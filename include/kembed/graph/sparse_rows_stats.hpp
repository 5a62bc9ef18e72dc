#pragma once
/// @file What run.json reports about a graph held as distributed rows
/// (SparseRows): edges, degrees and connected components, found without
/// gathering the graph.
#include "kembed/graph/graph.hpp"
#include "kembed/graph/sparse_rows.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::graph {

/// Collective: the statistics of the undirected graph whose edges are the
/// off-diagonal non-zeros of the symmetric `w` (identical on every rank, and
/// equal to graph_stats of the same graph held whole). Components: each rank
/// joins the ends of its own rows' edges in a union-find forest over all n
/// vertices, and the forests are merged pairwise up a binary tree of ranks
/// (log2 P exchanges of n labels); memory O(n) per rank, not O(edges).
GraphStats graph_stats(const SparseRows& w, const Comm& comm);

}  // namespace kembed::graph
