#include "kembed/core/fault_injection.hpp"

#include <csignal>
#include <cstdlib>

#include "kembed/core/error.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed {

void fault_checkpoint(const Comm& comm, const std::string& phase) {
  const char* spec = std::getenv("KEMBED_FAULT_INJECT");
  if (!spec || std::string(spec).rfind(phase + ":", 0) != 0) return;
  const std::string rest = std::string(spec).substr(phase.size() + 1);
  const int rank = std::atoi(rest.c_str());
  const bool kill = rest.find(":kill") != std::string::npos;
  if (kill && comm.rank() == rank) std::raise(SIGKILL);
  collectively(comm, [&] {
    if (comm.rank() == rank)
      throw Error("fault injected in phase '" + phase + "' on rank " + std::to_string(rank) +
                  " (KEMBED_FAULT_INJECT)");
  });
}

}  // namespace kembed
