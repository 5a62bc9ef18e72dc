#include "kembed/mpi/session.hpp"

#include <mpi.h>

namespace kembed {

MpiSession::MpiSession(int& argc, char**& argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  // Errors from MPI calls are fatal by default (MPI_ERRORS_ARE_FATAL): a
  // failing collective aborts the whole job rather than leaving ranks waiting.
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace kembed
