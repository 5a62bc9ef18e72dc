#include "kembed/app/manifold_commands.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "kembed/app/driver.hpp"
#include "kembed/app/graph_report.hpp"
#include "kembed/app/landmark_isomap_command.hpp"
#include "kembed/app/mds_command.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/csv_writer.hpp"
#include "kembed/io/format_double.hpp"
#include "kembed/io/model.hpp"
#include "kembed/spectral/isomap.hpp"
#include "kembed/spectral/laplacian_eigenmaps.hpp"
#include "kembed/spectral/spectral_transform.hpp"

namespace kembed::app {

using namespace kembed::spectral;

namespace {

/// --neighbors, --radius, --metric: how Isomap's graph is built.
struct GraphOptions {
  graph::NeighborSettings settings;
  bool connect = false;

  static po::options_description description() {
    po::options_description d("neighbourhood graph");
    // clang-format off
    d.add_options()
        ("neighbors", po::value<int>(),
         "K: join each point to its K nearest others (exact; equal distances go to the lower "
         "row index), edge if either lists the other (default 5, as scikit-learn)")
        ("radius", po::value<double>(), "instead of --neighbors: join points at distance <= R")
        ("connect", po::bool_switch(),
         "join a disconnected graph's components by the c - 1 shortest edges between them "
         "(minimum spanning tree of the components; scikit-learn adds one per pair) instead "
         "of failing")
        ("metric", po::value<std::string>()->default_value("euclidean"),
         "euclidean, sqeuclidean, manhattan or cosine (1 - cosine similarity)");
    // clang-format on
    return d;
  }

  explicit GraphOptions(const po::variables_map& vm) {
    if (vm.count("neighbors") && vm.count("radius"))
      throw Error("give either --neighbors or --radius, not both");
    if (vm.count("radius")) {
      settings.radius = vm["radius"].as<double>();
      if (!(settings.radius > 0 && std::isfinite(settings.radius)))
        throw Error("--radius must be positive and finite");
    } else {
      settings.neighbors = vm.count("neighbors") ? vm["neighbors"].as<int>() : 5;
      if (settings.neighbors < 1) throw Error("--neighbors must be at least 1");
    }
    settings.metric = kernel::parse_metric(vm["metric"].as<std::string>());
    connect = vm.count("connect") && vm["connect"].as<bool>();
  }
};

SolverOutcome outcome(const std::string& used, const std::string& note, int cycles, int products,
                      const MemoryCheck& memory) {
  return {used, note, cycles, products, memory.estimate, memory.limit};
}

// Collective: writes model/ into the staging directory: what Gower's
// formula needs (as an MDS model) plus the training points and the graph
// settings, from which transform rebuilds the graph.
void save_isomap_model(Run& run, const IsomapResult& result, const graph::NeighborSettings& g,
                       bool connect, int k) {
  Json fields;
  if (connect) fields["connect"] = true;
  fields["metric"] = kernel::metric_name(g.metric);
  if (g.neighbors > 0)
    fields["neighbors"] = g.neighbors;
  else
    fields["radius"] = g.radius;
  fields["projection"] =
      "geodesic distances q through the new point's neighbours among X along the graph of X, "
      "then Gower: b* = -1/2 (q^2 - r - mean(q^2) + g), y* = Lambda^(-1/2) V^T b*";
  save_gower_model(run, result.mds, k, true, fields);
}

// Collective: writes model/ into the staging directory, what the Nystrom
// extension needs (spectral_transform.hpp): the training points, degrees,
// kept eigenvalues mu and unit eigenvectors v = D^(1/2) y (the embedding's
// signs), the affinity settings and, for knn, each point's last listed
// neighbour. Returns "" or why no model was written (a mu near 0), on every rank.
std::string save_spectral_model(Run& run, const LaplacianEigenmapsResult& r,
                                const LaplacianEigenmapsSettings& settings, int k) {
  const std::vector<double> mu(r.affinity_eigenvalues.begin() + 1, r.affinity_eigenvalues.end());
  const std::string refused = extension_eigenvalue_error(mu, run.input().path());
  if (!refused.empty()) return refused;  // the same eigenvalues on every rank
  const std::string dir = run.staged_path("model");
  std::optional<io::ModelWriter> writer;
  run.on_root([&] {
    writer.emplace(dir);
    std::vector<double> v(r.embedding.size());
    for (std::int64_t i = 0; i < r.n; ++i)
      for (int c = 0; c < k; ++c)
        v[std::size_t(i) * k + c] = r.embedding[std::size_t(i) * k + c] * std::sqrt(r.degrees[i]);
    writer->add("vectors", {r.n, k, v});
    writer->add_vector("eigenvalues", mu);
    writer->add_vector("degrees", r.degrees);
    if (settings.affinity == Affinity::knn) {
      writer->add_vector("neighbor_radius", r.neighbor_radius);
      writer->add_vector("neighbor_last",
                         std::vector<double>(r.neighbor_last.begin(), r.neighbor_last.end()));
    }
  });
  Json manifest = run.manifest_header();
  manifest["n"] = r.n;
  manifest["d"] = r.d;
  manifest["k"] = k;
  manifest["affinity"] = affinity_name(settings.affinity);
  if (settings.affinity == Affinity::rbf) {
    manifest["gamma"] = r.gamma;
  } else {
    manifest["neighbors"] = r.neighbors;
    manifest["symmetrization"] =
        "w_ij = 1/2 [i lists j] + 1/2 [j lists i], each point listing its K - 1 nearest others "
        "(ties to the lower index); neighbor_radius and neighbor_last: each point's last listed "
        "neighbour";
  }
  manifest["projection"] =
      "Nystrom: w_i = w(x, x_i) as the fit weighs them (a training point at distance 0 is x "
      "itself, weight 0), d(x) = sum w_i, v_c(x) = (1/mu_c) sum_i w_i v_ic / sqrt(d(x) d_i), "
      "y_c = v_c(x) / sqrt(d(x))";
  manifest["data_fingerprint_mix64sum"] = io::copy_to_npy(run.world(), run.input(), dir + "/X.npy");
  run.on_root([&] {
    writer->add_written("X", r.n, r.d);
    writer->finish(manifest);
  });
  return "";
}

}  // namespace

Projection project_spectral(const io::Model& model, io::MatrixFile& points, const BlacsGrid& grid,
                            int /*block_size*/) {
  const Comm& comm = grid.comm();
  SpectralExtension e;
  collectively(comm, [&] {
    e.n = model.integer("n", 2, std::numeric_limits<std::int32_t>::max());
    e.d = model.integer("d", 1, std::numeric_limits<std::int32_t>::max());
    e.k = static_cast<int>(model.integer("k", 1, e.n - 1));
    e.affinity = parse_affinity(model.choice("affinity", {"rbf", "knn"}));
    if (e.affinity == Affinity::rbf)
      e.gamma = model.positive("gamma");
    else
      e.neighbors = static_cast<int>(model.integer("neighbors", 2, e.n));
  });
  e.eigenvalues = model.vector(comm, "eigenvalues", e.k);
  e.degrees = model.vector(comm, "degrees", e.n);
  std::string error = extension_eigenvalue_error(e.eigenvalues, model.dir());
  for (std::int64_t i = 0; i < e.n && error.empty(); ++i)
    if (!(e.degrees[i] > 0))
      error = model.dir() + ": degree " + std::to_string(i + 1) +
              " is not positive; the model is damaged";
  if (e.affinity == Affinity::knn) {
    e.neighbor_radius = model.vector(comm, "neighbor_radius", e.n);
    const auto last = model.vector(comm, "neighbor_last", e.n);
    for (std::int64_t i = 0; i < e.n; ++i) {
      if (error.empty() &&
          !(last[i] >= 0 && last[i] < double(e.n) && last[i] == std::floor(last[i])))
        error = model.dir() + ": entry " + std::to_string(i + 1) +
                " of neighbor_last is not a training point's index; the model is damaged";
      e.neighbor_last.push_back(static_cast<std::int64_t>(error.empty() ? last[i] : 0));
    }
  }
  agree(comm, error);
  e.vectors = model.large(comm, "vectors")->read_rows({{0, e.n}});
  e.points = model.large(comm, "X")->read_rows({{0, e.n}});
  return {e.k, spectral_transform(e, points, comm)};
}

Projection project_isomap(const io::Model& model, io::MatrixFile& points, const BlacsGrid& grid,
                          int block_size) {
  const Comm& comm = grid.comm();
  if (model.has("approximation")) return project_landmark_isomap(model, points, comm);
  IsomapProjection p;
  collectively(comm, [&] {
    p.mds.n = model.integer("n", 2, std::numeric_limits<std::int32_t>::max());
    p.mds.d = model.integer("d", 1, std::numeric_limits<std::int32_t>::max());
    p.mds.k = static_cast<int>(model.integer("k", 1, p.mds.n - 1));
    p.mds.sq_grand_mean = model.number("sq_distance_grand_mean");
    p.graph.metric = kernel::parse_metric(
        model.choice("metric", {"euclidean", "sqeuclidean", "manhattan", "cosine"}));
    if (model.has("neighbors"))
      p.graph.neighbors = static_cast<int>(model.integer("neighbors", 1, p.mds.n - 1));
    else
      p.graph.radius = model.positive("radius");
    p.connect = model.has("connect") && model.flag("connect");
  });
  p.mds.eigenvalues = model.vector(comm, "eigenvalues", p.mds.k);
  std::string error;
  for (double v : p.mds.eigenvalues)
    if (!(v > 0 && std::isfinite(v)))
      error = model.dir() + ": eigenvalue " + std::to_string(v) +
              " is not positive; the model is damaged";
  agree(comm, error);
  p.mds.sq_row_means = model.vector(comm, "sq_distance_row_means", p.mds.n);
  auto vectors = model.large(comm, "vectors");
  auto training = model.large(comm, "X");
  return {p.mds.k, isomap_transform(p, *training, *vectors, points, grid, block_size)};
}

po::options_description isomap_options() {
  po::options_description all;
  all.add(GraphOptions::description())
      .add(landmark_isomap_options())
      .add(InputOptions::description("points, one per row (.csv/.tsv/.txt, .npy, .bin)"))
      .add(OutputOptions::description())
      .add(SolveOptions::description());
  return all;
}

void run_isomap(const po::variables_map& vm, const Comm& world) {
  const GraphOptions graph_options(vm);
  if (wants_landmark_isomap(vm))
    return run_landmark_isomap(vm, world, graph_options.settings, graph_options.connect);
  const InputOptions in(vm);
  const OutputOptions output(vm);
  const SolveOptions solve(vm);
  const int k = solve.components;
  Job job("isomap", output, solve.layout, {in.input}, [&](const Comm& c) { return in.open(c); });
  job.with_dry_run(solve, [&](const io::MatrixFile& file, const BlacsGrid& grid) {
    IsomapSettings shaped;
    shaped.graph = graph_options.settings;
    shaped.components = k;
    shaped.solver = solve.solver;
    shaped.block_size = solve.layout.block_size;
    return isomap_problem_shape(file.rows(), file.cols(), grid.nprow(), grid.npcol(), shaped);
  });
  drive(vm, world, job, [&](Run& run) {
    const int nb = run.use_block_size_for(run.input().rows());
    IsomapSettings settings;
    settings.graph = graph_options.settings;
    settings.connect = graph_options.connect;
    settings.components = k;
    settings.solver = solve.solver;
    settings.block_size = nb;
    settings.krylov = run.krylov(solve);
    settings.max_memory_per_rank = solve.max_memory_per_rank;
    const IsomapResult result = fit_isomap(run.input(), run.grid(), settings, run.timer());
    const MdsResult& mds = result.mds;
    run.solver(solve,
               outcome(mds.solver_used, mds.solver_note, mds.iterations, mds.matvecs, mds.memory));

    run.timer().start("write");
    run.write_rows("embedding.csv", io::numbered_columns("c", k), mds.embedding);
    run.write("eigenvalues.csv", [&] {
      std::vector<double> table;
      for (std::size_t j = 0; j < mds.eigenvalues.size(); ++j) {
        table.push_back(mds.eigenvalues[j]);
        table.push_back(mds.explained_ratio[j]);
      }
      return io::format_csv({"eigenvalue", "explained_variance_ratio"}, table);
    });
    if (!mds.spectrum.empty())
      run.write("spectrum.csv", [&] { return io::format_csv({"eigenvalue"}, mds.spectrum); });
    save_isomap_model(run, result, graph_options.settings, graph_options.connect, k);

    Json& report = run.report;
    report["n"] = mds.n;
    report["d"] = mds.d;
    report["metric"] = kernel::metric_name(graph_options.settings.metric);
    if (graph_options.settings.neighbors > 0)
      report["neighbors"] = graph_options.settings.neighbors;
    else
      report["radius"] = graph_options.settings.radius;
    report["graph"] = graph_report(result.graph);
    if (graph_options.connect) {
      report["connect"] = connect_report(
          result.added_edges, result.graph,
          "the c - 1 edges of the minimum spanning tree of the components: repeatedly the "
          "shortest edge (under --metric) between points of two different components, ties to "
          "the lower row numbers (1-based in edges); scikit-learn >= 1.2 adds the shortest edge "
          "of every pair of components, c (c - 1) / 2 edges");
    }
    report["graph_definition"] =
        "i and j joined when either is among the other's neighbours (K nearest others, ties to "
        "the lower index, or within the radius), edge length their distance";
    report["components"] = k;
    report["double_centering"] = "B = -1/2 J G^(2) J, J = I - 11^T/n, G = geodesic distances";
    report["eigenvalues"] = mds.eigenvalues;
    report["explained_variance_ratio"] = mds.explained_ratio;
    report["reconstruction_error"] = result.reconstruction_error;
    report["reconstruction_error_definition"] =
        "sqrt(||B||_F^2 - sum_k lambda_k^2) / n (scikit-learn Isomap.reconstruction_error)";
    report["trace_B"] = mds.trace;
    report["frobenius_norm_B"] = mds.frobenius_norm;
    report["relative_residuals"] = mds.residuals;
    report["residual_definition"] = "||B v - lambda v||_2 / ||B||_F";
    report["embedding_scale"] = "y_j = sqrt(lambda_j) v_j (as scikit-learn's Isomap)";
    report["sign_convention"] = "largest |entry| of each eigenvector is positive";
    run.summary = "n = " + std::to_string(mds.n) + ", k = " + std::to_string(k) + ", " +
                  std::to_string(result.graph.edges) + " edges, " + std::to_string(world.size()) +
                  " ranks";
  });
}

po::options_description spectral_options() {
  po::options_description d("affinity");
  // clang-format off
  d.add_options()
      ("affinity", po::value<std::string>()->default_value("rbf"),
       "rbf: exp(-gamma ||x - y||^2), a dense n x n matrix; knn: 1/2 (C + C^T) with C the "
       "K-nearest-neighbour connectivity (scikit-learn's nearest_neighbors), held as sparse "
       "rows (memory O(n K / ranks)) and solved by LOBPCG with the graph's multigrid; --solver "
       "evd, evr and elpa need the dense matrix and are refused with knn")
      ("gamma", po::value<double>(), "rbf: coefficient (default 1/d)")
      ("neighbors", po::value<int>(),
       "knn: K, counting the point itself as scikit-learn does (default max(n/10, 1))");
  // clang-format on
  po::options_description all;
  all.add(d)
      .add(InputOptions::description("points, one per row (.csv/.tsv/.txt, .npy, .bin)"))
      .add(OutputOptions::description())
      .add(SolveOptions::description());
  return all;
}

void run_spectral(const po::variables_map& vm, const Comm& world) {
  LaplacianEigenmapsSettings settings;
  settings.affinity = parse_affinity(vm["affinity"].as<std::string>());
  if (vm.count("gamma")) {
    if (settings.affinity != Affinity::rbf) throw Error("--gamma applies to --affinity rbf");
    settings.gamma = vm["gamma"].as<double>();
    if (!(settings.gamma > 0 && std::isfinite(settings.gamma)))
      throw Error("--gamma must be positive and finite");
  }
  if (vm.count("neighbors")) {
    if (settings.affinity != Affinity::knn) throw Error("--neighbors applies to --affinity knn");
    settings.neighbors = vm["neighbors"].as<int>();
    if (settings.neighbors < 2)
      throw Error("--neighbors must be at least 2 (it counts the point itself)");
  }
  const InputOptions in(vm);
  const OutputOptions output(vm);
  const SolveOptions solve(vm);
  const int k = solve.components;
  Job job("spectral", output, solve.layout, {in.input}, [&](const Comm& c) { return in.open(c); });
  job.with_dry_run(solve, [&](const io::MatrixFile& file, const BlacsGrid& grid) {
    LaplacianEigenmapsSettings shaped = settings;
    shaped.components = k;
    shaped.solver = solve.solver;
    shaped.block_size = solve.layout.block_size;
    return spectral_problem_shape(file.rows(), file.cols(), grid.nprow(), grid.npcol(), shaped);
  });
  drive(vm, world, job, [&](Run& run) {
    settings.components = k;
    settings.solver = solve.solver;
    settings.block_size = run.use_block_size_for(run.input().rows());
    settings.krylov = run.krylov(solve);
    settings.knn_solve.progress = run.progress("lobpcg iteration");
    settings.max_memory_per_rank = solve.max_memory_per_rank;
    const auto r = fit_laplacian_eigenmaps(run.input(), run.grid(), settings, run.timer());
    run.solver(solve, outcome(r.solver_used, r.solver_note, r.iterations, r.matvecs, r.memory));

    run.timer().start("write");
    run.write_rows("embedding.csv", io::numbered_columns("c", k), r.embedding);
    const std::string no_model = save_spectral_model(run, r, settings, k);
    run.write("eigenvalues.csv", [&] {
      std::vector<double> table;
      for (std::size_t j = 1; j < r.laplacian_eigenvalues.size(); ++j) {
        table.push_back(r.laplacian_eigenvalues[j]);
        table.push_back(r.affinity_eigenvalues[j]);
      }
      return io::format_csv({"laplacian_eigenvalue", "affinity_eigenvalue"}, table);
    });

    Json& report = run.report;
    report["n"] = r.n;
    report["d"] = r.d;
    report["affinity"] = affinity_name(settings.affinity);
    if (settings.affinity == Affinity::rbf) {
      report["gamma"] = r.gamma;
      report["affinity_definition"] = "w_ij = exp(-gamma ||x_i - x_j||^2), w_ii left out";
    } else {
      report["neighbors"] = r.neighbors;
      report["graph"] = graph_report(*r.graph);
      report["affinity_definition"] =
          "w_ij = 1 if i and j list each other among their K nearest (the point itself counted, "
          "as scikit-learn), 1/2 if only one does, w_ii left out";
    }
    report["min_degree"] = r.min_degree;
    report["max_degree"] = r.max_degree;
    report["components"] = k;
    report["normalized_matrix"] = "M = D^(-1/2) W D^(-1/2), D = diag(row sums of W)";
    report["affinity_eigenvalues"] = r.affinity_eigenvalues;
    report["laplacian_eigenvalues"] = r.laplacian_eigenvalues;
    report["eigenvalue_definition"] =
        "affinity: the k + 1 largest eigenvalues mu of M (the first, 1, is the trivial one and is "
        "dropped from the embedding); laplacian: 1 - mu, eigenvalues of I - M";
    report["relative_residuals"] = r.residuals;
    report["residual_definition"] = "||M v - mu v||_2 / ||M||_F";
    report["embedding_scale"] =
        "y_j = v_(j+1) / sqrt(degree), v unit eigenvectors of M (scikit-learn SpectralEmbedding)";
    report["sign_convention"] =
        "largest |entry| of each embedding column is positive (scikit-learn's "
        "_deterministic_vector_sign_flip)";
    if (!no_model.empty()) {
      report["model_refused"] = no_model;
      run.summary_tail = "; no model/ written: an eigenvalue of M is below " +
                         io::format_double(kMinExtensionEigenvalue) + " (see run.json)";
    }
    run.summary = "n = " + std::to_string(r.n) + ", k = " + std::to_string(k) + ", " +
                  std::to_string(world.size()) + " ranks";
  });
}

}  // namespace kembed::app
