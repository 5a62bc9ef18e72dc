// Kernel and distance assembly on values near the overflow threshold: huge
// rows are computed stably from differences where the true value is
// representable, and are an agreed error naming the first (i, j) where it is
// not. References are computed in the test from differences, pair by pair.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kembed/core/error.hpp"
#include "kembed/kernel/assemble.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/kernel/distance_checks.hpp"
#include "kembed/kernel/distances.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using namespace kembed;
using namespace kembed::kernel;
using kembed::test::all_ranks;
using kembed::test::caught;
using kembed::test::grid_shapes;
using kembed::test::max_abs_diff;

namespace {

// The rows of row-major x (d columns) that `dist` gives this rank, in local order.
std::vector<double> panel_of(const std::vector<double>& x, int d, const BlockCyclic1D& dist) {
  std::vector<double> panel(std::size_t(dist.local_size()) * d);
  for (int l = 0; l < dist.local_size(); ++l)
    for (int t = 0; t < d; ++t)
      panel[std::size_t(l) * d + t] = x[std::size_t(dist.to_global(l)) * d + t];
  return panel;
}

Kernel kernel_of(KernelType type, double gamma) {
  Kernel k;
  k.type = type;
  k.gamma = gamma;
  k.degree = 3;
  k.coef0 = 1;
  return k;
}

// Column-major n x n reference, f(i, j) pair by pair.
template <class F>
std::vector<double> reference(int n, F&& f) {
  std::vector<double> r(std::size_t(n) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) r[std::size_t(j) * n + i] = f(i, j);
  return r;
}

double squared_difference(const std::vector<double>& x, int d, int i, int j) {
  double s = 0;
  for (int t = 0; t < d; ++t) {
    const double u = x[std::size_t(i) * d + t] - x[std::size_t(j) * d + t];
    s += u * u;
  }
  return s;
}

// Runs `fill` on every grid shape and block size; on rank 0 returns the
// largest difference from `expected` over all of them.
template <class Fill>
double worst_over_grids(int n, const std::vector<double>& expected, Fill&& fill) {
  const Comm world = Comm::world();
  double worst = 0;
  for (auto [p, q] : grid_shapes(world.size()))
    for (int nb : {1, 4, 64}) {
      BlacsGrid grid(world, p, q);
      DistMatrix k(grid, n, n, nb, nb);
      fill(k);
      const auto full = k.gather_to_root();
      if (world.is_root()) worst = std::max(worst, max_abs_diff(full, expected));
    }
  return worst;
}


// Collective: true on every rank iff every rank caught a message containing `part`.
bool every_rank_says(const Comm& comm, const std::string& message, const std::string& part) {
  const bool ok = message.find(part) != std::string::npos;
  if (!ok) ADD_FAILURE() << "rank " << comm.rank() << " got '" << message << "', wanted '" << part << "'";
  return all_ranks(comm, ok);
}

}  // namespace

TEST(Overflow, RbfOfHugeDistinctPointsIsTheIdentity) {
  const int n = 13, d = 3;
  auto x = test::random_data(n, d, 7);
  for (double& v : x) v *= 1e200;
  const Kernel kernel = kernel_of(KernelType::rbf, 1.0 / d);
  // exp(-gamma ||x_i - x_j||^2) from the differences: inf off the diagonal.
  const auto expected = reference(n, [&](int i, int j) {
    return std::exp(-kernel.gamma * squared_difference(x, d, i, j));
  });
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) ASSERT_EQ(expected[std::size_t(j) * n + i], i == j ? 1.0 : 0.0);
  const double worst = worst_over_grids(n, expected, [&](DistMatrix& k) {
    assemble_kernel(kernel, panel_of(x, d, k.row_dist()), panel_of(x, d, k.col_dist()), d, k);
  });
  EXPECT_LE(worst, 1e-15);
}

TEST(Overflow, MixOfOrdinaryAndHugeRowsMatchesDifferences) {
  const int n = 17, d = 4;
  auto x = test::random_data(n, d, 3);
  for (int t = 0; t < d; ++t) x[2 * d + t] *= 1e200;  // far from everything
  // Rows 6 and 11 share a huge first coordinate: their norms overflow, their
  // distance is ordinary, and so is their kernel value.
  x[5 * d] = 1e160;
  x[10 * d] = 1e160;
  for (const KernelType type : {KernelType::rbf, KernelType::laplacian}) {
    const Kernel kernel = kernel_of(type, 0.5);
    const auto expected = reference(n, [&](int i, int j) {
      double s = 0;
      for (int t = 0; t < d; ++t) {
        const double u = x[std::size_t(i) * d + t] - x[std::size_t(j) * d + t];
        s += type == KernelType::rbf ? u * u : std::abs(u);
      }
      return std::exp(-kernel.gamma * s);
    });
    ASSERT_GT(expected[std::size_t(10) * n + 5], 1e-3);  // the huge pair is not 0
    const double worst = worst_over_grids(n, expected, [&](DistMatrix& k) {
      assemble_kernel(kernel, panel_of(x, d, k.row_dist()), panel_of(x, d, k.col_dist()), d, k);
    });
    EXPECT_LE(worst, 1e-13) << kernel.name();
  }
  // The cosine does not change when rows are scaled: huge rows give the
  // cosine of the ordinary rows they were made from.
  auto small = test::random_data(n, d, 5), big = small;
  for (int i : {1, 8, 9})
    for (int t = 0; t < d; ++t) big[std::size_t(i) * d + t] *= 1e250;
  const Kernel cosine = kernel_of(KernelType::cosine, 0);
  const auto expected = test::serial_kernel(cosine, small, n, d).a;
  const double worst = worst_over_grids(n, expected, [&](DistMatrix& k) {
    assemble_kernel(cosine, panel_of(big, d, k.row_dist()), panel_of(big, d, k.col_dist()), d, k);
  });
  EXPECT_LE(worst, 1e-14);
}

TEST(Overflow, DotProductKernelsNameTheFirstEntryThatOverflows) {
  const Comm world = Comm::world();
  const int n = 11, d = 2;
  auto x = test::random_data(n, d, 9);
  // x_3.x_3 = 1e300 is finite; x_3.x_8 = 1e320 and x_8.x_8 are not. The
  // first entry in row-major order is (3, 8), 1-based.
  x[2 * d] = 1e150;
  x[2 * d + 1] = 0;
  x[7 * d] = 1e170;
  x[7 * d + 1] = 0;
  const struct {
    KernelType type;
    std::string expected;
  } cases[] = {
      {KernelType::linear, "kernel entry (3, 8) is not finite (x.y overflows: values too large"},
      {KernelType::sigmoid, "kernel entry (3, 8) is not finite (x.y overflows"},
      // x_1.x_3 is finite (about 1e150), but its cube is not: (1, 3) comes first.
      {KernelType::poly, "kernel entry (1, 3) is not finite ((gamma x.y + coef0)^degree overflows"},
  };
  for (const auto& c : cases) {
    const Kernel kernel = kernel_of(c.type, 0.5);
    for (auto [p, q] : grid_shapes(world.size()))
      for (int nb : {1, 3, 64}) {
        BlacsGrid grid(world, p, q);
        DistMatrix k(grid, n, n, nb, nb);
        const auto rows = panel_of(x, d, k.row_dist()), cols = panel_of(x, d, k.col_dist());
        const std::string message = caught([&] { assemble_kernel(kernel, rows, cols, d, k); });
        EXPECT_TRUE(every_rank_says(world, message, c.expected))
            << kernel.name() << " grid " << p << "x" << q << " nb " << nb;
      }
  }
  // Ordinary magnitudes pass untouched (no false alarm).
  const auto ordinary = test::random_data(n, d, 9);
  const Kernel linear = kernel_of(KernelType::linear, 0.5);
  const auto expected = test::serial_kernel(linear, ordinary, n, d).a;
  EXPECT_LE(worst_over_grids(n, expected,
                             [&](DistMatrix& k) {
                               assemble_kernel(linear, panel_of(ordinary, d, k.row_dist()),
                                               panel_of(ordinary, d, k.col_dist()), d, k);
                             }),
            1e-13);
}

TEST(Overflow, DistancesOfPointsWithHugeNormsAreComputedStably) {
  const int n = 10, d = 3;
  // Every row shares a first coordinate of 1e160: the squared norms overflow,
  // the distances are those of the other two coordinates.
  auto x = test::random_data(n, d, 4);
  for (int i = 0; i < n; ++i) x[std::size_t(i) * d] = 1e160;
  for (const Metric metric : {Metric::euclidean, Metric::sqeuclidean, Metric::manhattan}) {
    const auto expected = reference(n, [&](int i, int j) {
      if (metric == Metric::manhattan) {
        double s = 0;
        for (int t = 0; t < d; ++t)
          s += std::abs(x[std::size_t(i) * d + t] - x[std::size_t(j) * d + t]);
        return s;
      }
      const double s = squared_difference(x, d, i, j);
      return metric == Metric::euclidean ? std::sqrt(s) : s;
    });
    const double worst = worst_over_grids(n, expected, [&](DistMatrix& k) {
      assemble_distances(metric, panel_of(x, d, k.row_dist()), panel_of(x, d, k.col_dist()), d, k);
    });
    EXPECT_LE(worst, 1e-14) << metric_name(metric);
  }
}

TEST(Overflow, DistancesWhoseSquaresOverflowAreAnError) {
  const Comm world = Comm::world();
  const int n = 9, d = 2;
  auto x = test::random_data(n, d, 6);
  for (double& v : x) v *= 1e200;  // distances near 1e200: finite, their squares are not
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    DistMatrix k(grid, n, n, 2, 2);
    const auto rows = panel_of(x, d, k.row_dist()), cols = panel_of(x, d, k.col_dist());
    const std::string message =
        caught([&] { assemble_distances(Metric::euclidean, rows, cols, d, k); });
    EXPECT_TRUE(every_rank_says(world, message, "entry (1, 2) (1-based) is "))
        << "grid " << p << "x" << q;
    EXPECT_TRUE(every_rank_says(world, message, "values too large"));
  }
}

TEST(Overflow, GivenDistanceMatrixWhoseSquareOverflowsNamesTheEntry) {
  const Comm world = Comm::world();
  const int n = 9, d = 2;
  const auto x = test::random_data(n, d, 8);
  for (const double big : {1e150, 1e160}) {
    // sqrt(DBL_MAX / (4 n)) = 2.2e153 for n = 9: 1e150 passes, 1e160 does not.
    const bool fits = big < 1e153;
    for (auto [p, q] : grid_shapes(world.size())) {
      BlacsGrid grid(world, p, q);
      DistMatrix dm(grid, n, n, 2, 2);
      dm.fill([&](std::int64_t i, std::int64_t j) {
        if ((i == 3 && j == 6) || (i == 6 && j == 3)) return big;
        return std::sqrt(squared_difference(x, d, int(i), int(j)));
      });
      const std::string message = caught([&] { validate_distances(dm, "D.bin", false); });
      if (fits) {
        EXPECT_TRUE(all_ranks(world, message.empty())) << message;
      } else {
        EXPECT_TRUE(every_rank_says(world, message, "D.bin: entry (4, 7) (1-based) is 1e+160"));
        EXPECT_TRUE(every_rank_says(world, message, "MDS squares the distances"));
      }
    }
  }
}
