#include "kembed/approx/landmarks.hpp"

#include <algorithm>
#include <string>
#include <unordered_set>

#include "kembed/core/error.hpp"
#include "kembed/core/splitmix64.hpp"

namespace kembed::approx {

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
