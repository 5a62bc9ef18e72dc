#include "kembed/app/landmark_isomap_command.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "kembed/app/driver.hpp"
#include "kembed/app/graph_report.hpp"
#include "kembed/app/landmark_report.hpp"
#include "kembed/approx/landmark_isomap.hpp"
#include "kembed/core/error.hpp"
#include "kembed/core/memory.hpp"
#include "kembed/io/csv_writer.hpp"
#include "kembed/io/manifest.hpp"
#include "kembed/io/model.hpp"
#include "kembed/spectral/memory_plan.hpp"

namespace kembed::app {

namespace {

// The model: what triangulation needs (L#, the landmarks' mean squared
// geodesic distances), the landmark rows and the training points with the
// graph settings, from which transform rebuilds the graph.
void save_landmark_isomap_model(Run& run, const approx::LandmarkIsomapResult& result,
                                const graph::NeighborSettings& g, bool connect) {
  const approx::LandmarkMdsResult& r = result.mds;
  const approx::LandmarkModel& m = r.model;
  const std::string dir = run.staged_path("model");
  Json manifest = run.manifest_header();
  manifest["approximation"] = "landmark";
  manifest["n"] = r.n;
  manifest["d"] = result.d;
  manifest["k"] = m.k;
  manifest["landmarks"] = m.m;
  manifest["metric"] = kernel::metric_name(g.metric);
  if (g.neighbors > 0)
    manifest["neighbors"] = g.neighbors;
  else
    manifest["radius"] = g.radius;
  if (connect) manifest["connect"] = true;
  manifest["projection"] =
      "geodesic distances q to the landmarks (0-based rows landmark_rows of X) through the new "
      "point's neighbours among X along the graph of X, then triangulation: y = -1/2 "
      "landmark_pseudoinverse (q^2 - landmark_sq_distance_means)";
  std::optional<io::ModelWriter> writer;
  run.on_root([&] { writer.emplace(dir); });  // creates the directory X.npy goes to
  manifest["data_fingerprint_mix64sum"] = io::copy_to_npy(run.world(), run.input(), dir + "/X.npy");
  const std::vector<double> rows(r.landmark_rows.begin(), r.landmark_rows.end());
  run.on_root([&] {
    writer->add_written("X", r.n, result.d);
    writer->add_vector("landmark_rows", rows);
    writer->add("landmark_pseudoinverse", {m.k, m.m, m.pseudo_inverse});
    writer->add_vector("landmark_sq_distance_means", m.delta_mean);
    writer->add_vector("eigenvalues", r.eigenvalues);
    writer->finish(manifest);
  });
}

}  // namespace

LandmarkIsomapPlan landmark_isomap_memory_plan(std::int64_t n, std::int64_t d, int neighbors,
                                               std::int64_t m, int k, int ranks, double limit) {
  const std::int64_t edges = n * std::int64_t{neighbors};
  const auto bytes = [=](approx::GeodesicStorage storage, int p) {
    // n K lists, and as many undirected edges at most (none listed twice).
    return approx::landmark_isomap_memory(n, d, edges, edges, m, k, p, storage);
  };
  LandmarkIsomapPlan plan;
  plan.stored = bytes(approx::GeodesicStorage::stored, ranks);
  plan.recomputed = bytes(approx::GeodesicStorage::recomputed, ranks);
  plan.storage = plan.stored <= limit ? approx::GeodesicStorage::stored
                                      : approx::GeodesicStorage::recomputed;
  plan.bytes_for = [bytes, storage = plan.storage](int p) { return bytes(storage, p); };
  return plan;
}

po::options_description landmark_isomap_options() {
  po::options_description d("landmark Isomap");
  // clang-format off
  d.add_options()
      ("approx", po::value<std::string>(),
       "landmark: landmark Isomap (shortest paths from --landmarks M points only, their "
       "classical MDS, every point triangulated from its M geodesic distances; no n x n matrix)")
      ("landmarks", po::value<std::int64_t>(),
       "with --approx landmark: number of landmarks M, k + 1 <= M <= n (uniform sample, seeded "
       "by --seed)");
  // clang-format on
  return d;
}

bool wants_landmark_isomap(const po::variables_map& vm) {
  if (!vm.count("approx")) {
    if (vm.count("landmarks")) throw Error("--landmarks applies to --approx landmark");
    return false;
  }
  const std::string approx = vm["approx"].as<std::string>();
  if (approx != "landmark")
    throw Error("unknown --approx '" + approx + "' for isomap (expected landmark)");
  if (!vm.count("landmarks"))
    throw Error("--approx landmark needs --landmarks M (the number of landmarks)");
  if (vm["landmarks"].as<std::int64_t>() < 1)
    throw Error("--landmarks must be at least 1, got " +
                std::to_string(vm["landmarks"].as<std::int64_t>()));
  return true;
}

void run_landmark_isomap(const po::variables_map& vm, const Comm& world,
                         const graph::NeighborSettings& graph_settings, bool connect) {
  const InputOptions in(vm);
  const OutputOptions output(vm);
  const SolveOptions solve(vm);
  if (solve.dry_run)
    throw Error(
        "--dry-run plans the exact n x n fit; for --approx landmark use "
        "kembed plan isomap --approx landmark --landmarks M");
  refuse_exact_only_options(vm, "--approx landmark");
  const int k = solve.components;
  Job job("isomap", output, solve.layout, {in.input}, [&](const Comm& c) { return in.open(c); });
  drive(vm, world, job, [&](Run& run) {
    approx::LandmarkIsomapSettings settings;
    settings.graph = graph_settings;
    settings.connect = connect;
    settings.components = k;
    settings.landmarks = vm["landmarks"].as<std::int64_t>();
    settings.seed = solve.krylov.seed;
    settings.max_memory_per_rank = solve.max_memory_per_rank;
    // With --neighbors K the plan is made before the graph, as `kembed plan`
    // makes it, and its storage handed down (with a radius the fit plans
    // once the graph is built).
    if (graph_settings.neighbors > 0) {
      const double limit = settings.max_memory_per_rank > 0
                               ? settings.max_memory_per_rank
                               : spectral::available_memory_per_rank(world);
      const LandmarkIsomapPlan plan =
          landmark_isomap_memory_plan(run.input().rows(), run.input().cols(),
                                      graph_settings.neighbors, settings.landmarks, k,
                                      world.size(), limit);
      agree(world, spectral::streamed_shortfall(plan.bytes_for, world.size(), limit));
      settings.geodesics = plan.storage;
    }
    const approx::LandmarkIsomapResult result =
        approx::landmark_isomap(run.input(), settings, world, run.timer());
    const approx::LandmarkMdsResult& r = result.mds;

    run.timer().start("write");
    write_landmark_fit(run, r, k, "geodesic distances", "isomap", world);
    save_landmark_isomap_model(run, result, graph_settings, connect);

    Json& report = run.report;
    Json approximation;
    approximation["method"] = "landmark";
    approximation["landmarks"] = r.model.m;
    approximation["landmark_selection"] =
        "uniform without replacement (seeded, independent of the rank count)";
    approximation["seed"] = settings.seed;
    std::vector<std::int64_t> rows;
    for (std::int64_t row : r.landmark_rows) rows.push_back(row + 1);
    approximation["landmark_rows"] = rows;  // 1-based, as in every message
    const bool stored = result.geodesics == approx::GeodesicStorage::stored;
    approximation["geodesics"] = stored ? "stored" : "recomputed";
    approximation["geodesics_definition"] =
        "Dijkstra from each landmark along the graph, the landmarks split over the ranks; no n x "
        "n matrix. stored: one search per landmark, the M x n distances exchanged so that each "
        "rank holds its points' rows (about 2 M n / ranks values per rank); recomputed (when "
        "stored does not fit in the memory limit): a second search per landmark whose distances "
        "go straight into the triangulation sums (n x k per rank)";
    approximation["triangulation"] =
        "y_a = -1/2 L# (delta_a - delta_mean), L# = Lambda^(-1/2) V^T (k x M), delta_a = squared "
        "geodesic distances of point a to the landmarks, delta_mean = column means of Delta";
    approximation["embedding_origin"] = "the landmarks' mean, not the data mean";
    report["approximation"] = approximation;
    report["n"] = r.n;
    report["d"] = result.d;
    report["metric"] = kernel::metric_name(graph_settings.metric);
    if (graph_settings.neighbors > 0)
      report["neighbors"] = graph_settings.neighbors;
    else
      report["radius"] = graph_settings.radius;
    report["graph"] = graph_report(result.graph);
    if (connect) {
      report["connect"] = connect_report(
          result.added_edges, result.graph,
          "the c - 1 edges of the minimum spanning tree of the components, as exact isomap "
          "--connect (1-based rows in edges)");
    }
    report["graph_definition"] =
        "i and j joined when either is among the other's neighbours (K nearest others, ties to "
        "the lower index, or within the radius), edge length their distance";
    run.summary = "n = " + std::to_string(r.n) + ", k = " + std::to_string(k) + ", " +
                  std::to_string(r.model.m) + " landmarks, " + std::to_string(result.graph.edges) +
                  " edges, " + std::to_string(world.size()) + " ranks";
    if (r.negative_count > 0)
      run.summary_tail = "; the landmarks' B has " + std::to_string(r.negative_count) +
                         " negative eigenvalues (the geodesics are not Euclidean)";
  });
}

Projection project_landmark_isomap(const io::Model& model, io::MatrixFile& points,
                                   const Comm& comm) {
  approx::LandmarkIsomapProjection p;
  approx::LandmarkModel& m = p.model;
  std::int64_t n = 0, d = 0;
  collectively(comm, [&] {
    model.choice("approximation", {"landmark"});
    n = model.integer("n", 2, io::kMaxModelDimension);
    d = model.integer("d", 1, io::kMaxModelDimension);
    m.m = model.integer("landmarks", 2, n);
    m.k = static_cast<int>(model.integer("k", 1, m.m - 1));
    p.graph.metric = kernel::parse_metric(model.choice("metric", io::manifest_metric_names()));
    if (model.has("neighbors"))
      p.graph.neighbors = static_cast<int>(model.integer("neighbors", 1, n - 1));
    else
      p.graph.radius = model.positive("radius");
    p.connect = model.has("connect") && model.flag("connect");
  });
  const std::vector<double> rows = model.vector(comm, "landmark_rows", m.m);
  m.pseudo_inverse = model.small(comm, "landmark_pseudoinverse", m.k, m.m).values;
  m.delta_mean = model.vector(comm, "landmark_sq_distance_means", m.m);
  std::string error;
  for (std::size_t l = 0; l < rows.size() && error.empty(); ++l) {
    const double row = rows[l];
    if (!(row >= 0 && row < double(n) && row == std::floor(row) && (l == 0 || row > rows[l - 1])))
      error = model.dir() + ": landmark_rows entry " + std::to_string(l + 1) +
              " is not a row of the training points above the previous one; the model is "
              "damaged";
    else
      p.landmark_rows.push_back(static_cast<std::int64_t>(row));
  }
  agree(comm, error);
  auto training = model.large(comm, "X");
  agree(comm, training->rows() == n && training->cols() == d
                  ? std::string()
                  : training->path() + ": the training points have the wrong shape");
  return {m.k, approx::landmark_isomap_transform(p, *training, points, comm)};
}

}  // namespace kembed::app
