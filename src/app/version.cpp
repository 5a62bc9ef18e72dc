#include "kembed/app/version.hpp"

#include "kembed/linalg/library_versions.hpp"
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
  std::string text = std::string("kembed ") + KEMBED_VERSION + " (git " + KEMBED_GIT_REVISION +
                     ")\nsolvers: " + solvers + "\nMPI: " + first_line(Comm::library_version()) +
                     "\n";
  for (const auto& [library, description] : linalg::library_versions())
    text += library + ": " + description + "\n";
  return text;
}


}  // namespace kembed
