#include "kembed/app/kpca_command.hpp"

#include <climits>
#include <optional>

#include "kembed/app/driver.hpp"
#include "kembed/approx/nystrom.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/csv_writer.hpp"
#include "kembed/io/format_double.hpp"
#include "kembed/io/model.hpp"
#include "kembed/spectral/inverse_map.hpp"
#include "kembed/spectral/kpca.hpp"
#include "kembed/spectral/kpca_transform.hpp"
#include "kembed/spectral/memory_plan.hpp"

namespace kembed::app {

// The app layer drives the methods and their kernels.
using namespace kembed::spectral;
using namespace kembed::kernel;

namespace {

Json kernel_report(const Kernel& kernel) {
  Json j;
  j["name"] = kernel.name();
  if (kernel.uses_gamma()) j["gamma"] = kernel.gamma;
  if (kernel.type == KernelType::poly) j["degree"] = kernel.degree;
  if (kernel.type == KernelType::poly || kernel.type == KernelType::sigmoid)
    j["coef0"] = kernel.coef0;
  return j;
}

std::string eigenvalues_csv(const KpcaResult& r) {
  std::vector<double> table;
  for (std::size_t j = 0; j < r.eigenvalues.size(); ++j) {
    table.push_back(r.eigenvalues[j]);
    table.push_back(r.explained_ratio[j]);
  }
  return io::format_csv({"eigenvalue", "explained_variance_ratio"}, table);
}

// --fit-inverse, --alpha: the learned pre-image map (kembed preimage --method ridge).
struct InverseOptions {
  bool fit = false;
  double alpha = 1;
  static po::options_description description() {
    po::options_description d("pre-image map");
    d.add_options()("fit-inverse", po::bool_switch(),
                    "also fit the kernel ridge map from the embedding back to input space "
                    "(kembed preimage --method ridge)")(
        "alpha", po::value<double>()->default_value(1.0),
        "regularization of --fit-inverse: (K_Z + alpha I) W = X - mean");
    return d;
  }
  explicit InverseOptions(const po::variables_map& vm)
      : fit(vm["fit-inverse"].as<bool>()), alpha(vm["alpha"].as<double>()) {
    if (fit && !(alpha > 0)) throw Error("--alpha must be positive, got " + io::format_double(alpha));
    if (!fit && !vm["alpha"].defaulted())
      throw Error("--alpha applies to --fit-inverse (the regularization of the pre-image map)");
  }
};

// --approx nystrom, --landmarks, --landmark-selection, --landmark-rcond,
// --panel-rows: the approximate tier (Nystrom kernel PCA).
struct ApproxOptions {
  bool nystrom = false;
  std::int64_t landmarks = 0;
  approx::LandmarkSelection selection = approx::LandmarkSelection::uniform;
  double rcond = approx::kDefaultLandmarkRcond;
  std::int64_t panel_rows = 0;
  std::uint64_t seed = 0;

  static po::options_description description() {
    po::options_description d("approximation");
    // clang-format off
    d.add_options()
        ("approx", po::value<std::string>(), "nystrom: kernel PCA of the Nystrom approximation "
         "from --landmarks M points, streamed (memory O(M^2 + panel) per rank)")
        ("landmarks", po::value<std::int64_t>(), "number of landmarks M of --approx nystrom "
         "(components <= M <= n)")
        ("landmark-selection", po::value<std::string>()->default_value("uniform"),
         "uniform (sampling without replacement) or kmeans++ (D^2 sampling), both from --seed")
        ("landmark-rcond", po::value<double>()->default_value(approx::kDefaultLandmarkRcond),
         "drop the directions of W = K(L, L) with eigenvalue <= this times the largest")
        ("panel-rows", po::value<std::int64_t>(), "rows per streamed panel of --approx nystrom "
         "(default: about 4M numbers per panel)");
    // clang-format on
    return d;
  }

  explicit ApproxOptions(const po::variables_map& vm) {
    if (vm.count("approx")) {
      const std::string method = vm["approx"].as<std::string>();
      if (method != "nystrom")
        throw Error("--approx expects nystrom, got '" + method + "'");
      nystrom = true;
      if (!vm.count("landmarks")) throw Error("--approx nystrom needs --landmarks M");
    }
    const bool tuned = !vm["landmark-selection"].defaulted() ||
                       !vm["landmark-rcond"].defaulted() || vm.count("panel-rows");
    if (!nystrom && (vm.count("landmarks") || tuned))
      throw Error("--landmarks, --landmark-selection, --landmark-rcond and --panel-rows apply to "
                  "--approx nystrom only");
    if (!nystrom) return;
    refuse_exact_only_options(vm, "--approx nystrom");
    const approx::NystromSettings s = nystrom_options(vm);
    landmarks = s.landmarks;
    selection = s.selection;
    rcond = s.rcond;
    panel_rows = s.panel_rows;
    seed = s.seed;
  }
};

std::string eigenvalues_csv(const approx::NystromResult& r) {
  std::vector<double> table;
  for (std::size_t j = 0; j < r.eigenvalues.size(); ++j) {
    table.push_back(r.eigenvalues[j]);
    table.push_back(r.explained_ratio[j]);
  }
  return io::format_csv({"eigenvalue", "explained_variance_ratio"}, table);
}

// The kernel a model's manifest names (local: the typed accessors throw
// Error naming the file and field, so call it inside collectively()).
Kernel kernel_from_manifest(const io::Model& model) {
  Kernel kernel;
  kernel.type = Kernel::parse(model.choice("kernel.name", io::manifest_kernel_names()));
  if (model.has("kernel.gamma")) kernel.gamma = model.positive("kernel.gamma");
  if (model.has("kernel.degree"))
    kernel.degree = static_cast<int>(model.integer("kernel.degree", 1, INT_MAX));
  if (model.has("kernel.coef0")) kernel.coef0 = model.number("kernel.coef0");
  return kernel;
}

// Collective: writes the Nystrom model/ (what z(x) = k(x, L) P - offset needs).
void save_nystrom_model(Run& run, const approx::NystromResult& r) {
  const approx::NystromModel& m = r.model;
  const std::string dir = run.staged_path("model");
  Json manifest = run.manifest_header();
  manifest["approximation"] = "nystrom";
  manifest["n"] = r.n;
  manifest["d"] = m.d;
  manifest["k"] = m.k;
  manifest["landmarks"] = m.m;
  manifest["kernel"] = kernel_report(m.kernel);
  manifest["embedding_scale"] = "sqrt(eigenvalue)";
  manifest["projection_definition"] =
      "z(x) = k(x, landmarks) projection - offset; projection = W^-1/2 U, offset = U^T mu";
  run.on_root([&] {
    io::ModelWriter writer(dir);
    writer.add("landmarks", {m.m, m.d, m.landmarks});
    writer.add("projection", {m.m, m.k, m.projection});
    writer.add_vector("offset", m.offset);
    writer.add_vector("eigenvalues", r.eigenvalues);
    writer.finish(manifest);
  });
}

// The Nystrom branch of kpca: fit, write, report.
void run_nystrom(Run& run, const ApproxOptions& approx_options, const Kernel& kernel, int k,
                 double max_memory_per_rank) {
  const Comm& world = run.world();
  approx::NystromSettings settings;
  settings.kernel = kernel;
  settings.components = k;
  settings.landmarks = approx_options.landmarks;
  settings.selection = approx_options.selection;
  settings.seed = approx_options.seed;
  settings.rcond = approx_options.rcond;
  settings.panel_rows = approx_options.panel_rows;
  settings.max_memory_per_rank = max_memory_per_rank;
  const approx::NystromResult result =
      approx::fit_nystrom(run.input(), world, settings, run.timer());

  run.timer().start("write");
  run.write_rows("embedding.csv", io::numbered_columns("c", k), result.embedding);
  run.write("eigenvalues.csv", [&] { return eigenvalues_csv(result); });
  save_nystrom_model(run, result);

  Json& report = run.report;
  const std::int64_t n = result.n, d = result.model.d;
  report["n"] = n;
  report["d"] = d;
  report["components"] = k;
  report["kernel"] = kernel_report(result.model.kernel);
  report["approximation"] = {
      {"method", "nystrom"},
      {"landmarks", result.model.m},
      {"landmark_selection", approx::landmark_selection_name(settings.selection)},
      {"seed", settings.seed},
      {"rcond", settings.rcond},
      {"directions_kept", result.kept},
      {"dropped_directions", result.dropped},
      {"w_largest_eigenvalue", result.w_largest},
      {"w_smallest_kept_eigenvalue", result.w_smallest_kept},
      {"pass1_accumulates", result.gram_route ? "C^T C (then B^T C^T C B)" : "F^T F"},
      {"passes_over_data", result.passes},
      {"panel_rows", result.panel_rows},
      {"feature_map", "F = C B, C = K(X, L), B = Q_r diag(s_r)^-1/2 from W = K(L, L) = Q diag(s) Q^T"},
  };
  report["solver_used"] = "dsyevd of the r x r covariance S = F^T F - n mu mu^T";
  report["centering"] =
      "feature mean of the approximation removed: S = F^T F - n mu mu^T, mu = F^T 1 / n "
      "(the eigenvalues of J C W^+ C^T J, J = I - 11^T/n)";
  report["eigenvalues"] = result.eigenvalues;
  report["eigenvalue_definition"] =
      "eigenvalues of the centered approximate n x n kernel J C W^+ C^T J (exact kpca's scale; "
      "equal to exact kpca's when every sample is a landmark)";
  report["explained_variance_ratio"] = result.explained_ratio;
  report["trace_centered_kernel"] = result.trace;
  report["embedding_scale"] = "z_j = (F - 1 mu^T) u_j = sqrt(lambda_j) v_j";
  report["sign_convention"] = "largest |entry| of each embedding column is positive";
  std::vector<std::pair<std::string, double>> items =
      approx::nystrom_memory(n, d, result.model.m, k, world.size(), result.panel_rows,
                             settings.selection);
  double estimate = 0;
  for (const auto& item : items) estimate += item.second;
  report["memory_estimate_bytes_per_rank"] = estimate;
  report["memory_limit_bytes_per_rank"] = result.memory_limit;
  run.summary = "n = " + std::to_string(n) + ", k = " + std::to_string(k) + ", Nystrom with " +
                std::to_string(result.model.m) + " landmarks (" +
                std::to_string(result.dropped) + " directions dropped), " +
                std::to_string(world.size()) + " ranks";
}

// Collective: the kernel ridge pre-image map fitted on the training
// embedding A diag(lambda) (the product apply_inverse_map rebuilds).
InverseMap fit_inverse(const Comm& world, io::MatrixFile& file, const KpcaResult& r, int k,
                       double alpha, const BlacsGrid& grid, int block_size) {
  std::vector<double> embedding(std::size_t(r.n) * k);
  if (world.is_root())
    for (std::size_t t = 0; t < embedding.size(); ++t)
      embedding[t] = r.coefficients[t] * r.eigenvalues[t % k];
  world.broadcast(embedding.data(), embedding.size());
  return fit_inverse_map(r.kernel, embedding, k, file, alpha, grid, block_size);
}

// Collective: writes model/ into the staging directory.
void save_model(Run& run, const KpcaResult& r, int k, const InverseMap* inverse, double alpha) {
  const std::string dir = run.staged_path("model");
  std::optional<io::ModelWriter> writer;
  std::vector<double> weights;
  if (inverse) weights = inverse->weights.gather_to_root();  // column-major n x d
  run.on_root([&] {
    writer.emplace(dir);
    writer->add("coefficients", {r.n, k, r.coefficients});
    writer->add_vector("kernel_col_means", r.col_means);
    writer->add_vector("eigenvalues", r.eigenvalues);
    if (!inverse) return;
    io::Array w{r.n, r.d, std::vector<double>(weights.size())};
    for (std::int64_t i = 0; i < r.n; ++i)
      for (std::int64_t t = 0; t < r.d; ++t)
        w.values[std::size_t(i) * r.d + t] = weights[std::size_t(t) * r.n + i];
    writer->add("inverse_weights", w);
    writer->add_vector("inverse_mean", inverse->mean);
  });
  Json manifest = run.manifest_header();
  manifest["n"] = r.n;
  manifest["d"] = r.d;
  manifest["k"] = k;
  manifest["kernel"] = kernel_report(r.kernel);
  manifest["kernel_grand_mean"] = r.grand_mean;
  manifest["embedding_scale"] = "sqrt(eigenvalue)";
  if (inverse)
    manifest["inverse_map"] = {{"alpha", alpha},
                               {"definition", "x(z) = inverse_mean + k(z, Z) inverse_weights, "
                                              "Z = coefficients diag(eigenvalues)"}};
  const bool has_samples = r.kernel.type != KernelType::precomputed;
  if (has_samples)
    manifest["data_fingerprint_mix64sum"] = io::copy_to_npy(run.world(), run.input(), dir + "/X.npy");
  run.on_root([&] {
    if (has_samples) writer->add_written("X", r.n, r.d);
    writer->finish(manifest);
  });
}

// Collective: z(x) = k(x, L) P - offset for every point.
Projection project_nystrom(const io::Model& model, io::MatrixFile& points, const Comm& comm) {
  approx::NystromModel m;
  collectively(comm, [&] {
    m.kernel = kernel_from_manifest(model);
    m.d = model.integer("d", 1, io::kMaxModelDimension);
    m.m = model.integer("landmarks", 1, io::kMaxModelDimension);
    m.k = static_cast<int>(model.integer("k", 1, m.m));
  });
  m.landmarks = model.small(comm, "landmarks", m.m, m.d).values;
  m.projection = model.small(comm, "projection", m.m, m.k).values;
  m.offset = model.vector(comm, "offset", m.k);
  collectively(comm, [&] {
    if (points.cols() != m.d)
      throw Error(points.path() + ": has " + std::to_string(points.cols()) +
                  " columns, but the model was fitted on " + std::to_string(m.d));
  });
  return {m.k, approx::nystrom_transform(m, points, comm)};
}

}  // namespace

approx::NystromSettings nystrom_options(const po::variables_map& vm) {
  approx::NystromSettings s;
  if (!vm.count("landmarks")) throw Error("--approx nystrom needs --landmarks M");
  s.landmarks = vm["landmarks"].as<std::int64_t>();
  if (s.landmarks < 1)
    throw Error("--landmarks must be at least 1, got " + std::to_string(s.landmarks));
  if (vm.count("landmark-selection"))
    s.selection = approx::parse_landmark_selection(vm["landmark-selection"].as<std::string>());
  if (vm.count("landmark-rcond")) {
    s.rcond = vm["landmark-rcond"].as<double>();
    if (!(s.rcond >= 0 && s.rcond < 1))
      throw Error("--landmark-rcond must be in [0, 1), got " + io::format_double(s.rcond));
  }
  if (vm.count("panel-rows")) {
    s.panel_rows = vm["panel-rows"].as<std::int64_t>();
    if (s.panel_rows < 1)
      throw Error("--panel-rows must be at least 1, got " + std::to_string(s.panel_rows));
  }
  if (vm.count("seed")) {
    const std::int64_t seed = vm["seed"].as<std::int64_t>();
    if (seed < 0) throw Error("--seed must be at least 0");
    s.seed = static_cast<std::uint64_t>(seed);
  }
  if (vm.count("max-memory-per-rank"))
    s.max_memory_per_rank = parse_bytes(vm["max-memory-per-rank"].as<std::string>());
  return s;
}

po::options_description kpca_options() {
  po::options_description all;
  all.add(InputOptions::description("data file (.csv/.tsv/.txt, .npy, .bin), or the kernel "
                                    "matrix with --kernel precomputed"))
      .add(OutputOptions::description())
      .add(SolveOptions::description())
      .add(KernelOptions::description())
      .add(InverseOptions::description())
      .add(PrecisionOptions::description())
      .add(StorageOptions::description())
      .add(ApproxOptions::description());
  return all;
}

void run_kpca(const po::variables_map& vm, const Comm& world) {
  const InputOptions in(vm);
  const OutputOptions output(vm);
  SolveOptions solve(vm);
  const KernelOptions kernel(vm);
  const InverseOptions inverse(vm);
  const ApproxOptions approx_options(vm);
  const PrecisionOptions precision(vm, solve);
  const StorageOptions storage(vm, solve);
  if (storage.lower && (kernel.kernel.type == KernelType::precomputed ||
                        kernel.kernel.type == KernelType::laplacian))
    throw Error("--storage lower needs a kernel assembled in tiles (not precomputed or laplacian)");
  if (storage.lower && approx_options.nystrom)
    throw Error("--storage lower applies to the exact n x n kernel, not to --approx nystrom");
  if (storage.none && kernel.kernel.type == KernelType::precomputed)
    throw Error("--storage none recomputes the kernel from the samples; a precomputed kernel has "
                "none (use --storage auto)");
  if (storage.none && approx_options.nystrom)
    throw Error("--storage none applies to the exact n x n kernel, not to --approx nystrom");
  const auto settings_for = [&](int nb) {
    KpcaSettings settings{kernel.kernel, solve.components, solve.solver, nb, KrylovSettings{},
                          solve.max_memory_per_rank};
    settings.single_precision = precision.single;
    settings.storage = storage.request();
    return settings;
  };
  if (precision.single && approx_options.nystrom)
    throw Error("--precision single applies to the exact n x n kernel, not to --approx nystrom");
  if (precision.single && kernel.kernel.type == KernelType::precomputed)
    throw Error(
        "--precision single needs the samples to assemble the kernel from; a "
        "precomputed kernel is read in double (use --precision double)");
  if (approx_options.nystrom) {
    if (kernel.kernel.type == KernelType::precomputed)
      throw Error("--approx nystrom needs the samples to evaluate the kernel at the landmarks; a "
                  "precomputed kernel has none (use the exact path: leave out --approx)");
    if (inverse.fit) throw Error("--fit-inverse is not available with --approx nystrom");
    if (solve.dry_run)
      throw Error("--dry-run plans the exact path; for --approx nystrom use kembed plan kpca "
                  "--approx nystrom --landmarks M");
  }
  if (inverse.fit && kernel.kernel.type == KernelType::precomputed)
    throw Error("--fit-inverse needs the training samples; a precomputed kernel has none");
  const int k = solve.components;
  Job job("kpca", output, solve.layout, {in.input}, [&](const Comm& c) { return in.open(c); });
  job.with_dry_run(solve, [&](const io::MatrixFile& file, const BlacsGrid& grid) {
    const std::int64_t d = kernel.kernel.type == KernelType::precomputed ? 0 : file.cols();
    ProblemShape shape{file.rows(), d, k, grid.nprow(), grid.npcol(), solve.layout.block_size,
                       solve.solver};
    shape.single_precision = precision.single;
    shape.single_precision_available = d > 0;
    KpcaSettings settings = settings_for(solve.layout.block_size);
    settings.krylov = solve.krylov;
    const double limit = solve.max_memory_per_rank > 0 ? solve.max_memory_per_rank
                                                       : available_memory_per_rank(grid.comm());
    return shown_shape(kpca_fit_plan(settings, shape, limit, grid.comm().size()), settings.solver);
  });
  drive(vm, world, job, [&](Run& run) {
    if (approx_options.nystrom)
      return run_nystrom(run, approx_options, kernel.kernel, k, solve.max_memory_per_rank);
    const int nb = run.use_block_size_for(run.input().rows());
    KpcaSettings settings = settings_for(nb);
    settings.krylov = run.krylov(solve);
    const KpcaResult result = fit_kpca(run.input(), run.grid(), settings, run.timer());
    run.solver(solve, {result.solver_used, result.solver_note, result.iterations, result.matvecs,
                       result.estimated_peak_bytes, result.memory_limit_bytes});
    std::optional<InverseMap> inverse_map;
    if (inverse.fit) {
      run.timer().start("inverse");
      inverse_map = fit_inverse(world, run.input(), result, k, inverse.alpha, run.grid(), nb);
    }

    run.timer().start("write");
    run.write_rows("embedding.csv", io::numbered_columns("c", k), result.embedding);
    run.write("eigenvalues.csv", [&] { return eigenvalues_csv(result); });
    save_model(run, result, k, inverse_map ? &*inverse_map : nullptr, inverse.alpha);

    Json& report = run.report;
    if (inverse.fit) report["inverse_map"] = {{"alpha", inverse.alpha}};
    report["n"] = result.n;
    report["d"] = result.d;
    report["components"] = k;
    report["kernel"] = kernel_report(result.kernel);
    report["centering"] = "K~ = J K J, J = I - 11^T/n (feature-space mean removed)";
    report["eigenvalues"] = result.eigenvalues;
    report["explained_variance_ratio"] = result.explained_ratio;
    report["trace_centered_kernel"] = result.trace;
    report["frobenius_norm_centered_kernel"] = result.frobenius_norm;
    report["relative_residuals"] = result.residuals;
    report["residual_definition"] = "||K~ v - lambda v||_2 / ||K~||_F";
    report["precision"] = precision.single ? "single" : "double";
    if (precision.single)
      report["precision_definition"] =
          "K~ stored as float32 (assembled and centered in double, each entry rounded once); "
          "products K~ V in sgemm on V rounded to float; basis, Rayleigh-Ritz and residuals in "
          "double; residuals and norms are of the stored K~";
    report_storage(report, world, "kpca", "kernel_storage", result.storage, "K~",
                   result.storage_note, result.passes);
    if (!result.spectrum.empty()) report["smallest_relative_gap"] = result.smallest_gap;
    report["embedding_scale"] = "z_j = sqrt(lambda_j) v_j (scikit-learn KernelPCA convention)";
    report["sign_convention"] = "largest |entry| of each eigenvector is positive";
    run.summary = "n = " + std::to_string(result.n) + ", k = " + std::to_string(k) + ", " +
                  std::to_string(world.size()) + " ranks";
  });
}

Projection project_kpca(const io::Model& model, io::MatrixFile& points, const BlacsGrid& grid,
                        int block_size) {
  const Comm& comm = grid.comm();
  if (model.has("approximation")) return project_nystrom(model, points, comm);
  KpcaModelStats s = kpca_model_stats(model, comm);
  const KpcaProjection p{s.kernel, s.n, s.d, s.k, std::move(s.col_means), s.grand_mean};
  auto coefficients = model.large(comm, "coefficients");
  std::unique_ptr<io::MatrixFile> training;
  if (p.kernel.type != KernelType::precomputed) training = model.large(comm, "X");
  return {p.k, kpca_transform(p, training.get(), *coefficients, points, grid, block_size)};
}

KpcaModelStats kpca_model_stats(const io::Model& model, const Comm& comm) {
  // The manifest was validated field by field when the model was opened;
  // the typed accessors still name the file and field if anything is off.
  KpcaModelStats stats;
  collectively(comm, [&] {
    if (model.has("approximation"))
      throw Error(model.manifest_path() + ": a Nystrom model (kpca --approx nystrom) holds no "
                  "training samples or kernel means; pre-images need an exact kernel PCA model "
                  "(refit without --approx)");
    stats.kernel = kernel_from_manifest(model);
    stats.n = model.integer("n", 2, io::kMaxModelDimension);
    stats.d = model.integer("d", 0, io::kMaxModelDimension);
    stats.k = static_cast<int>(model.integer("k", 1, stats.n));
    stats.grand_mean = model.number("kernel_grand_mean");
  });
  stats.col_means = model.vector(comm, "kernel_col_means", stats.n);
  stats.eigenvalues = model.vector(comm, "eigenvalues", stats.k);
  return stats;
}

}  // namespace kembed::app
