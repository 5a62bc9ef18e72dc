// Nystrom kernel PCA (fit_nystrom) against a serial LAPACK reference of
// exact kernel PCA where the approximation is exact (every sample a
// landmark; a linear kernel whose landmarks span the data), and the landmark
// choices (uniform, k-means++) for their documented properties. Every rank
// count compares with the same serial numbers, so the result is the same at
// 1-4 ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "kembed/approx/kmeans_pp.hpp"
#include "kembed/approx/landmarks.hpp"
#include "kembed/approx/nystrom.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/matrix_file.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using namespace kembed;
using namespace kembed::approx;
using namespace kembed::kernel;

namespace {

using Reference = test::SerialKpca;
using test::serial_kpca;

struct NystromCase {
  KernelType type;
  double gamma;
  bool gram_route;  // which pass-1 accumulation the conditioning of W selects
};

class NystromAllLandmarks : public ::testing::TestWithParam<NystromCase> {};

// z_j's column-wise largest difference against the reference, relative to
// the column's largest entry.
double embedding_error(const std::vector<double>& z, const Reference& ref, int n, int k) {
  double worst = 0;
  for (int j = 0; j < k; ++j) {
    double scale = 0, diff = 0;
    for (int i = 0; i < n; ++i) {
      scale = std::max(scale, std::abs(ref.embedding[std::size_t(i) * k + j]));
      diff = std::max(diff, std::abs(z[std::size_t(i) * k + j] - ref.embedding[std::size_t(i) * k + j]));
    }
    worst = std::max(worst, diff / scale);
  }
  return worst;
}

}  // namespace

TEST_P(NystromAllLandmarks, EqualsExactKernelPca) {
  const Comm world = Comm::world();
  const int n = 37, d = 4, k = 3;
  const auto x = test::random_data(n, d, 5);
  const std::string dir = test::scratch_dir(world, "nystrom_all");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  NystromSettings s;
  s.kernel.type = GetParam().type;
  s.kernel.gamma = GetParam().gamma;
  s.components = k;
  s.landmarks = n;
  s.panel_rows = 4;  // several panels per rank, and ranks with fewer panels
  const auto ref = serial_kpca(test::serial_kernel(s.kernel, x, n, d), k);
  for (auto selection : {LandmarkSelection::uniform, LandmarkSelection::kmeanspp}) {
    s.selection = selection;
    PhaseTimer timer;
    const NystromResult r = fit_nystrom(*file, world, s, timer);
    const std::string where = landmark_selection_name(selection);
    EXPECT_EQ(r.gram_route, GetParam().gram_route) << where << ", condition of W "
                                                   << r.w_largest / r.w_smallest_kept;
    ASSERT_EQ(r.eigenvalues.size(), std::size_t(k));
    for (int j = 0; j < k; ++j) {
      EXPECT_NEAR(r.eigenvalues[j], ref.values[j], 1e-8 * ref.values[j]) << where;
      EXPECT_NEAR(r.explained_ratio[j], r.eigenvalues[j] / r.trace, 1e-15) << where;
    }
    // Without dropped directions the traces agree too (the dropped part of W
    // is at most rcond of it).
    if (r.dropped == 0) {
      EXPECT_NEAR(r.trace, ref.trace, 1e-8 * ref.trace) << where;
    }
    if (world.is_root()) {
      EXPECT_EQ(r.embedding.size(), ref.embedding.size());
      if (r.embedding.size() == ref.embedding.size()) {
        EXPECT_LT(embedding_error(r.embedding, ref, n, k), 1e-6) << where;
      }
    } else {
      EXPECT_TRUE(r.embedding.empty());
    }
    // Out of sample on the training rows reproduces the embedding.
    const auto z = nystrom_transform(r.model, *file, world, 7);
    if (world.is_root() && z.size() == r.embedding.size()) {
      double worst = 0;
      for (std::size_t t = 0; t < z.size(); ++t) worst = std::max(worst, std::abs(z[t] - r.embedding[t]));
      EXPECT_LT(worst, 1e-10 * std::sqrt(r.eigenvalues[0])) << where;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, NystromAllLandmarks,
                         ::testing::Values(NystromCase{KernelType::rbf, 0.5, true},
                                           NystromCase{KernelType::laplacian, 0.3, true},
                                           NystromCase{KernelType::rbf, 0.005, false}),
                         [](const auto& info) {
                           return Kernel::name(info.param.type) +
                                  (info.param.gram_route ? "_gram_route" : "_feature_route");
                         });

TEST(Nystrom, LinearKernelWithSpanningLandmarksEqualsExact) {
  // K = X X^T has rank d; landmarks whose rows span R^d give C W^+ C^T =
  // X P X^T with P the identity, so the approximation is exact.
  const Comm world = Comm::world();
  const int n = 40, d = 3, k = 2, m = 6;
  auto x = test::random_data(n, d, 9);
  for (int i = 0; i < n; ++i) x[i * d + 1] = 3 * x[i * d + 1] + 5;  // offset: centering matters
  const std::string dir = test::scratch_dir(world, "nystrom_linear");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  NystromSettings s;
  s.kernel.type = KernelType::linear;
  s.components = k;
  s.landmarks = m;
  s.seed = 3;
  s.panel_rows = 6;
  const auto ref = serial_kpca(test::serial_kernel(s.kernel, x, n, d), k);
  PhaseTimer timer;
  const NystromResult r = fit_nystrom(*file, world, s, timer);
  EXPECT_EQ(r.kept, d);  // W = L L^T has rank d
  EXPECT_EQ(r.dropped, m - d);
  for (int j = 0; j < k; ++j) EXPECT_NEAR(r.eigenvalues[j], ref.values[j], 1e-8 * ref.values[j]);
  if (world.is_root() && r.embedding.size() == ref.embedding.size()) {
    EXPECT_LT(embedding_error(r.embedding, ref, n, k), 1e-6);
  }
}

TEST(Nystrom, FewLandmarksApproximateFromBelow) {
  // J C W^+ C^T J <= J K J in the Loewner order (the Nystrom residual
  // K - C W^+ C^T is a Schur complement, positive semidefinite), so every
  // approximate eigenvalue is at most the exact one.
  const Comm world = Comm::world();
  const int n = 30, d = 3, k = 3;
  const auto x = test::random_data(n, d, 2);
  const std::string dir = test::scratch_dir(world, "nystrom_below");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  NystromSettings s;
  s.kernel.type = KernelType::rbf;
  s.kernel.gamma = 0.3;
  s.components = k;
  s.landmarks = 10;
  const auto ref = serial_kpca(test::serial_kernel(s.kernel, x, n, d), k);
  PhaseTimer timer;
  const NystromResult r = fit_nystrom(*file, world, s, timer);
  for (int j = 0; j < k; ++j) {
    EXPECT_LE(r.eigenvalues[j], ref.values[j] * (1 + 1e-12));
    EXPECT_GT(r.eigenvalues[j], 0.3 * ref.values[j]);  // and not wildly off
  }
}

TEST(Nystrom, BadSettingsAreAgreedErrors) {
  const Comm world = Comm::world();
  const int n = 12, d = 2;
  const auto x = test::random_data(n, d, 4);
  const std::string dir = test::scratch_dir(world, "nystrom_bad");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  const auto message = [&](NystromSettings s) -> std::string {
    try {
      PhaseTimer timer;
      fit_nystrom(*file, world, s, timer);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  NystromSettings s;
  s.components = 3;
  s.landmarks = n + 1;
  EXPECT_NE(message(s).find("between 1 and the number of samples n = 12"), std::string::npos);
  s.landmarks = 0;
  EXPECT_NE(message(s).find("between 1"), std::string::npos);
  s.landmarks = 2;
  EXPECT_NE(message(s).find("fewer than --components 3"), std::string::npos);
  s.landmarks = 5;
  s.kernel.type = KernelType::precomputed;
  EXPECT_NE(message(s).find("precomputed kernel"), std::string::npos);
}

TEST(Landmarks, UniformAreDistinctSortedInRangeAndSeeded) {
  for (std::int64_t m : {1, 7, 50}) {
    const auto rows = uniform_landmarks(50, m, 11);
    ASSERT_EQ(rows.size(), std::size_t(m));
    EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end()));
    EXPECT_EQ(std::set<std::int64_t>(rows.begin(), rows.end()).size(), rows.size());
    EXPECT_GE(rows.front(), 0);
    EXPECT_LT(rows.back(), 50);
    EXPECT_EQ(rows, uniform_landmarks(50, m, 11));
  }
  EXPECT_NE(uniform_landmarks(1000, 10, 1), uniform_landmarks(1000, 10, 2));
  EXPECT_THROW(uniform_landmarks(5, 6, 0), Error);
  EXPECT_THROW(uniform_landmarks(5, 0, 0), Error);
}

namespace {

// Three tight clusters far apart, plus exact duplicates of some rows.
std::vector<double> clustered(int n, int d) {
  auto x = test::random_data(n, d, 17);
  for (int i = 0; i < n; ++i)
    for (int t = 0; t < d; ++t) x[i * d + t] = 1e-3 * x[i * d + t] + 1000.0 * ((i % 3) == t);
  // Rows 0, 6, 12, ... become copies of row 0 (the same cluster).
  for (int i = 0; i + 6 < n; i += 6) std::copy_n(&x[std::size_t(i) * d], d, &x[std::size_t(i + 6) * d]);
  return x;
}

PickedPoints pick(const Comm& comm, const std::vector<double>& x, int n, int d, int m,
                  std::uint64_t seed) {
  const IndexRange mine = block_rows(n, comm.rank(), comm.size());
  const std::vector<double> local(x.begin() + mine.begin * d, x.begin() + mine.end * d);
  return kmeans_pp_landmarks(comm, local, mine, n, d, m, seed);
}

}  // namespace

TEST(KmeansPlusPlus, DistinctReproducibleAndIndependentOfTheRanks) {
  const Comm world = Comm::world();
  const int n = 41, d = 3;
  const auto x = clustered(n, d);
  // The same algorithm on one rank holding every row: the serial answer.
  const Comm alone = world.split(world.rank(), 0);
  for (std::uint64_t seed : {0ull, 1ull, 99ull}) {
    const PickedPoints a = pick(world, x, n, d, 3, seed);
    // D^2 sampling with clusters 1000 apart and 1e-3 wide: one per cluster.
    std::set<int> clusters;
    for (std::int64_t row : a.rows) clusters.insert(int(row % 3));
    EXPECT_EQ(clusters.size(), 3u) << "seed " << seed;
    for (int m : {3, 9, 20}) {
      const PickedPoints p = pick(world, x, n, d, m, seed);
      const PickedPoints q = pick(world, x, n, d, m, seed);
      const PickedPoints serial = pick(alone, x, n, d, m, seed);
      EXPECT_EQ(p.rows, q.rows);
      EXPECT_EQ(p.rows, serial.rows) << "seed " << seed << " m " << m;
      ASSERT_EQ(p.rows.size(), std::size_t(m));
      EXPECT_EQ(std::set<std::int64_t>(p.rows.begin(), p.rows.end()).size(), p.rows.size());
      for (int i = 0; i < m; ++i)
        for (int t = 0; t < d; ++t)
          EXPECT_EQ(p.points[std::size_t(i) * d + t], x[std::size_t(p.rows[i]) * d + t]);
      // Distinct points as long as there are enough of them (n - 6 distinct).
      std::set<std::vector<double>> points;
      for (int i = 0; i < m; ++i)
        points.insert(std::vector<double>(&p.points[std::size_t(i) * d], &p.points[std::size_t(i + 1) * d]));
      EXPECT_EQ(points.size(), std::size_t(m));
    }
  }
  // More landmarks than distinct points: rows stay distinct.
  const PickedPoints all = pick(world, x, n, d, n, 5);
  EXPECT_EQ(std::set<std::int64_t>(all.rows.begin(), all.rows.end()).size(), std::size_t(n));
  EXPECT_NE(pick(world, x, n, d, 9, 1).rows, pick(world, x, n, d, 9, 2).rows);
}
