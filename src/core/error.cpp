#include "kembed/core/error.hpp"

#include "kembed/mpi/comm.hpp"

namespace kembed {

void agree(const Comm& comm, const std::string& local_error) {
  // The lowest failing rank wins, so the message is the same on every rank.
  const int mine = local_error.empty() ? comm.size() : comm.rank();
  int first = 0;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm.get());
  if (first == comm.size()) return;
  std::string message = local_error;
  comm.broadcast(message, first);
  throw Error(message);
}

}  // namespace kembed
