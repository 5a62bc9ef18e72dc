#include "kembed/approx/landmark_isomap.hpp"

#include <algorithm>
#include <cmath>

#include "kembed/approx/landmarks.hpp"
#include "kembed/core/error.hpp"
#include "kembed/graph/geodesic_search.hpp"
#include "kembed/graph/landmark_geodesics.hpp"
#include "kembed/io/format_double.hpp"
#include "kembed/io/synthetic.hpp"
#include "kembed/kernel/distance_checks.hpp"
#include "kembed/spectral/isomap.hpp"
#include "kembed/spectral/memory_plan.hpp"

namespace kembed::approx {

namespace {

// Collective: this rank's rows (io::block_of_rows, the split the sign
// convention uses; graph::neighbor_rows, which split the geodesics, is the
// same) of the triangulated embedding from its rows x M geodesic distances
// (overwritten); an agreed Error where one is too large to square.
std::vector<double> triangulate_geodesics(std::vector<double>& geodesics, std::int64_t count,
                                          const LandmarkModel& model, const std::string& source,
                                          const Comm& comm) {
  const IndexRange mine = io::block_of_rows(count, comm.rank(), comm.size());
  std::vector<double> local(std::size_t(mine.size()) * model.k);
  collectively(comm, [&] {
    triangulate_rows(model, geodesics, false, mine.begin, source, local.data());
  });
  return local;
}

// The request checks of landmark Isomap, the same on every rank.
std::string landmark_isomap_request_error(std::int64_t n, const LandmarkIsomapSettings& s,
                                          const std::string& source) {
  spectral::IsomapSettings exact;
  exact.graph = s.graph;
  exact.components = s.components;
  std::string error = spectral::isomap_request_error(n, exact, source);
  if (!error.empty()) return error;
  try {
    check_landmark_request(n, s.landmarks, s.components);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Collective: the fit from the landmark geodesics computed twice, never
// held: Dijkstra from this rank's landmarks for their M x M block, the
// landmark configuration, then Dijkstra again, each landmark's column
// (squared, centred by delta_mean_l) added into the n x k sums
// y_a = -1/2 sum_l L#[:, l] (g_al^2 - delta_mean_l), the triangulation of
// triangulate_rows taken landmark by landmark; one sum over the ranks.
void recomputed_landmark_isomap(const graph::Graph& g, const std::string& path, const Comm& comm,
                                PhaseTimer& timer, LandmarkMdsResult& r) {
  LandmarkModel& model = r.model;
  const std::int64_t n = r.n, m = model.m;
  const int k = model.k;
  const IndexRange sources = graph::neighbor_rows(m, comm.rank(), comm.size());
  timer.start("geodesics");
  graph::GeodesicSearch search(g);
  std::vector<double> own;
  own.reserve(std::size_t(sources.size() * m));
  for (std::int64_t l = sources.begin; l < sources.end; ++l) {
    search.run(r.landmark_rows[l]);
    for (std::int64_t row : r.landmark_rows) own.push_back(search.distance(row));
  }
  timer.start("landmark_mds");
  std::vector<double> delta = comm.allgatherv(own);
  own = {};
  collectively(comm, [&] {
    square_landmark_distances(delta, m, "geodesic distances among the landmarks of " + path);
  });
  fit_landmark_configuration(delta, comm, r);
  delta = {};

  timer.start("triangulate");
  std::vector<double> sums(std::size_t(n) * k, 0.0);
  const double limit = kernel::largest_squarable_distance(m);
  collectively(comm, [&] {
    for (std::int64_t l = sources.begin; l < sources.end; ++l) {
      search.run(r.landmark_rows[l]);
      for (std::int64_t a = 0; a < n; ++a) {
        const double dist_a = search.distance(a);
        if (!(dist_a <= limit))
          throw Error("geodesic distances of " + path + " to the landmarks: point " +
                      std::to_string(a + 1) + " is " + io::format_double(dist_a) +
                      " from landmark row " + std::to_string(r.landmark_rows[l] + 1) +
                      ": landmark Isomap squares the distances, which overflows above " +
                      io::format_double(limit) + " (values too large; rescale the data)");
        const double c = -0.5 * (dist_a * dist_a - model.delta_mean[l]);
        for (int j = 0; j < k; ++j)
          sums[std::size_t(a) * k + j] += model.pseudo_inverse[std::size_t(j) * m + l] * c;
      }
    }
  });
  comm.sum_in_place(sums);
  const IndexRange mine = io::block_of_rows(n, comm.rank(), comm.size());
  std::vector<double> local(sums.begin() + mine.begin * k, sums.begin() + mine.end * k);
  sums = {};
  sign_landmark_embedding(local, mine.begin, comm, model);
  timer.start("gather");
  r.embedding = comm.gatherv(local);
  r.scaled_eigenvalues = r.eigenvalues;
  for (double& v : r.scaled_eigenvalues) v *= double(n) / double(m);
}

}  // namespace

double landmark_isomap_memory(std::int64_t n, std::int64_t d, std::int64_t lists,
                              std::int64_t edges, std::int64_t m, int k, int ranks,
                              GeodesicStorage storage) {
  const int p = std::max(ranks, 1);
  const double rows = std::ceil(double(n) / p), sources = std::ceil(double(m) / p);
  // Before the geodesics: the neighbour search, then the graph and its build.
  const spectral::ReplicatedGraphBytes graph = spectral::replicated_graph_bytes(n, d, lists, p);
  const double build = std::max(graph.search, graph.held + graph.build);
  // Then, beside the graph: the searches' renumbered copy of it and, stored,
  // the rows x M result and per round of landmark_geodesics its sends,
  // receives and the copy MPI makes (measured); recomputed, the n x k sums.
  const double search = graph::GeodesicSearch::bytes(n, 2 * edges);
  const double batch = std::max(1.0, std::floor(double(graph::kGeodesicRoundValues) /
                                                std::max(double(n), 1.0)));
  const double round = std::min(sources, batch) * double(n);
  const double held = storage == GeodesicStorage::recomputed ? double(n) * k
                                                             : rows * double(m) + 3.0 * round;
  const double landmarks = 8.0 * (3.0 * double(m) * double(m) + double(k) * double(m) +
                                  rows * double(k) + 2.0 * double(n) * k);
  const double geodesics = graph.held + search + 8.0 * held + landmarks;
  return spectral::process_baseline_bytes() + std::max(build, geodesics);
}

LandmarkIsomapResult landmark_isomap(io::MatrixFile& points, const LandmarkIsomapSettings& s,
                                     const Comm& comm, PhaseTimer& timer) {
  LandmarkIsomapResult result;
  LandmarkMdsResult& r = result.mds;
  const std::int64_t n = points.rows();
  r.n = n;
  result.d = points.cols();
  LandmarkModel& model = r.model;
  model.m = s.landmarks;
  model.k = s.components;
  agree(comm, landmark_isomap_request_error(n, s, points.path()));

  timer.start("graph");
  graph::Graph g = graph::neighborhood_graph(points, s.graph, comm);
  result.graph = graph::graph_stats(g);
  if (s.connect)
    result.added_edges = graph::connect_components(g, points, s.graph, comm);
  else
    agree(comm, spectral::disconnected_graph_message(result.graph, s.graph, "Isomap", true));
  const std::int64_t edges = g.edge_count();
  // The lists the graph was built from, as exact Isomap plans them.
  spectral::IsomapSettings exact;
  exact.graph = s.graph;
  const std::int64_t lists =
      spectral::isomap_problem_shape(n, result.d, 1, 1, exact, 2 * edges).geodesic_lists;
  r.memory_limit = s.max_memory_per_rank > 0 ? s.max_memory_per_rank
                                             : spectral::available_memory_per_rank(comm);
  const auto bytes = [&](GeodesicStorage storage, int ranks) {
    return landmark_isomap_memory(n, result.d, lists, edges, model.m, model.k, ranks, storage);
  };
  result.geodesics = s.geodesics;
  if (s.geodesics == GeodesicStorage::automatic)
    result.geodesics = bytes(GeodesicStorage::stored, comm.size()) <= r.memory_limit
                           ? GeodesicStorage::stored
                           : GeodesicStorage::recomputed;
  const auto bytes_for = [&](int ranks) { return bytes(result.geodesics, ranks); };
  r.memory_estimate = bytes_for(comm.size());
  agree(comm, spectral::streamed_shortfall(bytes_for, comm.size(), r.memory_limit));

  timer.start("landmarks");
  r.landmark_rows = uniform_landmarks(n, model.m, s.seed);
  if (result.geodesics == GeodesicStorage::recomputed) {
    recomputed_landmark_isomap(g, points.path(), comm, timer, r);
    return result;
  }

  timer.start("geodesics");
  std::vector<double> geodesics = graph::landmark_geodesics(g, r.landmark_rows, {n, {}, {}}, comm);
  g = {};

  timer.start("landmark_mds");
  // The rows of the landmarks among this rank's rows, in landmark order;
  // the ranks' rows in rank order are all M, ascending.
  const IndexRange mine = io::block_of_rows(n, comm.rank(), comm.size());
  std::vector<double> own;
  for (std::int64_t row : r.landmark_rows)
    if (row >= mine.begin && row < mine.end)
      own.insert(own.end(), geodesics.begin() + (row - mine.begin) * model.m,
                 geodesics.begin() + (row - mine.begin + 1) * model.m);
  std::vector<double> delta = comm.allgatherv(own);
  own = {};
  collectively(comm, [&] {
    square_landmark_distances(delta, model.m,
                              "geodesic distances among the landmarks of " + points.path());
  });
  fit_landmark_configuration(delta, comm, r);
  delta = {};

  timer.start("triangulate");
  const std::string source = "geodesic distances of " + points.path() + " to the landmarks";
  std::vector<double> local = triangulate_geodesics(geodesics, n, model, source, comm);
  geodesics = {};
  sign_landmark_embedding(local, mine.begin, comm, model);
  timer.start("gather");
  r.embedding = comm.gatherv(local);
  r.scaled_eigenvalues = r.eigenvalues;
  for (double& v : r.scaled_eigenvalues) v *= double(n) / double(model.m);
  return result;
}

std::vector<double> landmark_isomap_transform(const LandmarkIsomapProjection& p,
                                              io::MatrixFile& training, io::MatrixFile& points,
                                              const Comm& comm) {
  const std::int64_t count = points.rows();
  std::string error;
  if (points.cols() != training.cols())
    error = points.path() + ": has " + std::to_string(points.cols()) +
            " columns, but the model was fitted on points with " +
            std::to_string(training.cols()) + " features";
  agree(comm, error);

  graph::Graph g = graph::neighborhood_graph(training, p.graph, comm);
  if (p.connect) graph::connect_components(g, training, p.graph, comm);
  // Every new point's neighbours among the training points, on every rank.
  const graph::NeighborLists mine = graph::nearest_neighbors(points, training, p.graph, false, comm);
  std::vector<std::int64_t> counts;
  for (std::size_t a = 0; a + 1 < mine.offsets.size(); ++a)
    counts.push_back(mine.offsets[a + 1] - mine.offsets[a]);
  for (std::size_t a = 0; a < counts.size() && error.empty(); ++a)
    if (counts[a] == 0)
      error = points.path() + ": row " + std::to_string(mine.rows.begin + std::int64_t(a) + 1) +
              " has no training point within " + p.graph.describe();
  agree(comm, error);
  graph::GraphEntries targets;
  targets.count = count;
  const std::vector<std::int64_t> all_counts = comm.allgatherv(counts);
  targets.entries = comm.allgatherv(mine.lists);
  targets.offsets.assign(static_cast<std::size_t>(count) + 1, 0);
  for (std::int64_t a = 0; a < count; ++a)
    targets.offsets[a + 1] = targets.offsets[a] + all_counts[a];

  std::vector<double> geodesics = graph::landmark_geodesics(g, p.landmark_rows, targets, comm);
  g = {};
  const std::string source = "geodesic distances of " + points.path() + " to the landmarks";
  return comm.gatherv(triangulate_geodesics(geodesics, count, p.model, source, comm));
}

}  // namespace kembed::approx
