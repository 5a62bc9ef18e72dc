#include "kembed/core/error.hpp"

#include "kembed/mpi/comm.hpp"

namespace kembed {

void agree(const Comm& comm, const std::string& local_error) {
  // The lowest failing rank wins, so the message is the same on every rank.
  const long long mine = local_error.empty() ? comm.size() : comm.rank();
  const long long first = comm.min(mine);
  if (first == comm.size()) return;
  std::string message = local_error;
  comm.broadcast(message, static_cast<int>(first));
  throw Error(message);
}

}  // namespace kembed
