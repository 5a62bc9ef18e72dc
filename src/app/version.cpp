#include "kembed/app/version.hpp"

#include "kembed/linalg/library_versions.hpp"
#include "kembed/io/hdf5.hpp"
#include "kembed/mpi/comm.hpp"

// Set by CMake from `git rev-parse --short HEAD` at configure time.
#ifndef KEMBED_GIT_REVISION
#define KEMBED_GIT_REVISION "unknown"
#endif

namespace kembed {

namespace {

// MPI libraries return several lines (MPICH: its whole configuration); the
// first names the library and its version.
std::string first_line(std::string text) {
  text.resize(text.find_first_of("\n\r") == std::string::npos ? text.size()
                                                              : text.find_first_of("\n\r"));
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\0'))
    text.pop_back();
  return text;
}

}  // namespace

std::string version_report() {
  std::string solvers = "evd evr krylov";
#ifdef KEMBED_HAVE_ELPA
  solvers += " elpa";
#endif
  const std::string hdf5 = io::hdf5_version();
  const std::string formats = hdf5.empty()
                                  ? "input text npy bin, output csv npy (built without HDF5)"
                                  : "input text npy bin h5, output csv npy h5 (parallel HDF5 " + hdf5 + ")";
  std::string text = std::string("kembed ") + KEMBED_VERSION + " (git " + KEMBED_GIT_REVISION +
                     ")\nsolvers: " + solvers + "\nformats: " + formats + "\nMPI: " +
                     first_line(Comm::library_version()) + "\n";
  for (const auto& [library, description] : linalg::library_versions())
    text += library + ": " + description + "\n";
  const std::string note = linalg::blas_core_note(linalg::blas_core(), best_simd_level());
  if (!note.empty()) text += "note: " + note + "\n";
  return text;
}


}  // namespace kembed
