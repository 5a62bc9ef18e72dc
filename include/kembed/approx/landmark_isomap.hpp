#pragma once
/// @file Landmark Isomap (de Silva and Tenenbaum, 2003): the neighbourhood
/// graph exact Isomap builds, shortest paths from M landmarks only (each
/// rank runs Dijkstra from its share), landmark MDS of the M x M geodesic
/// distances and triangulation of every point from its M geodesic distances.
/// Time O(M (E + n) log n / P) for the paths instead of O(n (E + n) log n / P);
/// memory O(n K) for the replicated graph plus O(M n / P) per rank for the
/// geodesics, or O(n k) when they are recomputed instead of held; the n x n
/// geodesic matrix never exists.
#include <cstdint>
#include <string>
#include <vector>

#include "kembed/approx/landmark_mds.hpp"
#include "kembed/core/phase_timer.hpp"
#include "kembed/graph/connect.hpp"
#include "kembed/graph/neighbors.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::approx {

/// How the M x n landmark geodesics are used: held (one Dijkstra per
/// landmark, M n / P values per rank plus the exchange's rounds) or
/// recomputed (a second Dijkstra per landmark whose distances go straight
/// into the triangulation sums: O(n k) per rank, twice the searches).
enum class GeodesicStorage { automatic, stored, recomputed };

struct LandmarkIsomapSettings {
  graph::NeighborSettings graph;  ///< --neighbors K or --radius R, --metric
  bool connect = false;           ///< --connect, as exact Isomap
  int components = 2;             ///< k
  std::int64_t landmarks = 0;     ///< M
  std::uint64_t seed = 0;         ///< landmark choice (uniform_landmarks)
  double max_memory_per_rank = 0; ///< bytes; 0: the node's available memory / its ranks
  /// automatic: stored when it fits in the memory limit, else recomputed.
  GeodesicStorage geodesics = GeodesicStorage::automatic;
};

/// What a landmark Isomap fit produced. `mds` holds what landmark MDS
/// reports (n, the landmark rows, eigenvalues of B_L and their n/M scaling,
/// the spectrum, the embedding on rank 0, memory estimate and limit); its
/// model triangulates distances (no metric, d = 0): the geodesic distances
/// of a point to the landmarks.
struct LandmarkIsomapResult {
  LandmarkMdsResult mds;
  std::int64_t d = 0;                    ///< coordinates of a point
  graph::GraphStats graph;               ///< of the neighbourhood graph, before --connect
  std::vector<graph::Edge> added_edges;  ///< by --connect, in the order they join
  GeodesicStorage geodesics = GeodesicStorage::stored;  ///< stored or recomputed, as run
};

/// Bytes the busiest of `ranks` ranks needs for landmark Isomap of n points
/// of d coordinates whose graph was built from `lists` listed neighbours (n K
/// with --neighbors K) into `edges` undirected edges, with M landmarks and k
/// components: the process baseline (spectral::process_baseline_bytes), then
/// the larger of the graph's search and build (spectral::replicated_graph_bytes)
/// and what the geodesics hold beside the graph: the searches' copy of it
/// (graph::GeodesicSearch::bytes), stored: the ceil(n/P) x M rows and three
/// buffers of one round of graph::landmark_geodesics, recomputed: the n x k
/// sums; and the landmarks' M x M matrix three times, L# and the gathered
/// n x k embedding twice.
double landmark_isomap_memory(std::int64_t n, std::int64_t d, std::int64_t lists,
                              std::int64_t edges, std::int64_t m, int k, int ranks,
                              GeodesicStorage storage);

/// Collective: landmark Isomap of the points in `points`. Checks, as agreed
/// Errors on every rank: the request (spectral::isomap_request_error,
/// check_landmark_request: k + 1 <= M <= n), a disconnected graph without
/// settings.connect (the message of exact Isomap), the memory of
/// landmark_isomap_memory against the limit (after the graph is built, with
/// its edge count), fewer than k positive eigenvalues of B_L. The landmarks
/// are uniform_landmarks(n, M, seed), as landmark MDS takes them; the
/// result is the same on any number of ranks (bit for bit when stored; to
/// round-off in the sums over the ranks' landmarks when recomputed). Phases:
/// graph, landmarks, geodesics, landmark_mds, triangulate, gather.
LandmarkIsomapResult landmark_isomap(io::MatrixFile& points, const LandmarkIsomapSettings& settings,
                                     const Comm& comm, PhaseTimer& timer);

/// What placing new points with a landmark Isomap fit needs besides the
/// training points: the fit's graph settings and its landmark model.
struct LandmarkIsomapProjection {
  graph::NeighborSettings graph;
  bool connect = false;
  std::vector<std::int64_t> landmark_rows;  ///< 0-based rows of the training points, ascending
  LandmarkModel model;                      ///< triangulates geodesic distances (no metric)
};

/// Collective: the m x k coordinates (row-major, rank 0 only) of the new
/// points in `points`: the training graph rebuilt from `training` (and
/// joined as the fit joined it), each new point's K nearest training points
/// (or those within the radius), its geodesic distance to landmark l the
/// shortest over them of edge + geodesic distance of that training point to
/// l, then triangulation. A training point is its own nearest training point
/// (at distance 0, the others being graph edges), so the training points
/// get their fitted coordinates back. Agreed errors: a column count unlike the training points', a new point
/// with no training point within the radius.
std::vector<double> landmark_isomap_transform(const LandmarkIsomapProjection& model,
                                              io::MatrixFile& training, io::MatrixFile& points,
                                              const Comm& comm);

}  // namespace kembed::approx
