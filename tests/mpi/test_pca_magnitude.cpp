// check_pca_magnitude: values up to the limit pass (the boundary itself
// included), and of several too-large entries spread over the ranks the one
// first in file (row-major) order is named, identically on every rank, on
// every grid shape and two block sizes: local storage is column-major and
// block-cyclic, so a rank's first flagged entry is often not the global first.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
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

}  // namespace

TEST(PcaMagnitude, NamesTheFirstTooLargeEntryInFileOrderOnEveryRank) {
  const Comm world = Comm::world();
  const double limit = spectral::largest_pca_magnitude(n, d);
  // The documented bound, sqrt(DBL_MAX / (16 n max(n, d))).
  EXPECT_NEAR(limit / std::sqrt(DBL_MAX / (16.0 * n * n)), 1.0, 1e-15);
  const double above = std::nextafter(limit, std::numeric_limits<double>::infinity());
  // Flagged entries by (row, column); listed out of row-major order on purpose.
  const std::map<Entry, double> flagged = {
      {{9, 0}, 5e200},
      {{4, 4}, above},
      {{6, 2}, -above},
      {{11, 1}, std::numeric_limits<double>::quiet_NaN()},
      {{4, 3}, -3e200},
      {{12, 4}, -std::numeric_limits<double>::infinity()},
  };
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
      // Remove the first flagged entry after each check: each of them is
      // named in turn. Then each alone: no kind escapes the first pass.
      std::vector<std::map<Entry, double>> cases;
      for (auto it = flagged.begin(); it != flagged.end(); ++it) cases.emplace_back(it, flagged.end());
      for (const auto& entry : flagged) cases.push_back({entry});
      for (const auto& left : cases) {
        // std::map orders (row, column) pairs as the file does.
        const auto [first, value] = *left.begin();
        x.fill([&](std::int64_t i, std::int64_t j) {
          const auto it = left.find({i, j});
          return it == left.end() ? ordinary(i, j) : it->second;
        });
        char text[32];
        std::snprintf(text, sizeof text, "%.6g", value);
        const std::string want = "M.npy: row " + std::to_string(first.first + 1) + ", column " +
                                 std::to_string(first.second + 1) + " (1-based): value " + text +
                                 " is too large for PCA";
        const std::string message = caught([&] { spectral::check_pca_magnitude(x, "M.npy"); });
        const bool ok = message.rfind(want, 0) == 0;
        if (!ok) ADD_FAILURE() << "rank " << world.rank() << " got '" << message << "'";
        EXPECT_TRUE(all_ranks(world, ok))
            << "wanted '" << want << "' on grid " << p << "x" << q << ", nb " << nb << ", "
            << left.size() << " flagged";
      }
    }
}
