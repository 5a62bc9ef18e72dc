#pragma once
/// @file The instruction sets of kembed's hand-vectorized loops (the vector
/// exponential of kernel assembly, the data fingerprint), chosen once at run
/// time so that one binary runs on every x86-64 CPU.
#include <string>

namespace kembed {

/// In increasing order; each loop is compiled for all three.
enum class SimdLevel {
  baseline,  ///< what every x86-64 (or any other) CPU has (SSE2)
  avx2,      ///< AVX2 and FMA: 4 double lanes
  avx512,    ///< AVX-512F and DQ (a 64-bit lane multiply): 8 double lanes
};

/// The best level this CPU (and its operating system) supports; fixed for the
/// life of the process.
SimdLevel best_simd_level();

/// "baseline", "avx2" or "avx512".
std::string simd_level_name(SimdLevel level);

/// Throws an Error naming `what` when the CPU lacks `level` (tests and
/// benchmarks may ask for a level explicitly).
void check_simd_level(SimdLevel level, const std::string& what);

}  // namespace kembed
