#pragma once
/// @file Which numerical libraries this process runs with (for kembed --version).
#include <string>
#include <utility>
#include <vector>

#include "kembed/core/simd_level.hpp"

namespace kembed::linalg {

/// (library, description) for BLAS, LAPACK, ScaLAPACK and, when built, ELPA:
/// the version where the library tells it and the shared object the dynamic
/// linker actually loaded (realpath), which on Debian's alternatives-managed
/// BLAS/LAPACK is the only reliable answer. Local, no MPI.
std::vector<std::pair<std::string, std::string>> library_versions();

/// The kernel family OpenBLAS chose for this CPU (openblas_get_corename,
/// e.g. "SkylakeX"), or "" when the BLAS is not OpenBLAS. Local, no MPI.
std::string blas_core();

/// What to do when OpenBLAS runs the kernels of a CPU without the vector
/// instructions of `level` (this CPU's, best_simd_level()), or "": OpenBLAS
/// names its core from the CPU's model, which a virtual machine may hide.
/// On the 2-core development VM it then chose "Prescott" (SSE3) on an
/// AVX-512 CPU, and a single-thread dgemm ran at 15.8 GFlop/s where
/// OPENBLAS_CORETYPE=SkylakeX gave 73.
std::string blas_core_note(const std::string& core, SimdLevel level);

}  // namespace kembed::linalg
