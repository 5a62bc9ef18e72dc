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

/// How the neighbours are found; both give the same lists, bit for bit.
enum class NeighborSearch {
  automatic,  ///< the k-d tree where it applies (kd_tree_applies), else the scan
  tree,       ///< the k-d tree wherever the metric allows it
  brute,      ///< every pair, the points streamed in chunks
};

/// Which neighbours join a point: its K nearest or all within a radius.
struct NeighborSettings {
  int neighbors = 0;  ///< K >= 1; 0 when `radius` is used instead
  double radius = 0;  ///< > 0 when neighbors == 0: every point at distance <= radius
  kernel::Metric metric = kernel::Metric::euclidean;
  std::int64_t chunk_rows = 4096;  ///< rows of the other points held at a time (scan)
  NeighborSearch search = NeighborSearch::automatic;
  std::string describe() const;    ///< "--neighbors 10" or "--radius 0.5"
};

/// The rows [begin, end) whose neighbours rank `rank` of `ranks` selects
/// (contiguous blocks, the first n mod ranks one row longer).
IndexRange neighbor_rows(std::int64_t n, int rank, int ranks);

/// Dimensions up to which the automatic search builds a k-d tree. Measured
/// on Gaussian points (kembed generate --dataset gaussian, n = 20,000, K = 9,
/// 2 ranks, kembed_bench_knn search; commit c130e3e, load 4): tree against
/// scan 0.29 against 1.31 s at d = 4, 0.61 against 1.75 s at d = 8, 2.63
/// against 1.98 s at d = 12, 5.82 against 2.57 s at d = 16. Points of low
/// intrinsic dimension favour the tree further (swiss roll, d = 3: 0.47 s
/// against 161 s at n = 100,000), as does a larger n.
inline constexpr int kTreeMaxDims = 8;

/// Whether nearest_neighbors uses the k-d tree for points of dimension d:
/// the metric prunes (KdTree::supports) and the search is `tree`, or
/// `automatic` with d <= kTreeMaxDims.
bool kd_tree_applies(const NeighborSettings& settings, std::int64_t d);

/// Neighbour lists of a block of query rows: row rows.begin + r lists
/// lists[offsets[r] .. offsets[r+1]), nearest first.
struct NeighborLists {
  IndexRange rows;
  std::vector<std::int64_t> offsets;
  std::vector<Neighbor> lists;
  /// The points in the k-d tree's order (empty when the scan ran): points
  /// near in it are near in space, the same on every rank and rank count.
  std::vector<std::int64_t> spatial_order;
};

/// Collective: the neighbours among the rows of `points` of this rank's
/// block of rows of `queries` (neighbor_rows(queries.rows(), ...)), selected
/// as neighborhood_graph does; with `same_set` (queries is points) a row is
/// not its own neighbour. Where kd_tree_applies, every rank reads all of
/// `points` into a k-d tree (memory about 2 n d + n doubles while it is
/// built) and answers its own queries from it, unless a distance between
/// the points could overflow (then the scan runs and reports it); else the
/// scan holds this rank's queries and one chunk of points at a time.
/// @pre settings checked, K <= points.rows()
NeighborLists nearest_neighbors(io::MatrixFile& queries, io::MatrixFile& points,
                                const NeighborSettings& settings, bool same_set, const Comm& comm);

/// The K nearest neighbours of point i other than itself, nearest first;
/// equal distances are broken by the lower index, so the selection is exact
/// and the same on any number of ranks. With a radius: every other point
/// within it, ascending by (distance, index).
/// Collective: the symmetrized neighbourhood graph of the n points in
/// `points` under settings.metric, the same on every rank. Each rank holds
/// the search's memory (nearest_neighbors) and K neighbours per row of the
/// whole graph (n K). Agreed errors: K < 1 or K >= n, a
/// radius that is not positive and finite, a cosine distance of a zero row,
/// a distance that is not finite.
Graph neighborhood_graph(io::MatrixFile& points, const NeighborSettings& settings,
                         const Comm& comm);

}  // namespace kembed::graph
