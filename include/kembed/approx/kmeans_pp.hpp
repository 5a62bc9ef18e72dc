#pragma once
/// @file k-means++ seeding (D^2 sampling, Arthur and Vassilvitskii 2007) as
/// a landmark choice, done in parallel over the ranks' rows.
#include <cstdint>
#include <vector>

#include "kembed/core/index_range.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::approx {

/// Chosen landmarks: their global rows (in the order picked) and coordinates.
struct PickedPoints {
  std::vector<std::int64_t> rows;  ///< m global row indices, in pick order
  std::vector<double> points;      ///< m x d, row-major, in the same order
};

/// Collective: m rows of an n x d data set chosen by k-means++ seeding: the
/// first uniformly, each next one with probability proportional to its
/// squared Euclidean distance to the nearest point already chosen. Rank r
/// holds rows `mine` (contiguous; the ranks' ranges tile 0..n-1 in rank
/// order) in `local`, row-major.
///
/// The result depends on the data and `seed` only, not on the number of
/// ranks: the weights are the squared distances quantized to integers
/// (relative to the largest one), so their sums over ranks are exact, and
/// every rank draws the same variate from the seed; the rank whose prefix
/// of the weights holds it names the row. The rows are distinct and so are
/// the points (a point at distance 0 from a chosen one has weight 0), except
/// when fewer than m distinct points exist: the remaining picks are then
/// uniform among the rows not yet chosen.
/// @pre 1 <= m <= n
PickedPoints kmeans_pp_landmarks(const Comm& comm, const std::vector<double>& local,
                                 IndexRange mine, std::int64_t n, int d, std::int64_t m,
                                 std::uint64_t seed);

}  // namespace kembed::approx
