#pragma once
/// @file Rows of a sparse symmetric n x n matrix, each rank holding its own:
/// the 1-D block-cyclic rows of n in blocks of block_size over the ranks
/// (the layout of the Krylov solver's blocks), in compressed form. Built from
/// the per-rank neighbour lists, so no rank ever holds the whole graph.
#include <cstdint>
#include <vector>

#include "kembed/graph/neighbors.hpp"
#include "kembed/linalg/block_cyclic.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::graph {

/// This rank's rows of a sparse n x n matrix: local row li (global
/// rows.to_global(li)) holds columns[offsets[li] .. offsets[li+1]) (global
/// indices, ascending, no repeats) with their values.
struct SparseRows {
  BlockCyclic1D rows;
  std::vector<std::int64_t> offsets;  ///< rows.local_size() + 1 entries
  std::vector<std::int64_t> columns;
  std::vector<double> values;
  std::int64_t nonzeros() const { return static_cast<std::int64_t>(columns.size()); }
};

/// Collective: this rank's rows of W = (C + C^T) / 2 without its diagonal,
/// C_ij = 1 when row i lists j (scikit-learn's nearest_neighbors affinity:
/// w_ij = 1 when i and j list each other, 1/2 when one does), from every
/// rank's block of lists (nearest_neighbors). Each listed pair goes to the
/// owners of its two rows in one all-to-all exchange; memory per rank: its
/// lists, the pairs it sends and receives (16 bytes each) and its rows.
/// Deterministic: the same rows on any number of ranks. Self entries ignored.
/// With `label` (n entries, a permutation): the rows and columns of vertex
/// i are numbered label[i] instead (P W P^T; numbering the vertices in a
/// spatial order keeps a product's reads of X near each other in memory).
SparseRows symmetrized_rows(std::int64_t n, int block_size, const NeighborLists& lists,
                            const Comm& comm, const std::vector<std::int64_t>& label = {});

}  // namespace kembed::graph
