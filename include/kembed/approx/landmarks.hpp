#pragma once
/// @file Choosing the landmark rows of the approximate methods (Nystrom
/// kernel PCA, landmark MDS): the choice depends on the data and the seed
/// only, never on the number of ranks.
#include <cstdint>
#include <vector>

namespace kembed::approx {

/// `m` distinct row indices of 0..n-1, in ascending order, drawn uniformly
/// without replacement (Floyd's algorithm on a SplitMix64 stream started
/// from `seed`). Deterministic: every rank computes the same answer without
/// communicating. Requires 1 <= m <= n (throws kembed::Error otherwise).
std::vector<std::int64_t> uniform_landmarks(std::int64_t n, std::int64_t m, std::uint64_t seed);

}  // namespace kembed::approx
