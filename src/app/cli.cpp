#include "kembed/app/cli.hpp"

#include <cstdio>

#include "kembed/app/kpca_command.hpp"
#include "kembed/app/options.hpp"
#include "kembed/core/error.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::app {

int run(int argc, char** argv) {
  const Comm world = Comm::world();
  try {
    Parsed parsed;
    collectively(world, [&] { parsed = parse_command_line(argc, argv); });
    if (parsed.kpca) {
      run_kpca(*parsed.kpca, world);
    } else if (world.is_root()) {
      std::fputs(parsed.text.c_str(), stdout);
    }
    return 0;
  } catch (const Error& e) {
    // Every rank holds the same agreed error. Rank 0 reports it and flushes
    // before anyone exits, so mpirun cannot cut the message off.
    if (world.is_root()) {
      std::fprintf(stderr, "kembed: error: %s\n", e.what());
      std::fflush(stderr);
    }
    world.barrier();
    return 1;
  } catch (const std::exception& e) {
    // Not agreed: other ranks may be waiting in a collective. End the job.
    std::fprintf(stderr, "kembed: internal error on rank %d: %s\n", world.rank(), e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
    return 2;
  }
}

}  // namespace kembed::app
