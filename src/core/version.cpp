#include "kembed/core/version.hpp"

#include <mpi.h>

namespace kembed {

std::string version_text() {
  char mpi[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(mpi, &len);
  std::string mpi_line(mpi, static_cast<std::size_t>(len));
  if (auto nl = mpi_line.find_first_of("\n,"); nl != std::string::npos) mpi_line.resize(nl);
  std::string solvers = "evd evr krylov";
#ifdef KEMBED_HAVE_ELPA
  solvers += " elpa";
#endif
  return std::string("kembed ") + KEMBED_VERSION + "\nsolvers: " + solvers + "\nMPI: " + mpi_line +
         "\n";
}

}  // namespace kembed
