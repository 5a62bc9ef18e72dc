#include "core/fingerprint_sum.hpp"

#include <cstring>

#include "kembed/core/splitmix64.hpp"

// Written once on GCC/Clang vector types (vector_size), as the vector
// exponential (src/kernel/vector_exp.cpp) is: the arithmetic compiles to the
// SIMD instructions of the enclosing function's target. AVX-512DQ has a
// 64-bit lane multiply; AVX2 composes it of three 32-bit ones, which still
// pays at 4 lanes. SSE2's 2 lanes do not pay (measured 1.5x slower than the
// scalar imul), so the baseline runs the same code on 1 lane.

namespace kembed {

namespace {

template <int Lanes>
struct Simd {
  typedef std::uint64_t UInt __attribute__((vector_size(Lanes * sizeof(std::uint64_t))));
};

// mix64 of every lane, in place (vector values passed by value would change
// the ABI between targets).
template <class UInt>
__attribute__((always_inline)) inline void mix_lanes(UInt& z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
}

// Lane l of step s holds value i = s * Lanes + l; its index offset
// (first + i * stride + 1) * gamma advances by Lanes * stride * gamma per
// step (modulo 2^64, as the scalar product), so no per-value multiply by the
// index. The last values go through the same lanes, zero-padded, and the
// padding's terms are masked out of the sum.
template <int Lanes>
__attribute__((always_inline)) inline std::uint64_t strided_sum(const double* values,
                                                                std::uint64_t count,
                                                                std::uint64_t first,
                                                                std::uint64_t stride) {
  using UInt = typename Simd<Lanes>::UInt;
  constexpr std::uint64_t gamma = SplitMix64::kGoldenGamma;
  UInt lane;
  for (int l = 0; l < Lanes; ++l) lane[l] = static_cast<std::uint64_t>(l);
  UInt offset = (lane * stride + (first + 1)) * gamma;
  const std::uint64_t step = std::uint64_t{Lanes} * stride * gamma;
  UInt sum{};
  std::uint64_t i = 0;
  for (; i + Lanes <= count; i += Lanes) {
    UInt bits;
    std::memcpy(&bits, values + i, sizeof bits);
    bits += offset;
    mix_lanes(bits);
    sum += bits;
    offset += step;
  }
  if (i < count) {
    const std::uint64_t left = count - i;
    UInt bits{};
    std::memcpy(&bits, values + i, left * sizeof(double));
    const UInt keep = reinterpret_cast<UInt>(lane < (UInt{} + left));
    bits += offset;
    mix_lanes(bits);
    sum += bits & keep;
  }
  std::uint64_t total = 0;
  for (int l = 0; l < Lanes; ++l) total += sum[l];
  return total;
}

// One function per instruction set; the x86 ones are compiled for their
// target whatever the flags of the build.
#define KEMBED_FINGERPRINT_FUNCTION(SUFFIX, TARGET, LANES)                                   \
  TARGET std::uint64_t strided_##SUFFIX(const double* values, std::uint64_t count,           \
                                        std::uint64_t first, std::uint64_t stride) {         \
    return strided_sum<LANES>(values, count, first, stride);                                 \
  }

KEMBED_FINGERPRINT_FUNCTION(baseline, , 1)

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KEMBED_X86_DISPATCH 1

KEMBED_FINGERPRINT_FUNCTION(avx2, __attribute__((target("avx2"))), 4)
KEMBED_FINGERPRINT_FUNCTION(avx512, __attribute__((target("avx512f,avx512dq"))), 8)
#endif

}  // namespace

std::uint64_t fingerprint_strided(const double* values, std::uint64_t count, std::uint64_t first,
                                  std::uint64_t stride) {
  return fingerprint_strided(values, count, first, stride, best_simd_level());
}

std::uint64_t fingerprint_strided(const double* values, std::uint64_t count, std::uint64_t first,
                                  std::uint64_t stride, SimdLevel level) {
  check_simd_level(level, "data fingerprint");
  switch (level) {
#ifdef KEMBED_X86_DISPATCH
    case SimdLevel::avx512: return strided_avx512(values, count, first, stride);
    case SimdLevel::avx2: return strided_avx2(values, count, first, stride);
#else
    case SimdLevel::avx512:
    case SimdLevel::avx2:
#endif
    case SimdLevel::baseline: return strided_baseline(values, count, first, stride);
  }
  return strided_baseline(values, count, first, stride);
}

}  // namespace kembed
