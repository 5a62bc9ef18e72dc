#pragma once
/// @file Private: the data fingerprint's sum (kembed/core/data_fingerprint.hpp)
/// over a strided run of values, several lanes at a time.
///
/// Each term takes two 64-bit multiplies, which the scalar loop does one value
/// at a time; here the same arithmetic runs in SIMD lanes, with the instruction
/// set chosen once at run time. The sum is modulo 2^64, so it is bit-identical
/// to fingerprint_term summed in any order, on every instruction set.
#include <cstdint>

#include "kembed/core/simd_level.hpp"

namespace kembed {

/// The sum modulo 2^64 of fingerprint_term(values[i], first + i * stride) for
/// i < count (all index arithmetic modulo 2^64, as the scalar definition's):
/// a run of one local column, whose rows are `stride` = cols apart in the
/// row-major order, or a contiguous row-major run with stride 1.
std::uint64_t fingerprint_strided(const double* values, std::uint64_t count, std::uint64_t first,
                                  std::uint64_t stride);

/// The same at a given level (tests compare the levels): 1 lane at the
/// baseline (SSE2 has no 64-bit multiply, and 2 lanes measured slower than
/// the scalar one), 4 with AVX2 (composed of 32-bit multiplies), 8 with
/// AVX-512DQ. @pre level <= best_simd_level(), else an Error is thrown
std::uint64_t fingerprint_strided(const double* values, std::uint64_t count, std::uint64_t first,
                                  std::uint64_t stride, SimdLevel level);

}  // namespace kembed
