#include "kembed/app/kpca_command.hpp"

#include "kembed/app/run_report.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/csv_writer.hpp"
#include "kembed/io/output_dir.hpp"
#include "kembed/spectral/kpca.hpp"

namespace kembed::app {

namespace {

BlacsGrid make_grid(const Comm& world, const std::optional<GridShape>& shape) {
  if (!shape) return BlacsGrid(world);
  return BlacsGrid(world, shape->nprow, shape->npcol);
}

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

void run_kpca(const KpcaOptions& options, const Comm& world) {
  const CommonOptions& common = options.common;
  PhaseTimer timer;
  timer.start("read");
  collectively(world, [&] {
    if (world.is_root()) io::check_output_path(common.output_dir);
  });
  const BlacsGrid grid = make_grid(world, common.grid);
  auto file = io::open_matrix_file(world, common.input, {common.rows, common.cols});

  KpcaSettings settings{options.kernel, common.components, common.solver, common.block_size};
  const KpcaResult result = fit_kpca(*file, grid, settings, timer);

  timer.start("write");
  std::unique_ptr<io::OutputDir> out;
  collectively(world, [&] {
    if (!world.is_root()) return;
    out = std::make_unique<io::OutputDir>(common.output_dir);
    out->write("embedding.csv",
               io::format_csv(io::numbered_columns("c", common.components), result.embedding));
    out->write("eigenvalues.csv", eigenvalues_csv(result));
  });
  timer.stop();

  Json report = common_report("kpca", common, *file, grid, timer);
  report["n"] = result.n;
  report["d"] = result.d;
  report["components"] = common.components;
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
  say(world, common.quiet,
      "kembed kpca: n = " + std::to_string(result.n) + ", k = " +
          std::to_string(common.components) + ", " + std::to_string(world.size()) +
          " ranks; results in " + common.output_dir + "/ (embedding.csv, eigenvalues.csv, run.json)");
}

}  // namespace kembed::app
