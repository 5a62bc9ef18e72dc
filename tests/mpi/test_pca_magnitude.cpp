// check_pca_magnitude: values up to the limit pass (the boundary itself
// included), and of several too-large entries spread over the ranks the one
// first in file (row-major) order is named, identically on every rank, on
// every grid shape and two block sizes: local storage is column-major and
// block-cyclic, so a rank's first flagged entry is often not the global first.
// The row-panel overload names the same entries for panels of any lengths.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kembed/core/error.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/spectral/magnitude.hpp"
#include "test_support.hpp"

using namespace kembed;
using kembed::test::all_ranks;
using kembed::test::caught;

namespace {

constexpr std::int64_t n = 13, d = 5;
using Entry = std::pair<std::int64_t, std::int64_t>;  // (row, column), 0-based


double ordinary(std::int64_t i, std::int64_t j) {
  return std::sin(1.7 * static_cast<double>(i) + 0.3 * static_cast<double>(j)) * 100;
}

// Flagged entries by (row, column); listed out of row-major order on purpose.
std::map<Entry, double> flagged_entries(double above) {
  return {
      {{9, 0}, 5e200},
      {{4, 4}, above},
      {{6, 2}, -above},
      {{11, 1}, std::numeric_limits<double>::quiet_NaN()},
      {{4, 3}, -3e200},
      {{12, 4}, -std::numeric_limits<double>::infinity()},
  };
}

// Each flagged entry removed in turn from the front, then each alone: each
// is named in turn, and no kind escapes the first pass.
std::vector<std::map<Entry, double>> flagged_cases(const std::map<Entry, double>& flagged) {
  std::vector<std::map<Entry, double>> cases;
  for (auto it = flagged.begin(); it != flagged.end(); ++it) cases.emplace_back(it, flagged.end());
  for (const auto& entry : flagged) cases.push_back({entry});
  return cases;
}

// The start of the message naming the first of `left` (std::map orders
// (row, column) pairs as the file does).
std::string wanted(const std::map<Entry, double>& left) {
  const auto [first, value] = *left.begin();
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return "M.npy: row " + std::to_string(first.first + 1) + ", column " +
         std::to_string(first.second + 1) + " (1-based): value " + text + " is too large for PCA";
}

double entry(const std::map<Entry, double>& left, std::int64_t i, std::int64_t j) {
  const auto it = left.find({i, j});
  return it == left.end() ? ordinary(i, j) : it->second;
}

// Panel boundaries (p + 1 of them) for p ranks: an even split (kind 0), all
// rows on the last rank (1), all on the first (2), and panels of 5 rows with
// the rest on the last rank (3).
std::vector<std::int64_t> panel_bounds(int kind, int p) {
  std::vector<std::int64_t> bounds(p + 1);
  for (int q = 0; q <= p; ++q) {
    const std::int64_t at[] = {n * q / p, q == p ? n : 0, q == 0 ? 0 : n,
                               q == p ? n : std::min<std::int64_t>(n, 5 * q)};
    bounds[q] = at[kind];
  }
  return bounds;
}

}  // namespace

TEST(PcaMagnitude, NamesTheFirstTooLargeEntryInFileOrderOnEveryRank) {
  const Comm world = Comm::world();
  const double limit = spectral::largest_pca_magnitude(n, d);
  // The documented bound, sqrt(DBL_MAX / (16 n max(n, d))).
  EXPECT_NEAR(limit / std::sqrt(DBL_MAX / (16.0 * n * n)), 1.0, 1e-15);
  const double above = std::nextafter(limit, std::numeric_limits<double>::infinity());
  for (auto [p, q] : test::grid_shapes(world.size()))
    for (const int nb : {2, 3}) {
      const BlacsGrid grid(world, p, q);
      DistMatrix x(grid, n, d, nb, nb);
      // Exactly +-limit passes.
      x.fill([&](std::int64_t i, std::int64_t j) {
        if (i == 7 && j == 2) return limit;
        if (i == 0 && j == 4) return -limit;
        return ordinary(i, j);
      });
      const std::string none = caught([&] { spectral::check_pca_magnitude(x, "M.npy"); });
      EXPECT_TRUE(all_ranks(world, none.empty())) << none;
      for (const auto& left : flagged_cases(flagged_entries(above))) {
        x.fill([&](std::int64_t i, std::int64_t j) { return entry(left, i, j); });
        const std::string want = wanted(left);
        const std::string message = caught([&] { spectral::check_pca_magnitude(x, "M.npy"); });
        const bool ok = message.rfind(want, 0) == 0;
        if (!ok) ADD_FAILURE() << "rank " << world.rank() << " got '" << message << "'";
        EXPECT_TRUE(all_ranks(world, ok))
            << "wanted '" << want << "' on grid " << p << "x" << q << ", nb " << nb << ", "
            << left.size() << " flagged";
      }
    }
}

// The row-panel overload: every rank holds contiguous rows, some ranks none,
// the panels of unequal length; the same entry is named as by the
// block-cyclic check.
TEST(PcaMagnitude, RowPanelsNameTheSameFirstEntryOnEveryRank) {
  const Comm world = Comm::world();
  const double limit = spectral::largest_pca_magnitude(n, d);
  const double above = std::nextafter(limit, std::numeric_limits<double>::infinity());
  const int p = world.size(), r = world.rank();
  for (int kind = 0; kind < 4; ++kind) {
    const std::vector<std::int64_t> bounds = panel_bounds(kind, p);
    const std::int64_t first = bounds[r], rows = bounds[r + 1] - bounds[r];
    std::vector<double> values(std::size_t(rows * d));
    auto fill = [&](const std::map<Entry, double>& left) {
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < d; ++j) values[std::size_t(i * d + j)] = entry(left, first + i, j);
    };
    const auto check = [&] {
      spectral::check_pca_magnitude(world, values.data(), rows, first, n, d, "M.npy");
    };
    fill({{{7, 2}, limit}, {{0, 4}, -limit}});
    const std::string none = caught(check);
    EXPECT_TRUE(all_ranks(world, none.empty())) << none;
    for (const auto& left : flagged_cases(flagged_entries(above))) {
      fill(left);
      const std::string message = caught(check);
      const bool ok = message.rfind(wanted(left), 0) == 0;
      if (!ok) ADD_FAILURE() << "rank " << r << " got '" << message << "'";
      EXPECT_TRUE(all_ranks(world, ok)) << "wanted '" << wanted(left) << "', " << left.size()
                                        << " flagged, my rows " << first << "+" << rows;
    }
  }
}
