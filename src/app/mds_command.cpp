#include "kembed/app/mds_command.hpp"

#include <cmath>
#include <optional>

#include "kembed/app/driver.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/csv_writer.hpp"
#include "kembed/io/model.hpp"
#include "kembed/spectral/mds.hpp"

namespace kembed::app {

// The app layer drives the methods and their kernels.
using namespace kembed::spectral;
using namespace kembed::kernel;

namespace {

// Where the dissimilarities come from: a distance matrix (--distances) or
// points (--input / --generate) under --metric.
struct MdsInputOptions {
  std::optional<InputOptions> points;  ///< set for point input
  std::string distances;               ///< path of the distance matrix otherwise
  io::FileHints hints;                 ///< shape of a .bin distance matrix
  std::optional<Metric> metric;        ///< set for point input
  bool symmetrize = false;

  static po::options_description description() {
    po::options_description d("distances");
    // clang-format off
    d.add_options()
        ("distances", po::value<std::string>(),
         "n x n distance matrix (.csv/.tsv/.txt, .npy, .bin with --rows N) instead of --input")
        ("metric", po::value<std::string>(),
         "with --input: euclidean (default), sqeuclidean, manhattan or cosine "
         "(1 - cosine similarity)")
        ("symmetrize", po::bool_switch(),
         "with --distances: average D and D^T instead of rejecting an asymmetric matrix");
    // clang-format on
    return d;
  }

  explicit MdsInputOptions(const po::variables_map& vm) {
    symmetrize = vm["symmetrize"].as<bool>();
    if (vm.count("distances")) {
      if (vm.count("input") || vm.count("generate"))
        throw Error("give either --distances (a distance matrix) or --input (points), not both");
      if (vm.count("metric"))
        throw Error("--metric applies to points (--input); --distances are used as given");
      distances = vm["distances"].as<std::string>();
      if (vm.count("rows")) hints.rows = vm["rows"].as<std::int64_t>();
      hints.cols = vm.count("cols") ? vm["cols"].as<std::int64_t>() : hints.rows;
      if (vm.count("rows") && hints.rows < 1) throw Error("--rows must be at least 1");
      if (vm.count("cols") && hints.cols < 1) throw Error("--cols must be at least 1");
      return;
    }
    if (!vm.count("input") && !vm.count("generate"))
      throw Error("missing --distances FILE (a distance matrix) or --input FILE (points)");
    if (symmetrize) throw Error("--symmetrize applies to --distances only");
    points.emplace(vm);
    metric = parse_metric(vm.count("metric") ? vm["metric"].as<std::string>() : "euclidean");
  }

  /// Collective: the distance matrix or the points.
  std::unique_ptr<io::MatrixFile> open(const Comm& comm) const {
    if (points) return points->open(comm);
    return io::open_matrix_file(comm, distances, hints);
  }
};

Json optional_json(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

std::string eigenvalues_csv(const MdsResult& r) {
  std::vector<double> table;
  for (std::size_t j = 0; j < r.eigenvalues.size(); ++j) {
    table.push_back(r.eigenvalues[j]);
    table.push_back(r.explained_ratio[j]);
  }
  return io::format_csv({"eigenvalue", "explained_variance_ratio"}, table);
}

Json spectrum_report(Json report, const MdsResult& r, const std::string& solver) {
  report["gof1"] = optional_json(r.gof1);
  report["gof2"] = optional_json(r.gof2);
  if (r.negative_count)
    report["negative_eigenvalues"] = *r.negative_count;
  else
    report["negative_eigenvalues"] = nullptr;
  // The most negative eigenvalue when B has any beyond round-off, else null.
  const bool has_negative = r.negative_count && *r.negative_count > 0;
  report["most_negative_eigenvalue"] =
      has_negative ? optional_json(r.smallest_eigenvalue) : Json(nullptr);
  report["smallest_eigenvalue"] = optional_json(r.smallest_eigenvalue);
  report["sum_positive_eigenvalues"] = optional_json(r.positive_sum);
  report["zero_eigenvalue_threshold"] = r.zero_threshold;
  report["gof_definition"] =
      "GOF1 = sum_k lambda / sum_i |lambda_i|, GOF2 = sum_k lambda / sum_i max(lambda_i, 0) "
      "(R cmdscale), over all n eigenvalues of B";
  report["negative_eigenvalues_definition"] =
      "eigenvalues of B below -zero_eigenvalue_threshold = -n eps max(|lambda_1|, ||B||_F); "
      "any means the distances are not Euclidean (no point set in any dimension has them)";
  if (!r.gof1)
    report["spectrum_unavailable"] =
        "solver " + solver +
        " computes only the top K eigenvalues; gof1, gof2, negative_eigenvalues and "
        "most_negative_eigenvalue need all n (use --solver evd)";
  return report;
}

}  // namespace

void save_gower_model(Run& run, const MdsResult& r, int k, bool with_points, const Json& fields) {
  const std::string dir = run.staged_path("model");
  std::optional<io::ModelWriter> writer;
  run.on_root([&] {
    writer.emplace(dir);
    writer->add("vectors", {r.n, k, r.vectors});
    writer->add("eigenvalues", {1, k, r.eigenvalues});
    writer->add("sq_distance_row_means", {1, r.n, r.sq_row_means});
  });
  Json manifest = run.manifest_header();
  manifest["n"] = r.n;
  manifest["d"] = r.d;
  manifest["k"] = k;
  for (const auto& [key, value] : fields.items()) manifest[key] = value;
  manifest["sq_distance_grand_mean"] = r.sq_grand_mean;
  manifest["embedding_scale"] = "sqrt(eigenvalue)";
  if (with_points)
    manifest["data_fingerprint_fnv1a64"] = io::copy_to_npy(run.world(), run.input(), dir + "/X.npy");
  run.on_root([&] {
    if (with_points) writer->add_written("X", r.n, r.d);
    writer->finish(manifest);
  });
}

po::options_description mds_options() {
  po::options_description all;
  all.add(MdsInputOptions::description())
      .add(InputOptions::description("points, one per row (.csv/.tsv/.txt, .npy, .bin), "
                                     "instead of --distances"))
      .add(OutputOptions::description())
      .add(SolveOptions::description());
  return all;
}

void run_mds(const po::variables_map& vm, const Comm& world) {
  const MdsInputOptions in(vm);
  const OutputOptions output(vm);
  const SolveOptions solve(vm);
  const int k = solve.components;
  Job job("mds", output, solve.layout, {in.points ? in.points->input : in.distances},
          [&](const Comm& c) { return in.open(c); });
  job.with_dry_run(solve, [&](const io::MatrixFile& file, const BlacsGrid& grid) {
    return ProblemShape{file.rows(), in.metric ? file.cols() : 0, k, grid.nprow(), grid.npcol(),
                        solve.layout.block_size, solve.solver};
  });
  drive(vm, world, job, [&](Run& run) {
    const int nb = run.use_block_size_for(run.input().rows());
    const MdsSettings settings{in.metric,     k,                 solve.solver,
                               nb,            in.symmetrize,     run.krylov(solve),
                               solve.max_memory_per_rank};
    const MdsResult result = fit_mds(run.input(), run.grid(), settings, run.timer());
    run.solver(solve, {result.solver_used, result.solver_note, result.iterations, result.matvecs,
                       result.memory.estimate, result.memory.limit});

    run.timer().start("write");
    run.write_rows("embedding.csv", io::numbered_columns("c", k), result.embedding);
    run.write("eigenvalues.csv", [&] { return eigenvalues_csv(result); });
    if (!result.spectrum.empty())
      run.write("spectrum.csv", [&] { return io::format_csv({"eigenvalue"}, result.spectrum); });
    Json fields;
    fields["input"] = in.metric ? "points" : "distances";
    if (in.metric) fields["metric"] = metric_name(*in.metric);
    fields["projection"] =
        "Gower: b* = -1/2 (q - r - mean(q) + g), y* = Lambda^(-1/2) V^T b*, q = squared "
        "distances to the training points, r = sq_distance_row_means, g = sq_distance_grand_mean";
    save_gower_model(run, result, k, in.metric.has_value(), fields);

    Json& report = run.report;
    report["n"] = result.n;
    report["d"] = result.d;
    report["input_kind"] = in.metric ? "points" : "distances";
    report["metric"] = in.metric ? Json(metric_name(*in.metric)) : Json(nullptr);
    report["symmetrized"] = in.symmetrize;
    if (result.max_asymmetry) report["max_asymmetry_before_symmetrizing"] = *result.max_asymmetry;
    report["components"] = k;
    report["double_centering"] = "B = -1/2 J D^(2) J, J = I - 11^T/n, D^(2) = squared distances";
    report["eigenvalues"] = result.eigenvalues;
    report["explained_variance_ratio"] = result.explained_ratio;
    report["explained_variance_ratio_denominator"] =
        result.ratio_of_trace
            ? "trace(B) = sum of all eigenvalues (the sum of the positive ones needs the full "
              "spectrum, which only --solver evd computes; the two agree only when B has no "
              "negative eigenvalues)"
            : "sum of the positive eigenvalues of B";
    report = spectrum_report(std::move(report), result, result.solver_used);
    report["trace_B"] = result.trace;
    report["frobenius_norm_B"] = result.frobenius_norm;
    report["relative_residuals"] = result.residuals;
    report["residual_definition"] = "||B v - lambda v||_2 / ||B||_F";
    report["embedding_scale"] = "y_j = sqrt(lambda_j) v_j (classical MDS, R cmdscale)";
    report["sign_convention"] = "largest |entry| of each eigenvector is positive";
    run.summary = "n = " + std::to_string(result.n) + ", k = " + std::to_string(k) + ", " +
                  std::to_string(world.size()) + " ranks";
    if (result.negative_count && *result.negative_count > 0)
      run.summary_tail = "; B has " + std::to_string(*result.negative_count) +
                         " negative eigenvalues (non-Euclidean distances; see gof1, gof2 in "
                         "run.json)";
  });
}

Projection project_mds(const io::Model& model, io::MatrixFile& points, const BlacsGrid& grid,
                       int block_size) {
  const Comm& comm = grid.comm();
  // The manifest was validated field by field when the model was opened;
  // the typed accessors still name the file and field if anything is off.
  MdsProjection p;
  collectively(comm, [&] {
    p.n = model.integer("n", 2, io::kMaxModelDimension);
    p.k = static_cast<int>(model.integer("k", 1, p.n));
    p.sq_grand_mean = model.number("sq_distance_grand_mean");
    if (model.choice("input", {"points", "distances"}) == "points") {
      p.metric = parse_metric(model.choice("metric", io::manifest_metric_names()));
      p.d = model.integer("d", 1, io::kMaxModelDimension);
    } else {
      p.d = model.integer("d", 0, io::kMaxModelDimension);
    }
  });
  p.eigenvalues = model.small(comm, "eigenvalues", 1, p.k).values;
  std::string error;
  for (double v : p.eigenvalues)
    if (!(v > 0 && std::isfinite(v)))
      error = model.dir() + ": eigenvalue " + std::to_string(v) +
              " is not positive; the model is damaged";
  agree(comm, error);
  p.sq_row_means = model.small(comm, "sq_distance_row_means", 1, p.n).values;
  auto vectors = model.large(comm, "vectors");
  std::unique_ptr<io::MatrixFile> training;
  if (p.metric) training = model.large(comm, "X");
  return {p.k, mds_transform(p, training.get(), *vectors, points, grid, block_size)};
}

}  // namespace kembed::app
