#pragma once
/// @file SplitMix64 (Steele, Lea and Flood, 2014): a full-period 64-bit
/// generator, cheap and bit-for-bit reproducible on every platform, so every
/// rank draws the same numbers from a seed without communicating.
#include <cmath>
#include <cstdint>

namespace kembed {

/// SplitMix64's output function (a bijective mixer of 64-bit words).
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// A standard normal value for entry (i, j) of stream `seed` that any rank
/// computes alone (SplitMix64 on the entry's counter, then Box-Muller): the
/// random start blocks of the eigensolvers, the same for every rank count.
inline double counter_gaussian(std::uint64_t seed, std::uint64_t i, std::uint64_t j) {
  constexpr std::uint64_t gamma = 0x9E3779B97F4A7C15ull;
  const auto mix = [](std::uint64_t x) { return mix64(x + gamma); };
  const std::uint64_t h = mix(seed ^ mix(i ^ mix(j)));
  const double u1 = (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53;
  const double u2 = (static_cast<double>(mix(h) >> 11) + 0.5) * 0x1.0p-53;
  return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
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
