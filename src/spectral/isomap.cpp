#include "kembed/spectral/isomap.hpp"

#include <algorithm>
#include <cmath>

#include "kembed/core/error.hpp"
#include "kembed/graph/shortest_paths.hpp"

namespace kembed::spectral {

std::string disconnected_graph_message(const graph::GraphStats& stats,
                                       const graph::NeighborSettings& settings,
                                       const std::string& method, bool connect_hint) {
  if (stats.components <= 1) return "";
  auto sizes = stats.component_sizes;
  std::sort(sizes.rbegin(), sizes.rend());
  std::string list;
  for (std::size_t c = 0; c < std::min<std::size_t>(sizes.size(), 5); ++c)
    list += (c ? ", " : "") + std::to_string(sizes[c]);
  if (sizes.size() > 5) list += ", ...";
  return "the neighbourhood graph (" + settings.describe() + ") has " +
         std::to_string(stats.components) + " connected components (sizes " + list + "); " +
         method + " needs a connected graph: increase " +
         (settings.neighbors > 0 ? "--neighbors" : "--radius") +
         (connect_hint ? ", or join the components by their shortest edges with --connect" : "");
}

std::string isomap_request_error(std::int64_t n, const IsomapSettings& settings,
                                 const std::string& source) {
  const int k = settings.components;
  if (k > n - 1)
    return "--components " + std::to_string(k) + " must be below the number of points (" +
           std::to_string(n) + ") in " + source;
  if (settings.graph.neighbors >= n)
    return "--neighbors " + std::to_string(settings.graph.neighbors) +
           " must be below the number of points (" + std::to_string(n) + ") in " + source +
           " (a point is not its own neighbour)";
  return "";
}

ProblemShape isomap_problem_shape(std::int64_t n, std::int64_t d, int nprow, int npcol,
                                  const IsomapSettings& settings, std::int64_t listed) {
  ProblemShape shape{n, d, settings.components, nprow, npcol, settings.block_size,
                     settings.solver};
  // A radius's graph, before it is built: at least the 2 (n - 1) listings
  // of a connected one (a radius lists each edge from both ends).
  shape.geodesic_lists = settings.graph.neighbors > 0
                             ? n * std::int64_t{settings.graph.neighbors}
                             : std::max(listed, 2 * (n - 1));
  return shape;
}

IsomapResult fit_isomap(io::MatrixFile& points, const BlacsGrid& grid,
                        const IsomapSettings& settings, PhaseTimer& timer) {
  const Comm& comm = grid.comm();
  const std::int64_t n = points.rows();
  const int k = settings.components, nb = settings.block_size;
  agree(comm, isomap_request_error(n, settings, points.path()));
  IsomapResult result;
  MdsResult& mds = result.mds;
  mds.n = n;
  mds.d = points.cols();
  // With --neighbors K the graph's size is bounded before it is built; with
  // a radius it is known after, and the solve is checked again then.
  mds.memory = check_memory(
      isomap_problem_shape(n, mds.d, grid.nprow(), grid.npcol(), settings),
      settings.max_memory_per_rank, comm);

  timer.start("graph");
  graph::Graph g = graph::neighborhood_graph(points, settings.graph, comm);
  result.graph = graph::graph_stats(g);
  if (settings.graph.neighbors == 0)
    mds.memory = check_memory(isomap_problem_shape(n, mds.d, grid.nprow(), grid.npcol(),
                                                   settings, 2 * g.edge_count()),
                              settings.max_memory_per_rank, comm);
  if (settings.connect)
    result.added_edges = graph::connect_components(g, points, settings.graph, comm);
  else
    agree(comm, disconnected_graph_message(result.graph, settings.graph, "Isomap", true));

  timer.start("geodesics");
  DistMatrix b(grid, n, n, nb, nb);
  graph::fill_geodesic_distances(g, b);
  embed_distances(b, {k, settings.solver, settings.krylov}, timer, mds,
                  [&](DistMatrix& a) { graph::fill_geodesic_distances(g, a); });

  double kept = 0;
  for (double v : mds.eigenvalues) kept += v * v;
  const double f = mds.frobenius_norm;
  result.reconstruction_error = std::sqrt(std::max(0.0, f * f - kept)) / double(n);
  return result;
}

std::vector<double> isomap_transform(const IsomapProjection& model, io::MatrixFile& training,
                                     io::MatrixFile& vectors, io::MatrixFile& points,
                                     const BlacsGrid& grid, int block_size) {
  const Comm& comm = grid.comm();
  const std::int64_t m = points.rows(), n = model.mds.n;
  std::string error;
  if (points.cols() != model.mds.d)
    error = points.path() + ": has " + std::to_string(points.cols()) +
            " columns, but the model was fitted on points with " + std::to_string(model.mds.d) +
            " features";
  else if (training.rows() != n || training.cols() != model.mds.d)
    error = training.path() + ": the training points have the wrong shape";
  else if (vectors.rows() != n || vectors.cols() != model.mds.k)
    error = vectors.path() + ": eigenvector matrix has the wrong shape";
  agree(comm, error);

  graph::Graph g = graph::neighborhood_graph(training, model.graph, comm);
  if (model.connect) graph::connect_components(g, training, model.graph, comm);
  // Every new point's neighbours among the training points, on every rank (m K entries).
  const graph::NeighborLists mine =
      graph::nearest_neighbors(points, training, model.graph, false, comm);
  std::vector<std::int64_t> counts;
  for (std::size_t r = 0; r + 1 < mine.offsets.size(); ++r)
    counts.push_back(mine.offsets[r + 1] - mine.offsets[r]);
  for (std::size_t r = 0; r < counts.size() && error.empty(); ++r)
    if (counts[r] == 0)
      error = points.path() + ": row " + std::to_string(mine.rows.begin + std::int64_t(r) + 1) +
              " has no training point within " + model.graph.describe();
  agree(comm, error);
  const auto all_counts = comm.allgatherv(counts);
  const auto all_lists = comm.allgatherv(mine.lists);
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(m) + 1, 0);
  for (std::int64_t i = 0; i < m; ++i) offsets[i + 1] = offsets[i] + all_counts[i];

  DistMatrix gx(grid, m, n, block_size, block_size);
  std::vector<double> dist;
  for (int li = 0; li < gx.local_rows(); ++li) {
    const std::int64_t i = gx.row_dist().to_global(li);
    const std::vector<graph::Neighbor> sources(all_lists.begin() + offsets[i],
                                               all_lists.begin() + offsets[i + 1]);
    graph::shortest_paths_from(g, sources, dist);
    for (int lj = 0; lj < gx.local_cols(); ++lj)
      gx.local(li, lj) = dist[gx.col_dist().to_global(lj)];
  }
  return gower_project(model.mds, gx, vectors, block_size);
}

}  // namespace kembed::spectral
