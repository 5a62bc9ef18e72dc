#pragma once
/// @file Isomap: neighbourhood graph -> geodesic distances (Dijkstra) ->
/// classical MDS of them (double center -> solve -> Y = V sqrt(Lambda)).
#include "kembed/graph/connect.hpp"
#include "kembed/graph/graph.hpp"
#include "kembed/graph/neighbors.hpp"
#include "kembed/spectral/mds.hpp"

namespace kembed::spectral {

struct IsomapSettings {
  graph::NeighborSettings graph;  ///< --neighbors K or --radius R, --metric
  /// --connect: join the graph's components by their shortest edges
  /// (graph::connect_components) instead of failing.
  bool connect = false;
  int components = 2;
  Solver solver = Solver::evd;
  int block_size = 64;
  KrylovSettings krylov;
  double max_memory_per_rank = 0;  ///< bytes; 0: the node's available memory / its ranks
};

struct IsomapResult {
  /// MDS of the geodesic distances G: B = -1/2 J G^(2) J, its eigenvalues,
  /// residuals, solver, embedding (rank 0) and the figures of an MDS fit.
  MdsResult mds;
  graph::GraphStats graph;               ///< of the neighbourhood graph, before --connect
  std::vector<graph::Edge> added_edges;  ///< by --connect, in the order they join
  /// scikit-learn's Isomap.reconstruction_error():
  /// sqrt(||B||_F^2 - sum_k lambda_k^2) / n.
  double reconstruction_error = 0;
};

/// Collective over the grid: Isomap of the n points in `points`. The graph
/// is replicated (n K entries per rank); each rank computes only its block
/// of the n x n geodesic matrix. A graph with several connected components
/// is joined (settings.connect) or an agreed Error naming their number and sizes. Other errors as
/// neighborhood_graph and fit_mds.
/// Empty when Isomap of n points (`source` names them) can be asked with
/// `settings`, else why not: --components at least n, --neighbors at least
/// n (a point is not its own neighbour). fit_isomap checks with it first,
/// and `kembed plan isomap` before it prints anything.
std::string isomap_request_error(std::int64_t n, const IsomapSettings& settings,
                                 const std::string& source);

/// The plan's shape of Isomap of n points with d features on a P x Q grid
/// (ProblemShape::geodesic_lists): n K listed neighbours with --neighbors K;
/// with a radius, `listed` (the graph's 2 x edges once it is built, the
/// lists of a radius being symmetric; before, 0: the 2 (n - 1) of a
/// connected graph, the least it can have). fit_isomap's memory guard,
/// its --dry-run and `kembed plan isomap` all plan with it.
ProblemShape isomap_problem_shape(std::int64_t n, std::int64_t d, int nprow, int npcol,
                                  const IsomapSettings& settings, std::int64_t listed = 0);

IsomapResult fit_isomap(io::MatrixFile& points, const BlacsGrid& grid,
                        const IsomapSettings& settings, PhaseTimer& timer);

/// What placing new points with an Isomap fit needs besides V_k and the
/// training points (both read in parallel from files).
struct IsomapProjection {
  MdsProjection mds;              ///< n, d, k, eigenvalues, row means of G^(2), g (no metric)
  graph::NeighborSettings graph;  ///< the fit's graph settings
  bool connect = false;           ///< the fit joined the components (--connect)
};

/// Collective: the m x k coordinates (row-major, rank 0 only) of the m new
/// points in `points`, as scikit-learn's Isomap.transform: the geodesic
/// distance of a new point to training point j is the shortest path through
/// its K nearest training points (or those within the radius), along the
/// training graph (rebuilt from `training`), then Gower's formula
/// (gower_project). Each rank computes the rows of its block of the m x n
/// geodesic matrix (every process column the same rows). Agreed errors: a
/// column count unlike the fit's, a new point with no training point within
/// the radius.
std::vector<double> isomap_transform(const IsomapProjection& model, io::MatrixFile& training,
                                     io::MatrixFile& vectors, io::MatrixFile& points,
                                     const BlacsGrid& grid, int block_size);

/// The agreed error message for a graph with several components ("" for one);
/// `connect_hint`: also suggests --connect.
std::string disconnected_graph_message(const graph::GraphStats& stats,
                                       const graph::NeighborSettings& settings,
                                       const std::string& method, bool connect_hint = false);

}  // namespace kembed::spectral
