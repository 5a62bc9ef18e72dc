// The SIMD exponential against std::exp, in units in the last place, on every
// instruction set this CPU supports: millions of points over the range kernel
// assembly uses ([-745.2, 0]) and beyond, dense sweeps where the result turns
// subnormal and where it underflows to 0 or overflows, and the special values.
// A wrong polynomial coefficient (anything beyond its last few bits), a wrong
// ln 2 split or a wrong exponent bias moves results by many ulp on one of these
// sets and fails the bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <vector>

#include "kembed/kernel/vector_exp.hpp"
#include "test_support.hpp"

using namespace kembed;
using namespace kembed::kernel;

namespace {

// The documented bound: within 1 ulp of std::exp.
constexpr std::int64_t kMaxUlp = 1;

// Position of a double on the line of all doubles (monotonic, +0 and -0 at 0).
std::int64_t ordinal(double x) {
  std::int64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits < 0 ? -(bits & std::numeric_limits<std::int64_t>::max()) : bits;
}

// Distance in ulp; NaN against NaN is 0, NaN against a number is "infinite".
std::int64_t ulp_distance(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b) ? 0 : std::numeric_limits<std::int64_t>::max();
  if (a == b) return 0;  // also +-inf against itself
  const std::int64_t d = ordinal(a) - ordinal(b);
  return d < 0 ? -d : d;
}

struct Worst {
  std::int64_t ulp = 0;
  double x = 0, got = 0, want = 0;
};

// exp_in_place at `level` over xs, against std::exp point by point.
Worst worst_error(const std::vector<double>& xs, SimdLevel level) {
  std::vector<double> y = xs;
  exp_in_place(y.data(), y.size(), level);
  Worst w;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double want = std::exp(xs[i]);
    const std::int64_t e = ulp_distance(y[i], want);
    if (e > w.ulp) w = {e, xs[i], y[i], want};
  }
  return w;
}

void expect_within_bound(const std::vector<double>& xs, const char* what) {
  for (SimdLevel level : kembed::test::supported_simd_levels()) {
    const Worst w = worst_error(xs, level);
    EXPECT_LE(w.ulp, kMaxUlp) << what << " at " << simd_level_name(level) << ": exp("
                              << std::hexfloat << w.x << ") = " << w.got << ", std::exp gives "
                              << w.want << std::defaultfloat << " (" << w.ulp << " ulp)";
    std::cout << "  " << what << ", " << simd_level_name(level) << ": " << xs.size()
              << " points, max " << w.ulp << " ulp\n";
  }
}

std::vector<double> uniform(double lo, double hi, std::size_t count, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> xs(count);
  for (double& x : xs) x = u(gen);
  return xs;
}

// Equally spaced points from lo to hi, both included.
std::vector<double> sweep(double lo, double hi, std::size_t count) {
  std::vector<double> xs(count);
  for (std::size_t i = 0; i < count; ++i)
    xs[i] = lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(count - 1);
  return xs;
}

}  // namespace

TEST(VectorExp, KernelRangeUniform) {
  expect_within_bound(uniform(-745.2, 0.0, 4'000'000, 1), "uniform [-745.2, 0]");
  expect_within_bound(uniform(-20.0, 0.0, 2'000'000, 2), "uniform [-20, 0]");
  expect_within_bound(uniform(-1.0, 0.0, 1'000'000, 3), "uniform [-1, 0]");
}

TEST(VectorExp, EveryBinadeOfTheArgument) {
  // |x| log-uniform from the smallest subnormal to 746, both signs: every
  // exponent of the input, including arguments too small to change the result.
  std::mt19937_64 gen(4);
  std::uniform_real_distribution<double> e(-1074.0, std::log2(746.0));
  std::vector<double> xs(2'000'000);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double magnitude = std::exp2(e(gen));
    xs[i] = i % 4 == 3 ? std::min(magnitude, 709.0) : -magnitude;
  }
  expect_within_bound(xs, "log-uniform |x| in [2^-1074, 746]");
}

TEST(VectorExp, SubnormalResultsAndUnderflow) {
  // exp(x) < 2^-1022 (the smallest normal) below x = -708.3964: the result
  // loses precision down to 2^-1074 at -744.44 and rounds to 0 below -745.1332.
  expect_within_bound(sweep(-745.2, -708.0, 1'000'001), "sweep [-745.2, -708]");
  expect_within_bound(uniform(-745.14, -745.12, 200'000, 5), "around the last subnormal");
  expect_within_bound(uniform(-708.5, -708.3, 200'000, 6), "around the smallest normal");
}

TEST(VectorExp, ReductionBoundaries) {
  // Where k = round(x / ln 2) changes: x near (j + 1/2) ln 2, for every k of
  // the kernel range, and near multiples of ln 2 (r near 0).
  std::vector<double> xs;
  const double ln2 = std::log(2.0);
  for (int j = -1076; j <= 1; ++j)
    for (double center : {(j + 0.5) * ln2, j * ln2})
      for (int s = -40; s <= 40; ++s) xs.push_back(center + s * 1e-13 * std::max(1.0, -center));
  expect_within_bound(xs, "near (j + 1/2) ln 2 and j ln 2");
}

TEST(VectorExp, PositiveArguments) {
  expect_within_bound(uniform(0.0, 709.78, 1'000'000, 7), "uniform [0, 709.78]");
  expect_within_bound(uniform(709.0, 709.79, 200'000, 8), "up to overflow");
}

TEST(VectorExp, SpecialValuesExactly) {
  const double inf = std::numeric_limits<double>::infinity();
  const double denorm_min = std::numeric_limits<double>::denorm_min();
  const double xs[] = {0.0,
                       -0.0,
                       denorm_min,
                       -denorm_min,
                       -std::numeric_limits<double>::min(),
                       -1e-300,
                       -0x1p-54,
                       -0x1p-53,
                       0x1p-53,
                       -1.0,
                       -745.2,
                       -745.13321910194122,  // just below: rounds to 0
                       -745.1332191019411,   // 2^-1074
                       -746.0,
                       -1000.0,
                       -1e300,
                       -std::numeric_limits<double>::max(),
                       -inf,
                       709.782712893384,  // DBL_MAX after rounding
                       709.79,
                       1e300,
                       inf};
  for (SimdLevel level : kembed::test::supported_simd_levels())
    for (double x : xs) {
      double y = x;
      exp_in_place(&y, 1, level);
      const double want = std::exp(x);
      if (want == 0 || std::isinf(want) || want == 1) {
        // Bitwise: +0 (never -0), +inf, exactly 1.
        EXPECT_EQ(ordinal(y), ordinal(want)) << "exp(" << x << ") at " << simd_level_name(level);
        EXPECT_FALSE(std::signbit(y)) << "exp(" << x << ") at " << simd_level_name(level);
      } else {
        EXPECT_LE(ulp_distance(y, want), kMaxUlp) << "exp(" << x << ")";
      }
    }
  for (SimdLevel level : kembed::test::supported_simd_levels()) {
    double nan = std::numeric_limits<double>::quiet_NaN();
    exp_in_place(&nan, 1, level);
    EXPECT_TRUE(std::isnan(nan)) << simd_level_name(level);
  }
}

TEST(VectorExp, ResultDoesNotDependOnPositionOrLength) {
  // The tail of an array goes through the same lanes as its body, and nothing
  // beyond `count` is written.
  const auto values = uniform(-30.0, 0.0, 40, 9);
  for (SimdLevel level : kembed::test::supported_simd_levels()) {
    std::vector<double> reference = values;
    exp_in_place(reference.data(), reference.size(), level);
    for (std::size_t offset = 0; offset < 9; ++offset)
      for (std::size_t count = 0; count + offset <= 21; ++count) {
        std::vector<double> y(values.begin(), values.begin() + 24);
        exp_in_place(y.data() + offset, count, level);
        for (std::size_t i = 0; i < y.size(); ++i) {
          const bool inside = i >= offset && i < offset + count;
          EXPECT_EQ(ordinal(y[i]), ordinal(inside ? reference[i] : values[i]))
              << "offset " << offset << " count " << count << " index " << i << " at "
              << simd_level_name(level);
        }
      }
  }
}

TEST(VectorExp, SquaredDistancesMatchTheScalarRbfMap) {
  // exp(-gamma max(0, a + b - 2 g)) against std::exp of the same expression,
  // with cancellation (a + b - 2 g < 0 must give exactly 1) and odd lengths.
  const std::size_t m = 1001;
  auto norms = uniform(0.0, 200.0, m, 10);
  auto gram = uniform(-50.0, 150.0, m, 11);
  for (std::size_t i = 0; i < m; i += 7) gram[i] = (norms[i] + 40.0) / 2 + 1e-12;  // d2 < 0
  const double col_norm = 40.0;
  for (double gamma : {1.0 / 64, 0.3, 5.0})
    for (SimdLevel level : kembed::test::supported_simd_levels()) {
      std::vector<double> k = gram;
      exp_neg_squared_distances(k.data(), norms.data(), col_norm, gamma, m, level);
      for (std::size_t i = 0; i < m; ++i) {
        const double want = std::exp(-gamma * std::max(0.0, norms[i] + col_norm - 2 * gram[i]));
        EXPECT_LE(ulp_distance(k[i], want), kMaxUlp)
            << "entry " << i << " gamma " << gamma << " at " << simd_level_name(level);
        if (norms[i] + col_norm - 2 * gram[i] <= 0) {
          EXPECT_EQ(k[i], 1.0) << "entry " << i;
        }
      }
    }
}

TEST(VectorExp, DefaultLevelIsTheBest) {
  const auto xs = uniform(-745.2, 0.0, 1000, 12);
  std::vector<double> a = xs, b = xs;
  exp_in_place(a.data(), a.size());
  exp_in_place(b.data(), b.size(), best_simd_level());
  for (std::size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(ordinal(a[i]), ordinal(b[i]));
  std::cout << "  best level on this CPU: " << simd_level_name(best_simd_level()) << "\n";
}
