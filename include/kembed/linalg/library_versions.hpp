#pragma once
/// @file Which numerical libraries this process runs with (for kembed --version).
#include <string>
#include <utility>
#include <vector>

namespace kembed::linalg {

/// (library, description) for BLAS, LAPACK, ScaLAPACK and, when built, ELPA:
/// the version where the library tells it and the shared object the dynamic
/// linker actually loaded (realpath), which on Debian's alternatives-managed
/// BLAS/LAPACK is the only reliable answer. Local, no MPI.
std::vector<std::pair<std::string, std::string>> library_versions();

}  // namespace kembed::linalg
