#include "kembed/app/mds_command.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "kembed/app/driver.hpp"
#include "kembed/app/landmark_report.hpp"
#include "kembed/approx/landmark_mds.hpp"
#include "kembed/core/error.hpp"
#include "kembed/core/memory.hpp"
#include "kembed/io/csv_writer.hpp"
#include "kembed/io/format_double.hpp"
#include "kembed/io/model.hpp"
#include "kembed/spectral/mds.hpp"

namespace kembed::app {

// The app layer drives the methods and their kernels.
using namespace kembed::spectral;
using namespace kembed::kernel;

namespace {

// Where the dissimilarities come from: a distance matrix (--distances) or
// points (--input / --generate) under --metric; with --approx landmark,
// points or the distances to and among the landmarks.
struct MdsInputOptions {
  std::optional<InputOptions> points;  ///< set for point input
  std::string distances;               ///< path of the distance matrix otherwise
  io::FileHints hints;                 ///< shape of a .bin distance matrix
  std::optional<Metric> metric;        ///< set for point input
  bool symmetrize = false;
  bool landmark = false;               ///< --approx landmark
  std::int64_t landmarks = 0;          ///< --landmarks (0: not given)
  std::int64_t stress_pairs = 10000;   ///< --stress-pairs
  std::string to_landmarks;            ///< --distances-to-landmarks (n x M)
  std::string among_landmarks;         ///< --landmark-distances (M x M)
  io::FileHints landmark_hints;        ///< shape of a .bin --landmark-distances
  AdditiveMethod additive = AdditiveMethod::none;  ///< --add

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
         "with --distances: average D and D^T instead of rejecting an asymmetric matrix")
        ("approx", po::value<std::string>(),
         "landmark: landmark MDS (classical MDS of --landmarks M points, the others placed "
         "by triangulation; linear in n)")
        ("landmarks", po::value<std::int64_t>(),
         "with --approx landmark: number of landmarks M (uniform sample, seeded by --seed)")
        ("distances-to-landmarks", po::value<std::string>(),
         "with --approx landmark, instead of points: n x M distances of every point to the "
         "landmarks (.bin with --rows N --cols M)")
        ("landmark-distances", po::value<std::string>(),
         "with --distances-to-landmarks: the M x M distances among the landmarks")
        ("stress-pairs", po::value<std::int64_t>()->default_value(10000),
         "with --approx landmark and points: pairs sampled for the stress (0: none)")
        ("add", po::value<std::string>()->default_value("none"),
         "none, cailliez (d + c off the diagonal, c the smallest that makes the "
         "dissimilarities Euclidean; R cmdscale add = TRUE) or lingoes (d^2 + 2c, "
         "c = -smallest eigenvalue of B): additive constant applied before embedding");
    // clang-format on
    return d;
  }

  explicit MdsInputOptions(const po::variables_map& vm) {
    symmetrize = vm["symmetrize"].as<bool>();
    const std::string add = vm["add"].as<std::string>();
    if (add == "cailliez")
      additive = AdditiveMethod::cailliez;
    else if (add == "lingoes")
      additive = AdditiveMethod::lingoes;
    else if (add != "none")
      throw Error("unknown --add '" + add + "' (expected none, cailliez or lingoes)");
    if (parse_landmark(vm)) return;
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

  // The --approx options; true when they chose the precomputed landmark
  // distances (nothing left to parse).
  bool parse_landmark(const po::variables_map& vm) {
    const bool precomputed = vm.count("distances-to-landmarks") || vm.count("landmark-distances");
    if (vm.count("approx")) {
      const std::string approx = vm["approx"].as<std::string>();
      if (approx != "landmark")
        throw Error("unknown --approx '" + approx + "' for mds (expected landmark)");
      landmark = true;
    }
    if (!landmark) {
      if (vm.count("landmarks")) throw Error("--landmarks applies to --approx landmark");
      if (precomputed)
        throw Error("--distances-to-landmarks and --landmark-distances apply to --approx landmark");
      if (!vm["stress-pairs"].defaulted())
        throw Error("--stress-pairs applies to --approx landmark");
      return false;
    }
    if (additive != AdditiveMethod::none)
      throw Error("--add applies to exact mds (the whole n x n matrix), not to --approx landmark");
    if (vm.count("distances"))
      throw Error("--approx landmark does not take --distances (the full n x n matrix): give "
                  "points (--input or --generate, with --metric), or --distances-to-landmarks "
                  "FILE (n x M) with --landmark-distances FILE (M x M)");
    if (symmetrize) throw Error("--symmetrize applies to --distances only");
    if (vm.count("landmarks")) {
      landmarks = vm["landmarks"].as<std::int64_t>();
      if (landmarks < 1)
        throw Error("--landmarks must be at least 1, got " + std::to_string(landmarks));
    }
    stress_pairs = vm["stress-pairs"].as<std::int64_t>();
    if (stress_pairs < 0) throw Error("--stress-pairs must be at least 0");
    if (!precomputed) {
      if (!vm.count("landmarks"))
        throw Error("--approx landmark needs --landmarks M (the number of landmarks)");
      return false;  // points, parsed as for exact MDS
    }
    if (!vm.count("distances-to-landmarks") || !vm.count("landmark-distances"))
      throw Error("--distances-to-landmarks (n x M) and --landmark-distances (M x M) go together");
    if (vm.count("input") || vm.count("generate"))
      throw Error("give either points (--input or --generate) or --distances-to-landmarks, "
                  "not both");
    if (vm.count("metric"))
      throw Error("--metric applies to points; the landmark distances are used as given");
    if (!vm["stress-pairs"].defaulted())
      throw Error("--stress-pairs needs points (the distances of the sampled pairs)");
    stress_pairs = 0;
    to_landmarks = vm["distances-to-landmarks"].as<std::string>();
    among_landmarks = vm["landmark-distances"].as<std::string>();
    if (vm.count("rows")) hints.rows = vm["rows"].as<std::int64_t>();
    if (vm.count("cols")) hints.cols = vm["cols"].as<std::int64_t>();
    if (vm.count("rows") && hints.rows < 1) throw Error("--rows must be at least 1");
    if (vm.count("cols") && hints.cols < 1) throw Error("--cols must be at least 1");
    landmark_hints = io::FileHints(hints.cols, hints.cols);
    return true;
  }

  /// Collective: the distance matrix, the points, or the distances to the landmarks.
  std::unique_ptr<io::MatrixFile> open(const Comm& comm) const {
    if (points) return points->open(comm);
    if (!to_landmarks.empty()) return io::open_matrix_file(comm, to_landmarks, hints);
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

// run.json's record of --add (only when given: --add none leaves run.json as it was).
void additive_report(Json& report, const AdditiveConstant& a) {
  report["additive_method"] = additive_method_name(a.method);
  report["additive_constant"] = a.constant;
  if (a.method == AdditiveMethod::cailliez) {
    report["additive_definition"] =
        "Cailliez: d_ij + c for i != j, c = the largest real eigenvalue of [[0, 2 B2], [-I, "
        "-4 B1]] (2n x 2n), B2 = -1/2 J D^(2) J, B1 = -1/2 J D J, of the input dissimilarities "
        "(pdgehrd + pdlahqr); the smallest c for which every d_ij + c is Euclidean";
    report["additive_largest_real_part"] = a.largest_real_part;
    report["additive_complex_eigenvalues"] = a.complex_eigenvalues;
    report["additive_largest_real_part_definition"] =
        "max Re(lambda) over all 2n eigenvalues, R cmdscale's ac; equals additive_constant "
        "unless a complex pair lies right of the largest real eigenvalue";
  } else {
    report["additive_definition"] =
        "Lingoes: sqrt(d_ij^2 + 2c) for i != j, c = -lambda_min(B2), B2 = -1/2 J D^(2) J of the "
        "input dissimilarities (pdsyevr); B becomes B2 + c J, positive semidefinite";
    report["additive_input_smallest_eigenvalue"] = a.smallest_eigenvalue;
  }
  report["additive_applies_to"] =
      "every quantity below (distances, B, eigenvalues, gof, model) is of the corrected "
      "dissimilarities; transform corrects each new-to-training distance d > 0 the same way";
}

// The model of a landmark fit: what triangulation needs (L#, the landmarks'
// mean squared distances and, for points, the landmarks themselves).
void save_landmark_model(Run& run, const approx::LandmarkMdsResult& r) {
  const approx::LandmarkModel& m = r.model;
  const std::string dir = run.staged_path("model");
  Json manifest = run.manifest_header();
  manifest["approximation"] = "landmark";
  manifest["n"] = r.n;
  manifest["d"] = m.d;
  manifest["k"] = m.k;
  manifest["landmarks"] = m.m;
  manifest["input"] = m.metric ? "points" : "distances";
  if (m.metric) manifest["metric"] = metric_name(*m.metric);
  manifest["projection"] =
      "triangulation: y = -1/2 landmark_pseudoinverse (q - landmark_sq_distance_means), "
      "q = squared distances to the landmarks";
  run.on_root([&] {
    io::ModelWriter writer(dir);
    if (m.metric) writer.add("landmarks", {m.m, m.d, m.landmark_points});
    writer.add("landmark_pseudoinverse", {m.k, m.m, m.pseudo_inverse});
    writer.add_vector("landmark_sq_distance_means", m.delta_mean);
    writer.add_vector("eigenvalues", r.eigenvalues);
    writer.finish(manifest);
  });
}

// --approx landmark: fit, write, report.
void run_landmark_mds(const po::variables_map& vm, const Comm& world, const MdsInputOptions& in,
                      const OutputOptions& output, const SolveOptions& solve) {
  if (solve.dry_run)
    throw Error("--dry-run plans the exact n x n fit; for --approx landmark use "
                "kembed plan mds --approx landmark --landmarks M");
  refuse_exact_only_options(vm, "--approx landmark");
  const int k = solve.components;
  std::vector<std::string> reads = {in.points ? in.points->input : in.to_landmarks};
  if (!in.among_landmarks.empty()) reads.push_back(in.among_landmarks);
  Job job("mds", output, solve.layout, reads, [&](const Comm& c) { return in.open(c); });
  drive(vm, world, job, [&](Run& run) {
    approx::LandmarkMdsSettings settings;
    settings.components = k;
    settings.landmarks = in.landmarks;
    settings.seed = solve.krylov.seed;
    settings.stress_pairs = in.stress_pairs;
    settings.max_memory_per_rank = solve.max_memory_per_rank;
    approx::LandmarkMdsResult r;
    if (in.points) {
      r = approx::landmark_mds_points(run.input(), *in.metric, settings, world, run.timer());
    } else {
      const auto among = io::open_matrix_file(world, in.among_landmarks, in.landmark_hints);
      r = approx::landmark_mds_distances(run.input(), *among, settings, world, run.timer());
    }

    run.timer().start("write");
    write_landmark_fit(run, r, k, "distances", "mds", world);
    save_landmark_model(run, r);

    Json& report = run.report;
    Json approximation;
    approximation["method"] = "landmark";
    approximation["landmarks"] = r.model.m;
    approximation["landmark_selection"] =
        in.points ? Json("uniform without replacement (seeded, independent of the rank count)")
                  : Json("given (--distances-to-landmarks, --landmark-distances)");
    approximation["seed"] = settings.seed;
    if (in.points) {
      std::vector<std::int64_t> rows;
      for (std::int64_t row : r.landmark_rows) rows.push_back(row + 1);
      approximation["landmark_rows"] = rows;  // 1-based, as in every message
    }
    approximation["stress_sample_pairs"] = r.stress_pairs;
    approximation["sample_stress"] = r.sample_stress ? Json(*r.sample_stress) : Json(nullptr);
    approximation["stress_definition"] =
        "Kruskal stress-1 sqrt(sum (d_ij - dhat_ij)^2 / sum d_ij^2) over the sampled pairs "
        "(all pairs when n(n-1)/2 <= the sample size), d = --metric distance, dhat = "
        "Euclidean distance of the embeddings";
    approximation["triangulation"] =
        "y_a = -1/2 L# (delta_a - delta_mean), L# = Lambda^(-1/2) V^T (k x M), delta_a = squared "
        "distances of point a to the landmarks, delta_mean = column means of Delta";
    approximation["embedding_origin"] =
        "the landmarks' mean (for Euclidean points: the projection of x - mean(landmarks) "
        "onto the landmarks' top k principal axes), not the data mean";
    report["approximation"] = approximation;
    report["n"] = r.n;
    report["d"] = r.model.d;
    report["input_kind"] = in.points ? "points" : "distances to landmarks";
    report["metric"] = in.metric ? Json(metric_name(*in.metric)) : Json(nullptr);
    if (!in.points) {
      report["distances_to_landmarks"] = in.to_landmarks;
      report["landmark_distances"] = in.among_landmarks;
    }
    run.summary = "n = " + std::to_string(r.n) + ", k = " + std::to_string(k) + ", " +
                  std::to_string(r.model.m) + " landmarks, " + std::to_string(world.size()) +
                  " ranks";
    if (r.sample_stress) run.summary += ", sample stress " + io::format_double(*r.sample_stress);
    if (r.negative_count > 0)
      run.summary_tail = "; the landmarks' B has " + std::to_string(r.negative_count) +
                         " negative eigenvalues (non-Euclidean distances)";
  });
}

// A landmark model -> triangulation of the new points.
Projection project_landmark_mds(const io::Model& model, io::MatrixFile& points, const Comm& comm) {
  approx::LandmarkModel m;
  collectively(comm, [&] {
    const std::int64_t n = model.integer("n", 2, io::kMaxModelDimension);
    m.m = model.integer("landmarks", 2, n);
    m.k = static_cast<int>(model.integer("k", 1, m.m - 1));
    if (model.choice("input", {"points", "distances"}) == "points") {
      m.metric = parse_metric(model.choice("metric", io::manifest_metric_names()));
      m.d = model.integer("d", 1, io::kMaxModelDimension);
    }
  });
  if (m.metric) m.landmark_points = model.small(comm, "landmarks", m.m, m.d).values;
  m.pseudo_inverse = model.small(comm, "landmark_pseudoinverse", m.k, m.m).values;
  m.delta_mean = model.vector(comm, "landmark_sq_distance_means", m.m);
  std::vector<double> embedding;
  collectively(comm, [&] {
    const std::int64_t expected = m.metric ? m.d : m.m;
    if (points.cols() != expected)
      throw Error(points.path() + " has " + std::to_string(points.cols()) +
                  " columns, but the landmark MDS model " + model.dir() + " expects " +
                  std::to_string(expected) +
                  (m.metric ? " (the training points' coordinates)"
                            : " (distances to each of its landmarks)"));
  });
  return {m.k, approx::triangulate(m, points, comm)};
}

}  // namespace

void save_gower_model(Run& run, const MdsResult& r, int k, bool with_points, const Json& fields) {
  const std::string dir = run.staged_path("model");
  std::optional<io::ModelWriter> writer;
  run.on_root([&] {
    writer.emplace(dir);
    writer->add("vectors", {r.n, k, r.vectors});
    writer->add_vector("eigenvalues", r.eigenvalues);
    writer->add_vector("sq_distance_row_means", r.sq_row_means);
  });
  Json manifest = run.manifest_header();
  manifest["n"] = r.n;
  manifest["d"] = r.d;
  manifest["k"] = k;
  for (const auto& [key, value] : fields.items()) manifest[key] = value;
  manifest["sq_distance_grand_mean"] = r.sq_grand_mean;
  manifest["embedding_scale"] = "sqrt(eigenvalue)";
  if (with_points)
    manifest["data_fingerprint_mix64sum"] = io::copy_to_npy(run.world(), run.input(), dir + "/X.npy");
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
      .add(SolveOptions::description())
      .add(PrecisionOptions::description())
      .add(StorageOptions::description());
  return all;
}

void run_mds(const po::variables_map& vm, const Comm& world) {
  const MdsInputOptions in(vm);
  const OutputOptions output(vm);
  SolveOptions solve(vm);
  const PrecisionOptions precision(vm, solve);
  const StorageOptions storage(vm, solve);
  if (storage.lower && (!in.metric || *in.metric == kernel::Metric::manhattan || in.landmark))
    throw Error("--storage lower needs points (--input) under a metric assembled in tiles "
                "(euclidean, sqeuclidean or cosine), for the exact n x n matrix");
  if (storage.none && (!in.metric || in.landmark))
    throw Error("--storage none recomputes the distances from the points (--input with a "
                "--metric), for the exact n x n matrix; a distance matrix or --approx landmark "
                "has nothing to recompute (use --storage auto)");
  if (in.additive != AdditiveMethod::none && (storage.lower || storage.none || precision.single))
    throw Error("--add " + additive_method_name(in.additive) +
                " needs the n x n dissimilarities stored whole in double (--storage full or "
                "auto, --precision double)");
  const StorageRequest storage_request = storage.request();
  if (precision.single && in.landmark)
    throw Error("--precision single applies to the exact n x n matrix, not to --approx landmark");
  if (precision.single && !in.metric)
    throw Error(
        "--precision single needs the points (--input) to compute the distances from; a "
        "distance matrix is read in double (use --precision double)");
  if (in.landmark) return run_landmark_mds(vm, world, in, output, solve);
  const int k = solve.components;
  Job job("mds", output, solve.layout, {in.points ? in.points->input : in.distances},
          [&](const Comm& c) { return in.open(c); });
  job.with_dry_run(solve, [&](const io::MatrixFile& file, const BlacsGrid& grid) {
    ProblemShape shape{file.rows(), in.metric ? file.cols() : 0, k, grid.nprow(), grid.npcol(),
                       solve.layout.block_size, solve.solver};
    shape.single_precision = precision.single;
    shape.single_precision_available = in.metric.has_value();
    MdsSettings settings{in.metric, k, solve.solver, solve.layout.block_size, in.symmetrize,
                         solve.krylov};
    settings.storage = storage_request;
    settings.additive = in.additive;
    const double limit = solve.max_memory_per_rank > 0 ? solve.max_memory_per_rank
                                                       : available_memory_per_rank(grid.comm());
    return shown_shape(mds_fit_plan(settings, shape, limit, grid.comm().size()), settings.solver);
  });
  drive(vm, world, job, [&](Run& run) {
    const int nb = run.use_block_size_for(run.input().rows());
    MdsSettings settings{in.metric,     k,                 solve.solver,
                         nb,            in.symmetrize,     run.krylov(solve),
                         solve.max_memory_per_rank};
    settings.single_precision = precision.single;
    settings.storage = storage_request;
    settings.additive = in.additive;
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
    if (result.additive) {
      fields["additive_method"] = additive_method_name(result.additive->method);
      fields["additive_constant"] = result.additive->constant;
    }
    save_gower_model(run, result, k, in.metric.has_value(), fields);

    Json& report = run.report;
    report["n"] = result.n;
    report["d"] = result.d;
    report["input_kind"] = in.metric ? "points" : "distances";
    report["metric"] = in.metric ? Json(metric_name(*in.metric)) : Json(nullptr);
    report["symmetrized"] = in.symmetrize;
    if (result.max_asymmetry) report["max_asymmetry_before_symmetrizing"] = *result.max_asymmetry;
    report["components"] = k;
    if (result.additive) additive_report(report, *result.additive);
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
    report["precision"] = precision.single ? "single" : "double";
    if (precision.single)
      report["precision_definition"] =
          "B stored as float32 (-1/2 D^(2) formed in double and each entry rounded once, centered "
          "in double); products B V in sgemm on V rounded to float; basis, Rayleigh-Ritz and "
          "residuals in double; residuals and norms are of the stored B";
    report_storage(report, world, "mds", "matrix_storage", result.storage, "B",
                   result.storage_note, result.passes);
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
  if (model.has("approximation")) return project_landmark_mds(model, points, comm);
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
  p.eigenvalues = model.vector(comm, "eigenvalues", p.k);
  std::string error;
  for (double v : p.eigenvalues)
    if (!(v > 0 && std::isfinite(v)))
      error = model.dir() + ": eigenvalue " + std::to_string(v) +
              " is not positive; the model is damaged";
  agree(comm, error);
  collectively(comm, [&] {
    if (!model.has("additive_method")) return;
    p.additive = model.choice("additive_method", {"cailliez", "lingoes"}) == "cailliez"
                     ? AdditiveMethod::cailliez
                     : AdditiveMethod::lingoes;
    p.additive_constant = model.number("additive_constant");
  });
  p.sq_row_means = model.vector(comm, "sq_distance_row_means", p.n);
  auto vectors = model.large(comm, "vectors");
  std::unique_ptr<io::MatrixFile> training;
  if (p.metric) training = model.large(comm, "X");
  return {p.k, mds_transform(p, training.get(), *vectors, points, grid, block_size)};
}

}  // namespace kembed::app
