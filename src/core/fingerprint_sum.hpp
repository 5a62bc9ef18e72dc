#pragma once
/// @file Private: the data fingerprint's sum (kembed/core/data_fingerprint.hpp)
/// over a strided run of values, several lanes at a time.
///
/// Each term takes two 64-bit multiplies, which the scalar loop does one value
/// at a time; here the same arithmetic runs in SIMD lanes, with the instruction
/// set chosen once at run time. The sum is modulo 2^64, so it is bit-identical
/// to fingerprint_term summed in any order, on every instruction set.
#include <cstdint>
#include <string>

namespace kembed {

/// The instruction sets fingerprint_strided is compiled for, in increasing order.
enum class FingerprintVariant {
  baseline,  ///< every x86-64 (or any other) CPU: 1 lane (scalar multiplies)
  avx2,      ///< AVX2: 4 lanes (64-bit multiply composed of 32-bit ones)
  avx512,    ///< AVX-512F and DQ: 8 lanes (native 64-bit multiply)
};

/// The best variant this CPU (and its operating system) supports; fixed for
/// the life of the process.
FingerprintVariant best_fingerprint_variant();

/// "baseline", "avx2" or "avx512".
std::string fingerprint_variant_name(FingerprintVariant variant);

/// The sum modulo 2^64 of fingerprint_term(values[i], first + i * stride) for
/// i < count (all index arithmetic modulo 2^64, as the scalar definition's):
/// a run of one local column, whose rows are `stride` = cols apart in the
/// row-major order, or a contiguous row-major run with stride 1.
std::uint64_t fingerprint_strided(const double* values, std::uint64_t count, std::uint64_t first,
                                  std::uint64_t stride);

/// The same with a given variant (tests compare the variants).
/// @pre variant <= best_fingerprint_variant(), else an Error is thrown
std::uint64_t fingerprint_strided(const double* values, std::uint64_t count, std::uint64_t first,
                                  std::uint64_t stride, FingerprintVariant variant);

}  // namespace kembed
