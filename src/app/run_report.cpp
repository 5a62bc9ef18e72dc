#include "kembed/app/run_report.hpp"

#include <cstdio>
#include <cstdlib>

#include "kembed/app/version.hpp"
#include "kembed/core/memory.hpp"
#include "kembed/core/simd_level.hpp"
#include "kembed/linalg/library_versions.hpp"
#include "kembed/spectral/time_estimate.hpp"

namespace kembed::app {

// The app layer drives the methods and their kernels.
using namespace kembed::spectral;
using namespace kembed::kernel;

Json common_report(const std::string& method, int block_size, const io::MatrixFile& input,
                   const BlacsGrid& grid, const PhaseTimer& timer) {
  const Comm& comm = grid.comm();
  Json report;
  // 2: the fields below in every command's run.json, solver_note for every
  // fallback, memory_*_bytes_per_rank for every fit.
  report["schema_version"] = 2;
  report["method"] = method;
  report["kembed_version"] = KEMBED_VERSION;
  report["input"] = {{"path", input.path()},
                     {"format", input.format()},
                     {"rows", input.rows()},
                     {"cols", input.cols()}};
  report["ranks"] = comm.size();
  report["grid"] = {{"nprow", grid.nprow()}, {"npcol", grid.npcol()}};
  report["block_size"] = block_size;
  const char* threads = std::getenv("OPENBLAS_NUM_THREADS");
  report["openblas_num_threads"] = threads ? threads : "unset";
  const std::string core = linalg::blas_core();
  if (!core.empty()) report["openblas_core"] = core;
  const std::string note = linalg::blas_core_note(core, best_simd_level());
  if (!note.empty()) report["openblas_core_note"] = note;
  Json times = Json::object();
  double total = 0;
  for (const auto& [phase, seconds] : timer.max_over_ranks(comm)) {
    times[phase] = seconds;
    total += seconds;
  }
  report["time_seconds"] = times;
  report["time_seconds_total"] = total;
  report["peak_memory_bytes_per_rank_max"] = comm.max(static_cast<long long>(peak_rss_bytes()));
  return report;
}

void report_storage(Json& report, const Comm& comm, const std::string& method,
                    const std::string& key, spectral::MatrixStorage storage,
                    const std::string& matrix, const std::string& note, long long passes) {
  report[key] = spectral::storage_name(storage);
  if (storage == spectral::MatrixStorage::lower_blocks)
    report[key + "_definition"] =
        "only the blocks of " + matrix + " on and below the block diagonal are stored (the "
        "diagonal blocks whole); each product reads a block below the diagonal once for " +
        matrix + "_IJ X_J and " + matrix + "_IJ^T X_I";
  if (storage == spectral::MatrixStorage::none) {
    report[key + "_definition"] =
        "nothing n x n is stored: every product recomputes the blocks on and below the block "
        "diagonal from the points, a chunk at a time, each used for " + matrix + "_IJ X_J and " +
        matrix + "_IJ^T X_I; centering is applied to the product: " + matrix +
        " X = A X - 1 (m^T X) - m (1^T X) + g 1 (1^T X) with m the row means and g the grand "
        "mean of the uncentered A, taken in a pass of their own";
    report[key + "_passes"] = passes;
  }
  if (note.empty()) return;
  report[key + "_note"] = note;
  if (comm.is_root()) {
    std::fprintf(stderr, "kembed %s: note: %s\n", method.c_str(), note.c_str());
    std::fflush(stderr);
  }
}

std::string describe_plan(const std::string& title, const ProblemShape& shape, int ranks,
                          double available, const std::string& extra) {
  const Solver solver = resolve_solver(shape.solver, shape.n, shape.k);
  std::string text = title + ": " + std::to_string(shape.n) + " x " + std::to_string(shape.n) +
                     (shape.sparse_entries > 0 ? " operator" : " matrix");
  if (shape.sparse_entries > 0)
    text += " of " + std::to_string(shape.data_rows) + " x " + std::to_string(shape.data_cols) +
            " sparse data (at most " + std::to_string(shape.sparse_entries) +
            " stored entries on a rank)";
  else if (shape.data_rows > 0)
    text += " from " + std::to_string(shape.data_rows) + " x " + std::to_string(shape.data_cols) +
            " data";
  else if (shape.d > 0)
    text += " from points with d = " + std::to_string(shape.d);
  text += ", k = " + std::to_string(shape.k) + ", solver " +
          (shape.graph_multigrid ? std::string("lobpcg with the graph's multigrid")
                                 : solver_name(shape.solver));
  if (shape.solver == Solver::automatic) text += " (" + solver_name(solver) + ")";
  text += ", " + std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks") + " on a " + std::to_string(shape.nprow) + "x" +
          std::to_string(shape.npcol) + " grid, block size " + std::to_string(shape.block_size) +
          "\nestimated memory of the busiest rank:\n" + plan_memory(shape).describe() + extra +
          "available per rank: " + human_bytes(available);
  const std::string shortfall = memory_shortfall(shape, ranks, available);
  text += shortfall.empty() ? " (fits)" : "\n" + shortfall.substr(0, shortfall.find('\n'));
  return text;
}

ProblemShape shown_shape(const FitPlan& plan, Solver asked) {
  ProblemShape shape = plan.shape;
  if (plan.storage != MatrixStorage::none) shape.solver = asked;
  return shape;
}

std::string describe_fit_time(const ProblemShape& shape) {
  const MachineRates rates = measure_machine_rates(shape.d);
  return describe_time_estimate(shape, estimate_time(shape, rates), rates);
}

void print_dry_run(const Comm& world, const std::string& method, const ProblemShape& shape,
                   double max_memory_per_rank) {
  const double available =
      max_memory_per_rank > 0 ? max_memory_per_rank : available_memory_per_rank(world);
  // mds --add's additive constant is not in the model.
  const bool timed = (method == "kpca" || method == "mds") && shape.d >= 1 &&
                     shape.data_rows == 0 && shape.additive_blocks == 0;
  say(world, false,
      describe_plan("kembed " + method + " --dry-run", shape, world.size(), available,
                    timed ? describe_fit_time(shape) : ""));
}

void say(const Comm& comm, bool quiet, const std::string& message) {
  if (quiet || !comm.is_root()) return;
  std::fprintf(stdout, "%s\n", message.c_str());
  std::fflush(stdout);
}

}  // namespace kembed::app
