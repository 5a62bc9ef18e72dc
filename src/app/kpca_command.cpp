#include "kembed/app/kpca_command.hpp"

#include "kembed/app/run_report.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/csv_writer.hpp"
#include "kembed/io/output_dir.hpp"
#include "kembed/spectral/kpca.hpp"

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

std::string eigenvalues_csv(const KpcaResult& r) {
  std::vector<double> table;
  for (std::size_t j = 0; j < r.eigenvalues.size(); ++j) {
    table.push_back(r.eigenvalues[j]);
    table.push_back(r.explained_ratio[j]);
  }
  return io::format_csv({"eigenvalue", "explained_variance_ratio"}, table);
}

}  // namespace

po::options_description kpca_options() {
  po::options_description all;
  all.add(InputOptions::description("data file (.csv/.tsv/.txt, .npy, .bin), or the kernel "
                                    "matrix with --kernel precomputed"))
      .add(OutputOptions::description())
      .add(SolveOptions::description())
      .add(KernelOptions::description());
  return all;
}

void run_kpca(const po::variables_map& vm, const Comm& world) {
  const InputOptions in(vm);
  const OutputOptions out_options(vm);
  const SolveOptions solve(vm);
  const KernelOptions kernel(vm);
  PhaseTimer timer;
  timer.start("read");
  collectively(world, [&] {
    if (world.is_root()) io::check_output_path(out_options.output_dir);
  });
  const BlacsGrid grid = solve.make_grid(world);
  auto file = io::open_matrix_file(world, in.input, in.hints);

  KpcaSettings settings{kernel.kernel, solve.components, solve.solver, solve.block_size};
  const KpcaResult result = fit_kpca(*file, grid, settings, timer);

  timer.start("write");
  std::unique_ptr<io::OutputDir> out;
  collectively(world, [&] {
    if (!world.is_root()) return;
    out = std::make_unique<io::OutputDir>(out_options.output_dir);
    out->write("embedding.csv",
               io::format_csv(io::numbered_columns("c", solve.components), result.embedding));
    out->write("eigenvalues.csv", eigenvalues_csv(result));
  });
  timer.stop();

  Json report = common_report("kpca", solve, *file, grid, timer);
  report["n"] = result.n;
  report["d"] = result.d;
  report["components"] = solve.components;
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
  say(world, out_options.quiet,
      "kembed kpca: n = " + std::to_string(result.n) + ", k = " +
          std::to_string(solve.components) + ", " + std::to_string(world.size()) +
          " ranks; results in " + out_options.output_dir + "/ (embedding.csv, eigenvalues.csv, run.json)");
}

}  // namespace kembed::app
