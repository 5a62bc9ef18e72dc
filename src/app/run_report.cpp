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

void say(const Comm& comm, bool quiet, const std::string& message) {
  if (quiet || !comm.is_root()) return;
  std::fprintf(stdout, "%s\n", message.c_str());
  std::fflush(stdout);
}

}  // namespace kembed::app
