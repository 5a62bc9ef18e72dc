#pragma once
/// @file SplitMix64 (Steele, Lea and Flood, 2014): a full-period 64-bit
/// generator, cheap and bit-for-bit reproducible on every platform, so every
/// rank draws the same numbers from a seed without communicating.
#include <cstdint>

namespace kembed {

/// SplitMix64's output function (a bijective mixer of 64-bit words).
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The generator: each draw adds the golden gamma to the state and mixes it.
struct SplitMix64 {
  static constexpr std::uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ull;
  std::uint64_t state = 0;

  std::uint64_t next() { return mix64(state += kGoldenGamma); }

  /// Uniform in [0, bound), bound >= 1, without modulo bias (draws in the
  /// short tail of the 64-bit range are rejected).
  std::uint64_t below(std::uint64_t bound) {
    const std::uint64_t limit = ~std::uint64_t(0) - (~std::uint64_t(0) % bound);
    std::uint64_t x;
    do x = next();
    while (x >= limit);
    return x % bound;
  }
};

}  // namespace kembed
