#include "kembed/app/kpca_command.hpp"

#include <optional>

#include "kembed/app/options.hpp"
#include "kembed/app/run_report.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/csv_writer.hpp"
#include "kembed/io/model.hpp"
#include "kembed/io/output_dir.hpp"
#include "kembed/spectral/inverse_map.hpp"
#include "kembed/spectral/kpca.hpp"
#include "kembed/spectral/kpca_transform.hpp"

namespace kembed::app {

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

Kernel kernel_from_report(const Json& j) {
  Kernel kernel;
  kernel.type = Kernel::parse(j.at("name").get<std::string>());
  kernel.gamma = j.value("gamma", 0.0);
  kernel.degree = j.value("degree", 3);
  kernel.coef0 = j.value("coef0", 1.0);
  return kernel;
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
  MPI_Bcast(embedding.data(), static_cast<int>(embedding.size()), MPI_DOUBLE, 0, world.get());
  return fit_inverse_map(r.kernel, embedding, k, file, alpha, grid, block_size);
}

// Collective: writes model/ into the staging directory `out` (rank 0).
void save_model(const Comm& world, const io::OutputDir* out, io::MatrixFile& file,
                const KpcaResult& r, int k, const InverseMap* inverse, double alpha) {
  std::optional<io::ModelWriter> writer;
  std::vector<double> weights;
  if (inverse) weights = inverse->weights.gather_to_root();  // column-major n x d
  collectively(world, [&] {
    if (!world.is_root()) return;
    writer.emplace(out->file("model"));
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
  Json manifest;
  manifest["method"] = "kpca";
  manifest["kembed_version"] = KEMBED_VERSION;
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
  if (r.kernel.type != KernelType::precomputed) {
    std::string path = world.is_root() ? writer->dir() + "/X.npy" : std::string();
    world.broadcast(path);
    manifest["data_fingerprint_fnv1a64"] = io::copy_to_npy(world, file, path);
  }
  collectively(world, [&] {
    if (!world.is_root()) return;
    if (r.kernel.type != KernelType::precomputed) writer->add_written("X", r.n, r.d);
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
  PhaseTimer timer(world);
  timer.start("read");
  output.check_writable(world);
  const BlacsGrid grid = solve.layout.make_grid(world);
  auto file = in.open(world);  // --input, or --generate in memory

  const int k = solve.components;
  KpcaSettings settings{kernel.kernel, k, solve.solver, solve.layout.block_size, solve.krylov,
                        solve.max_memory_per_rank};
  if (solve.dry_run) {
    const std::int64_t d = kernel.kernel.type == KernelType::precomputed ? 0 : file->cols();
    print_dry_run(world, "kpca",
                  {file->rows(), d, k, grid.nprow(), grid.npcol(), solve.layout.block_size,
                   solve.solver},
                  solve.max_memory_per_rank);
    return;
  }
  const KpcaResult result = fit_kpca(*file, grid, settings, timer);

  if (!result.solver_note.empty()) say(world, false, "kembed kpca: note: " + result.solver_note);

  std::optional<InverseMap> inverse_map;
  if (inverse.fit) {
    timer.start("inverse");
    inverse_map = fit_inverse(world, *file, result, k, inverse.alpha, grid,
                              solve.layout.block_size);
  }

  timer.start("write");
  std::unique_ptr<io::OutputDir> out;
  collectively(world, [&] {
    if (!world.is_root()) return;
    out = std::make_unique<io::OutputDir>(output.output_dir);
    out->write("embedding.csv", io::format_csv(io::numbered_columns("c", k), result.embedding));
    out->write("eigenvalues.csv", eigenvalues_csv(result));
  });
  save_model(world, out.get(), *file, result, k, inverse_map ? &*inverse_map : nullptr,
             inverse.alpha);
  timer.stop();

  Json report = common_report("kpca", solve.layout.block_size, *file, grid, timer);
  report["solver"] = solver_name(solve.solver);
  report["solver_used"] = result.solver_used;
  report["memory_estimate_bytes_per_rank"] = result.estimated_peak_bytes;
  report["memory_limit_bytes_per_rank"] = result.memory_limit_bytes;
  if (!result.solver_note.empty()) report["solver_note"] = result.solver_note;
  if (result.solver_used == "krylov") {
    report["krylov"] = {{"tol", solve.krylov.tol},
                        {"seed", solve.krylov.seed},
                        {"cycles", result.iterations},
                        {"block_products", result.matvecs}};
  }
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

  collectively(world, [&] {
    if (!world.is_root()) return;
    out->write("run.json", report.dump(2) + "\n");
    out->commit();
  });
  say(world, output.quiet,
      "kembed kpca: n = " + std::to_string(result.n) + ", k = " + std::to_string(k) + ", " +
          std::to_string(world.size()) + " ranks; results in " + output.output_dir +
          "/ (embedding.csv, eigenvalues.csv, run.json, model/)");
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
  const Json& m = model.manifest();
  KpcaModelStats stats;
  collectively(comm, [&] {
    stats.kernel = kernel_from_report(m.at("kernel"));
    stats.n = m.at("n").get<std::int64_t>();
    stats.d = m.at("d").get<std::int64_t>();
    stats.k = m.at("k").get<int>();
    stats.grand_mean = m.at("kernel_grand_mean").get<double>();
  });
  stats.col_means = model.small(comm, "kernel_col_means", 1, stats.n).values;
  stats.eigenvalues = model.small(comm, "eigenvalues", 1, stats.k).values;
  return stats;
}

}  // namespace kembed::app
