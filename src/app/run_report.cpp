#include "kembed/app/run_report.hpp"

#include <cstdio>
#include <cstdlib>

#include "kembed/core/memory.hpp"
#include "kembed/core/version.hpp"

namespace kembed::app {

Json common_report(const std::string& method, int block_size, const io::MatrixFile& input,
                   const BlacsGrid& grid, const PhaseTimer& timer) {
  const Comm& comm = grid.comm();
  Json report;
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

void print_dry_run(const Comm& world, const std::string& method, const ProblemShape& shape,
                   double max_memory_per_rank) {
  const MemoryPlan plan = plan_memory(shape);
  const double available =
      max_memory_per_rank > 0 ? max_memory_per_rank : available_memory_per_rank(world);
  say(world, false,
      "kembed " + method + " --dry-run: n = " + std::to_string(shape.n) + ", d = " +
          std::to_string(shape.d) + ", k = " + std::to_string(shape.k) + ", solver " +
          solver_name(shape.solver) + ", " + std::to_string(world.size()) + " ranks on a " +
          std::to_string(shape.nprow) + "x" + std::to_string(shape.npcol) +
          " grid, block size " + std::to_string(shape.block_size) +
          "\nestimated memory of the busiest rank:\n" + plan.describe() +
          "available per rank: " + human_bytes(available));
}

void say(const Comm& comm, bool quiet, const std::string& message) {
  if (quiet || !comm.is_root()) return;
  std::fprintf(stdout, "%s\n", message.c_str());
  std::fflush(stdout);
}

}  // namespace kembed::app
