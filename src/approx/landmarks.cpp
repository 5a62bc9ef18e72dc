#include "kembed/approx/landmarks.hpp"

#include <algorithm>
#include <string>
#include <unordered_set>

#include "kembed/core/error.hpp"

namespace kembed::approx {

namespace {

// SplitMix64: a full-period 64-bit stream, cheap and reproducible everywhere.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound) without modulo bias (rejection of the short tail).
  std::uint64_t below(std::uint64_t bound) {
    const std::uint64_t limit = ~std::uint64_t(0) - (~std::uint64_t(0) % bound);
    std::uint64_t x;
    do x = next();
    while (x >= limit);
    return x % bound;
  }
};

}  // namespace

std::vector<std::int64_t> uniform_landmarks(std::int64_t n, std::int64_t m, std::uint64_t seed) {
  if (m < 1 || m > n)
    throw Error("the number of landmarks must be between 1 and the number of points (" +
                std::to_string(n) + "), got " + std::to_string(m));
  // Floyd: for j = n-m .. n-1 draw t in [0, j]; take t unless already taken,
  // then j. Every m-subset is equally likely, in O(m) draws.
  SplitMix64 rng{seed ^ 0x6C616E646D61726Bull};
  std::unordered_set<std::int64_t> chosen;
  chosen.reserve(std::size_t(m) * 2);
  for (std::int64_t j = n - m; j < n; ++j) {
    const auto t = static_cast<std::int64_t>(rng.below(std::uint64_t(j) + 1));
    if (!chosen.insert(t).second) chosen.insert(j);
  }
  std::vector<std::int64_t> rows(chosen.begin(), chosen.end());
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace kembed::approx
