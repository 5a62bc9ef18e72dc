#include "kembed/app/kpca_command.hpp"

#include <climits>
#include <optional>

#include "kembed/app/driver.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/csv_writer.hpp"
#include "kembed/io/model.hpp"
#include "kembed/spectral/inverse_map.hpp"
#include "kembed/spectral/kpca.hpp"
#include "kembed/spectral/kpca_transform.hpp"

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
    if (fit && !(alpha > 0)) throw Error("--alpha must be positive, got " + std::to_string(alpha));
  }
};

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
    writer->add("kernel_col_means", {1, r.n, r.col_means});
    writer->add("eigenvalues", {1, k, r.eigenvalues});
    if (!inverse) return;
    io::Array w{r.n, r.d, std::vector<double>(weights.size())};
    for (std::int64_t i = 0; i < r.n; ++i)
      for (std::int64_t t = 0; t < r.d; ++t)
        w.values[std::size_t(i) * r.d + t] = weights[std::size_t(t) * r.n + i];
    writer->add("inverse_weights", w);
    writer->add("inverse_mean", {1, r.d, inverse->mean});
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
    manifest["data_fingerprint_fnv1a64"] = io::copy_to_npy(run.world(), run.input(), dir + "/X.npy");
  run.on_root([&] {
    if (has_samples) writer->add_written("X", r.n, r.d);
    writer->finish(manifest);
  });
}

}  // namespace

po::options_description kpca_options() {
  po::options_description all;
  all.add(InputOptions::description("data file (.csv/.tsv/.txt, .npy, .bin), or the kernel "
                                    "matrix with --kernel precomputed"))
      .add(OutputOptions::description())
      .add(SolveOptions::description())
      .add(KernelOptions::description())
      .add(InverseOptions::description());
  return all;
}

void run_kpca(const po::variables_map& vm, const Comm& world) {
  const InputOptions in(vm);
  const OutputOptions output(vm);
  const SolveOptions solve(vm);
  const KernelOptions kernel(vm);
  const InverseOptions inverse(vm);
  if (inverse.fit && kernel.kernel.type == KernelType::precomputed)
    throw Error("--fit-inverse needs the training samples; a precomputed kernel has none");
  const int k = solve.components;
  Job job("kpca", output, solve.layout, {in.input}, [&](const Comm& c) { return in.open(c); });
  job.with_dry_run(solve, [&](const io::MatrixFile& file, const BlacsGrid& grid) {
    const std::int64_t d = kernel.kernel.type == KernelType::precomputed ? 0 : file.cols();
    return ProblemShape{file.rows(), d, k, grid.nprow(), grid.npcol(), solve.layout.block_size,
                        solve.solver};
  });
  drive(vm, world, job, [&](Run& run) {
    const int nb = run.use_block_size_for(run.input().rows());
    const KpcaSettings settings{kernel.kernel, k, solve.solver, nb, run.krylov(solve),
                                solve.max_memory_per_rank};
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
    stats.kernel.type = Kernel::parse(model.choice("kernel.name", io::manifest_kernel_names()));
    if (model.has("kernel.gamma")) stats.kernel.gamma = model.positive("kernel.gamma");
    if (model.has("kernel.degree"))
      stats.kernel.degree = static_cast<int>(model.integer("kernel.degree", 1, INT_MAX));
    if (model.has("kernel.coef0")) stats.kernel.coef0 = model.number("kernel.coef0");
    stats.n = model.integer("n", 2, io::kMaxModelDimension);
    stats.d = model.integer("d", 0, io::kMaxModelDimension);
    stats.k = static_cast<int>(model.integer("k", 1, stats.n));
    stats.grand_mean = model.number("kernel_grand_mean");
  });
  stats.col_means = model.small(comm, "kernel_col_means", 1, stats.n).values;
  stats.eigenvalues = model.small(comm, "eigenvalues", 1, stats.k).values;
  return stats;
}

}  // namespace kembed::app
