#include "kembed/approx/kmeans_pp.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "kembed/core/error.hpp"
#include "kembed/core/splitmix64.hpp"

namespace kembed::approx {

namespace {

double squared_distance(const double* x, const double* y, int d) {
  double s = 0;
  for (int t = 0; t < d; ++t) s += (x[t] - y[t]) * (x[t] - y[t]);
  return s;
}

// Collective: the coordinates of global row `row`, which the rank holding it
// contributes (the others add zeros, so the sum is exact).
std::vector<double> share_row(const Comm& comm, const std::vector<double>& local, IndexRange mine,
                              std::int64_t row, int d) {
  std::vector<double> point(d, 0.0);
  if (row >= mine.begin && row < mine.end)
    std::copy_n(&local[std::size_t(row - mine.begin) * d], d, point.begin());
  comm.sum_in_place(point);
  return point;
}

}  // namespace

PickedPoints kmeans_pp_landmarks(const Comm& comm, const std::vector<double>& local,
                                 IndexRange mine, std::int64_t n, int d, std::int64_t m,
                                 std::uint64_t seed) {
  if (m < 1 || m > n)
    throw Error("the number of landmarks must be between 1 and the number of points (" +
                std::to_string(n) + "), got " + std::to_string(m));
  SplitMix64 rng{seed ^ 0x6B6D65616E732B2Bull};
  // Quantized weights: n * 2^bits must stay below 2^62 so that every sum of
  // them is an exact 64-bit integer (and no more bits than a double holds).
  int bits = 62;
  for (std::int64_t v = n; v > 0; v >>= 1) --bits;
  bits = std::min(bits, 52);

  const std::size_t rows = static_cast<std::size_t>(mine.size());
  std::vector<double> nearest(rows, 0.0);
  std::vector<long long> weight(rows, 0);
  std::vector<std::int64_t> chosen_sorted;
  PickedPoints picked;

  auto add = [&](std::int64_t row) {
    const std::vector<double> point = share_row(comm, local, mine, row, d);
    picked.rows.push_back(row);
    picked.points.insert(picked.points.end(), point.begin(), point.end());
    chosen_sorted.insert(std::upper_bound(chosen_sorted.begin(), chosen_sorted.end(), row), row);
    for (std::size_t i = 0; i < rows; ++i) {
      const double s = squared_distance(&local[i * d], point.data(), d);
      nearest[i] = picked.rows.size() == 1 ? s : std::min(nearest[i], s);
    }
  };

  add(static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(n))));
  while (static_cast<std::int64_t>(picked.rows.size()) < m) {
    // The largest distance is exact on every rank, so each row's weight is
    // the same whichever rank holds it.
    double largest = 0;
    for (double s : nearest) largest = std::max(largest, s);
    largest = comm.max(largest);
    long long local_total = 0;
    for (std::size_t i = 0; i < rows; ++i) {
      weight[i] = 0;
      if (nearest[i] > 0 && largest > 0)
        weight[i] = std::max(1LL, static_cast<long long>(std::ldexp(nearest[i] / largest, bits)));
      local_total += weight[i];
    }
    const std::vector<long long> totals = comm.allgatherv(std::vector<long long>{local_total});
    long long before = 0, total = 0;
    for (int r = 0; r < static_cast<int>(totals.size()); ++r) {
      if (r < comm.rank()) before += totals[r];
      total += totals[r];
    }
    std::int64_t row = -1;
    if (total > 0) {
      const auto target = static_cast<long long>(rng.below(static_cast<std::uint64_t>(total)));
      long long found = -1;
      if (target >= before && target < before + local_total) {
        long long run = before;
        for (std::size_t i = 0; i < rows && found < 0; ++i) {
          run += weight[i];
          if (target < run) found = mine.begin + static_cast<long long>(i);
        }
      }
      row = comm.max(found);
    } else {
      // Every row coincides with a chosen point: fewer than m distinct points.
      // The rest are uniform among the rows not chosen yet.
      auto t = static_cast<std::int64_t>(
          rng.below(static_cast<std::uint64_t>(n - static_cast<std::int64_t>(chosen_sorted.size()))));
      row = t;
      for (std::int64_t c : chosen_sorted)
        if (c <= row) ++row;
    }
    add(row);
  }
  return picked;
}

}  // namespace kembed::approx
