#pragma once
/// @file The neighbourhood graph of points, computed in parallel: each rank
/// selects the neighbours of its block of rows against all points, streamed
/// in chunks, and the symmetrized graph is replicated on every rank.
#include <cstdint>
#include <string>
#include <vector>

#include "kembed/core/index_range.hpp"
#include "kembed/graph/graph.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/kernel/distances.hpp"

namespace kembed::graph {

/// Which neighbours join a point: its K nearest or all within a radius.
struct NeighborSettings {
  int neighbors = 0;  ///< K >= 1; 0 when `radius` is used instead
  double radius = 0;  ///< > 0 when neighbors == 0: every point at distance <= radius
  kernel::Metric metric = kernel::Metric::euclidean;
  std::int64_t chunk_rows = 4096;  ///< rows of the other points held at a time
  std::string describe() const;    ///< "--neighbors 10" or "--radius 0.5"
};

/// The rows [begin, end) whose neighbours rank `rank` of `ranks` selects
/// (contiguous blocks, the first n mod ranks one row longer).
IndexRange neighbor_rows(std::int64_t n, int rank, int ranks);

/// Neighbour lists of a block of query rows: row rows.begin + r lists
/// lists[offsets[r] .. offsets[r+1]), nearest first.
struct NeighborLists {
  IndexRange rows;
  std::vector<std::int64_t> offsets;
  std::vector<Neighbor> lists;
};

/// Collective: the neighbours among the rows of `points` of this rank's
/// block of rows of `queries` (neighbor_rows(queries.rows(), ...)), selected
/// as neighborhood_graph does; with `same_set` (queries is points) a row is
/// not its own neighbour. @pre settings checked, K <= points.rows()
NeighborLists nearest_neighbors(io::MatrixFile& queries, io::MatrixFile& points,
                                const NeighborSettings& settings, bool same_set, const Comm& comm);

/// The K nearest neighbours of point i other than itself, nearest first;
/// equal distances are broken by the lower index, so the selection is exact
/// and the same on any number of ranks. With a radius: every other point
/// within it, ascending by (distance, index).
/// Collective: the symmetrized neighbourhood graph of the n points in
/// `points` under settings.metric, the same on every rank. Each rank holds
/// its rows, one chunk of the others and K neighbours per row (memory
/// (n / ranks + chunk_rows) d + n K). Agreed errors: K < 1 or K >= n, a
/// radius that is not positive and finite, a cosine distance of a zero row,
/// a distance that is not finite.
Graph neighborhood_graph(io::MatrixFile& points, const NeighborSettings& settings,
                         const Comm& comm);

}  // namespace kembed::graph
