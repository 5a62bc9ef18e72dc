#pragma once
/// @file Version and build information.
#include <string>

namespace kembed {

/// What `kembed --version` prints: the kembed version and git revision, the
/// solvers built, and the MPI, BLAS, LAPACK, ScaLAPACK (and ELPA) libraries
/// this process actually runs with (versions where the libraries tell them,
/// the loaded shared objects otherwise). One "name: value" line each. Local.
std::string version_report();

}  // namespace kembed
