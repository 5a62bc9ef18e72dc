// Landmark MDS against independent serial oracles: with Euclidean points of
// dimension d, M > d landmarks and k = d it is exact classical MDS up to an
// orthogonal transform and a translation (Procrustes); with k < d it is the
// projection of x - mean(landmarks) onto the landmarks' top k principal
// axes; the stress of all pairs matches a serial sum; the precomputed
// distances give the same embedding as the points; the same at 1-4 ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kembed/approx/landmark_mds.hpp"
#include "kembed/approx/landmarks.hpp"
#include "kembed/core/error.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using namespace kembed;
using namespace kembed::approx;

namespace {

// Row-major n x d points with distinct spreads along each axis and an offset.
std::vector<double> spread_points(int n, int d, unsigned seed) {
  auto x = test::random_data(n, d, seed);
  for (int i = 0; i < n; ++i)
    for (int t = 0; t < d; ++t) x[std::size_t(i) * d + t] = x[std::size_t(i) * d + t] * (d + 1 - t) + t;
  return x;
}

double sq_dist(const double* a, const double* b, int d) {
  double s = 0;
  for (int t = 0; t < d; ++t) s += (a[t] - b[t]) * (a[t] - b[t]);
  return s;
}

// Exact classical MDS of the points, serially: n x k row-major, V sqrt(Lambda).
std::vector<double> exact_mds(const std::vector<double>& x, int n, int d, int k) {
  test::Dense b{n, std::vector<double>(std::size_t(n) * n)};
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) b(i, j) = -0.5 * sq_dist(&x[std::size_t(i) * d], &x[std::size_t(j) * d], d);
  test::Dense vectors;
  const auto w = test::serial_eigh(test::serial_center(b), vectors);
  std::vector<double> z(std::size_t(n) * k);
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < n; ++i) z[std::size_t(i) * k + j] = vectors(i, n - 1 - j) * std::sqrt(w[n - 1 - j]);
  return z;
}

// The landmarks' principal axes: eigenvalues (descending) and axes (d x d
// column-major, matching order) of sum_l (x_l - mu)(x_l - mu)^T; `mean` = mu.
std::vector<double> landmark_axes(const std::vector<double>& x, int d,
                                  const std::vector<std::int64_t>& rows, test::Dense& axes,
                                  std::vector<double>& mean) {
  mean.assign(d, 0.0);
  for (auto r : rows)
    for (int t = 0; t < d; ++t) mean[t] += x[std::size_t(r) * d + t] / double(rows.size());
  test::Dense c{d, std::vector<double>(std::size_t(d) * d, 0.0)};
  for (auto r : rows)
    for (int s = 0; s < d; ++s)
      for (int t = 0; t < d; ++t)
        c(s, t) += (x[std::size_t(r) * d + s] - mean[s]) * (x[std::size_t(r) * d + t] - mean[t]);
  test::Dense v;
  const auto w = test::serial_eigh(c, v);
  axes = test::Dense{d, std::vector<double>(std::size_t(d) * d)};
  for (int j = 0; j < d; ++j)
    for (int s = 0; s < d; ++s) axes(s, j) = v(s, d - 1 - j);
  return {w.rbegin(), w.rend()};
}


}  // namespace

TEST(LandmarkMds, FullDimensionIsExactClassicalMdsUpToRotation) {
  const Comm world = Comm::world();
  const int n = 60, d = 3, k = 3, m = 8;
  const auto x = spread_points(n, d, 11);
  const std::string dir = test::scratch_dir(world, "landmark_full");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  LandmarkMdsSettings s;
  s.components = k;
  s.landmarks = m;
  s.seed = 5;
  s.stress_pairs = 100000;  // more than n(n-1)/2: every pair
  s.panel_rows = 7;         // several panels per rank
  PhaseTimer timer;
  const LandmarkMdsResult r = landmark_mds_points(*file, kernel::Metric::euclidean, s, world, timer);

  // Landmark eigenvalues = the landmarks' scatter eigenvalues.
  test::Dense axes;
  std::vector<double> mean;
  const auto scatter = landmark_axes(x, d, uniform_landmarks(n, m, 5), axes, mean);
  ASSERT_EQ(r.eigenvalues.size(), std::size_t(k));
  for (int j = 0; j < k; ++j) {
    EXPECT_NEAR(r.eigenvalues[j], scatter[j], 1e-10 * scatter[0]);
    EXPECT_NEAR(r.scaled_eigenvalues[j], scatter[j] * n / m, 1e-10 * scatter[0] * n / m);
  }
  // Exact configuration: every distance reproduced, so stress 0.
  EXPECT_EQ(r.stress_pairs, n * (n - 1) / 2);
  ASSERT_TRUE(r.sample_stress.has_value());
  EXPECT_LT(*r.sample_stress, 1e-10);
  if (world.is_root()) {
    ASSERT_EQ(r.embedding.size(), std::size_t(n) * k);
    const auto z = exact_mds(x, n, d, k);
    EXPECT_LT(test::procrustes_residual(test::centered_columns(r.embedding, n, k), z, n, k), 1e-10);
  } else {
    EXPECT_TRUE(r.embedding.empty());
  }
}

TEST(LandmarkMds, FewerComponentsProjectOntoLandmarkAxesAndDistancesAgree) {
  const Comm world = Comm::world();
  const int n = 45, d = 5, k = 2, m = 12;
  const auto x = spread_points(n, d, 3);
  const std::string dir = test::scratch_dir(world, "landmark_project");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  LandmarkMdsSettings s;
  s.components = k;
  s.landmarks = m;
  s.seed = 9;
  s.stress_pairs = 100000;
  s.panel_rows = 4;
  PhaseTimer timer;
  const LandmarkMdsResult r = landmark_mds_points(*file, kernel::Metric::euclidean, s, world, timer);

  // Oracle: y_a = U_k^T (x_a - mean of the landmarks), column signs by the
  // convention (largest |entry| positive).
  const auto rows = uniform_landmarks(n, m, 9);
  test::Dense axes;
  std::vector<double> mean;
  landmark_axes(x, d, rows, axes, mean);
  std::vector<double> cols(std::size_t(n) * k);  // column-major n x k
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < k; ++j) {
      double y = 0;
      for (int t = 0; t < d; ++t) y += axes(t, j) * (x[std::size_t(i) * d + t] - mean[t]);
      cols[std::size_t(j) * n + i] = y;
    }
  test::serial_fix_signs(cols, n, k);
  double scale = 0, num = 0, den = 0;
  for (double v : cols) scale = std::max(scale, std::abs(v));
  // Stress of every pair, serially, from the oracle's coordinates.
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      const double dist = std::sqrt(sq_dist(&x[std::size_t(i) * d], &x[std::size_t(j) * d], d));
      double fit = 0;
      for (int c = 0; c < k; ++c)
        fit += std::pow(cols[std::size_t(c) * n + i] - cols[std::size_t(c) * n + j], 2);
      num += std::pow(dist - std::sqrt(fit), 2);
      den += dist * dist;
    }
  ASSERT_TRUE(r.sample_stress.has_value());
  EXPECT_NEAR(*r.sample_stress, std::sqrt(num / den), 1e-10);
  if (world.is_root()) {
    ASSERT_EQ(r.embedding.size(), std::size_t(n) * k);
    double worst = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < k; ++j)
        worst = std::max(worst, std::abs(r.embedding[std::size_t(i) * k + j] - cols[std::size_t(j) * n + i]));
    EXPECT_LT(worst, 1e-10 * scale);
  }

  // The same from precomputed distances (to and among the landmarks).
  std::vector<double> to(std::size_t(n) * m), among(std::size_t(m) * m);
  for (int i = 0; i < n; ++i)
    for (int l = 0; l < m; ++l)
      to[std::size_t(i) * m + l] = std::sqrt(sq_dist(&x[std::size_t(i) * d], &x[std::size_t(rows[l]) * d], d));
  for (int a = 0; a < m; ++a)
    for (int b = 0; b < m; ++b) among[std::size_t(a) * m + b] = to[std::size_t(rows[a]) * m + b];
  auto to_file = io::open_matrix_file(world, test::write_bin(world, dir, "to.bin", to), {n, m});
  auto among_file = io::open_matrix_file(world, test::write_bin(world, dir, "among.bin", among), {m, m});
  s.landmarks = 0;
  const LandmarkMdsResult p = landmark_mds_distances(*to_file, *among_file, s, world, timer);
  EXPECT_FALSE(p.sample_stress.has_value());
  for (int j = 0; j < k; ++j) EXPECT_NEAR(p.eigenvalues[j], r.eigenvalues[j], 1e-10 * r.eigenvalues[0]);
  if (world.is_root()) {
    double worst = 0;
    for (std::size_t e = 0; e < r.embedding.size(); ++e)
      worst = std::max(worst, std::abs(p.embedding[e] - r.embedding[e]));
    EXPECT_LT(worst, 1e-9 * scale);
  }
  // Triangulating the training points with the fitted model reproduces them.
  const auto again = triangulate(r.model, *file, world, 5);
  if (world.is_root()) {
    double worst = 0;
    for (std::size_t e = 0; e < r.embedding.size(); ++e)
      worst = std::max(worst, std::abs(again[e] - r.embedding[e]));
    EXPECT_LT(worst, 1e-12 * scale);
  }
}

TEST(LandmarkMds, RefusesBadLandmarkCountsOnEveryRank) {
  const Comm world = Comm::world();
  const int n = 10, d = 2;
  const auto x = spread_points(n, d, 1);
  const std::string dir = test::scratch_dir(world, "landmark_bad");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  const auto error = [&](std::int64_t m, int k) {
    LandmarkMdsSettings s;
    s.landmarks = m;
    s.components = k;
    PhaseTimer timer;
    try {
      landmark_mds_points(*file, kernel::Metric::euclidean, s, world, timer);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error(11, 2).find("exceeds the number of points (10)"), std::string::npos);
  EXPECT_NE(error(2, 2).find("must be at least 3"), std::string::npos);
  EXPECT_NE(error(0, 1).find("at least 1"), std::string::npos);
  // Two-dimensional points have only 2 positive landmark eigenvalues.
  EXPECT_NE(error(6, 3).find("only 2 are above"), std::string::npos);
}
