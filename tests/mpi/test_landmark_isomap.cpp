// Landmark Isomap against independent references: the landmark geodesics
// against Floyd-Warshall on a random graph (also through entry edges, as
// transform joins new points); with every point a landmark (M = n) it is
// exact Isomap (the same B), eigenvalues and coordinates up to sign to
// 1e-8; on a complete graph (geodesics = Euclidean distances) 7 landmarks
// give serial classical MDS up to a rigid motion; with M << n on a swiss
// roll its Procrustes error against exact Isomap is small; the same result
// on one rank as on all; transform of the training points gives their
// coordinates back; agreed errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "kembed/approx/landmark_isomap.hpp"
#include "kembed/approx/landmarks.hpp"
#include "kembed/core/error.hpp"
#include "kembed/graph/landmark_geodesics.hpp"
#include "kembed/io/synthetic.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/spectral/isomap.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using namespace kembed;
using namespace kembed::approx;

namespace {

std::unique_ptr<io::MatrixFile> swiss_roll(const Comm& comm, std::int64_t n, std::uint64_t seed) {
  return io::synthetic_matrix(comm, {io::Dataset::swissroll, n, 3, seed});
}

// Exact Isomap (kembed's, on a P x Q grid of all ranks): eigenvalues and the
// n x k embedding (rank 0).
spectral::IsomapResult exact_isomap(io::MatrixFile& x, int neighbors, int k, const Comm& comm) {
  BlacsGrid grid(comm);
  spectral::IsomapSettings s;
  s.graph.neighbors = neighbors;
  s.components = k;
  s.solver = spectral::Solver::evd;
  s.block_size = 8;
  PhaseTimer timer;
  return spectral::fit_isomap(x, grid, s, timer);
}

LandmarkIsomapSettings landmark_settings(int neighbors, int k, std::int64_t m) {
  LandmarkIsomapSettings s;
  s.graph.neighbors = neighbors;
  s.components = k;
  s.landmarks = m;
  s.seed = 3;
  return s;
}

// Procrustes with translation: min over orthogonal Q and a shift c of
// ||(A - 1 c^T) Q - B0||_F / ||B0||_F, B0 = B with centred columns
// (n x k row-major; Q = polar factor of A0^T B0).
double procrustes_error(const std::vector<double>& a, const std::vector<double>& b, int n, int k) {
  return test::procrustes_residual(test::centered_columns(a, n, k), test::centered_columns(b, n, k),
                                   n, k);
}

}  // namespace

TEST(LandmarkGeodesics, MatchFloydWarshallDirectlyAndThroughEntries) {
  const Comm comm = Comm::world();
  const int n = 40;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> w(0.1, 2.0);
  std::uniform_int_distribution<int> pick(0, n - 1);
  std::vector<std::int64_t> offsets{0};
  std::vector<graph::Neighbor> lists;
  for (int i = 0; i < n; ++i) {
    // A path through all vertices keeps the graph connected; two random edges more.
    if (i + 1 < n) lists.push_back({i + 1, w(rng)});
    for (int t = 0; t < 2; ++t) lists.push_back({pick(rng), w(rng)});
    offsets.push_back(static_cast<std::int64_t>(lists.size()));
  }
  const auto g = graph::symmetrize(n, offsets, lists);
  std::vector<double> fw(std::size_t(n) * n, std::numeric_limits<double>::infinity());
  for (int i = 0; i < n; ++i) fw[std::size_t(i) * n + i] = 0;
  for (int i = 0; i < n; ++i)
    for (auto t = g.offsets[i]; t < g.offsets[i + 1]; ++t)
      fw[std::size_t(i) * n + g.targets[t]] = std::min(fw[std::size_t(i) * n + g.targets[t]], g.weights[t]);
  for (int m = 0; m < n; ++m)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        fw[std::size_t(i) * n + j] =
            std::min(fw[std::size_t(i) * n + j], fw[std::size_t(i) * n + m] + fw[std::size_t(m) * n + j]);

  const std::vector<std::int64_t> landmarks{0, 3, 4, 17, 22, 38, 39};  // 7: uneven over 2-4 ranks
  const auto m = static_cast<std::int64_t>(landmarks.size());
  const IndexRange mine = graph::neighbor_rows(n, comm.rank(), comm.size());
  const auto direct = graph::landmark_geodesics(g, landmarks, {n, {}, {}}, comm);
  double worst = 0;
  bool shaped = direct.size() == std::size_t(mine.size() * m);
  // Rounds of one landmark per rank (round_values < n) give the same bits.
  EXPECT_TRUE(test::all_ranks(
      comm, graph::landmark_geodesics(g, landmarks, {n, {}, {}}, comm, 1) == direct));
  for (std::int64_t a = mine.begin; a < mine.end && shaped; ++a)
    for (std::int64_t l = 0; l < m; ++l)
      worst = std::max(worst, std::abs(direct[std::size_t((a - mine.begin) * m + l)] -
                                       fw[std::size_t(a * n + landmarks[l])]));
  EXPECT_TRUE(test::all_ranks(comm, shaped && worst < 1e-12)) << "max diff " << worst;

  // Eleven new targets, each joined to three vertices at given lengths: the
  // reference is min over its entries of length + Floyd-Warshall distance.
  graph::GraphEntries targets;
  targets.count = 11;
  targets.offsets.push_back(0);
  for (int a = 0; a < targets.count; ++a) {
    for (int t = 0; t < 3; ++t) targets.entries.push_back({pick(rng), w(rng)});
    targets.offsets.push_back(static_cast<std::int64_t>(targets.entries.size()));
  }
  const IndexRange rows = graph::neighbor_rows(targets.count, comm.rank(), comm.size());
  const auto through = graph::landmark_geodesics(g, landmarks, targets, comm, 2 * targets.count);
  worst = 0;
  shaped = through.size() == std::size_t(rows.size() * m);
  for (std::int64_t a = rows.begin; a < rows.end && shaped; ++a)
    for (std::int64_t l = 0; l < m; ++l) {
      double best = std::numeric_limits<double>::infinity();
      for (auto e = targets.offsets[a]; e < targets.offsets[a + 1]; ++e)
        best = std::min(best, targets.entries[e].distance +
                                  fw[std::size_t(targets.entries[e].index * n + landmarks[l])]);
      worst = std::max(worst, std::abs(through[std::size_t((a - rows.begin) * m + l)] - best));
    }
  EXPECT_TRUE(test::all_ranks(comm, shaped && worst < 1e-12)) << "max diff " << worst;
}

TEST(LandmarkIsomap, AllPointsAsLandmarksIsExactIsomap) {
  const Comm world = Comm::world();
  const int n = 90, neighbors = 8, k = 2;
  auto x = swiss_roll(world, n, 4);
  const spectral::IsomapResult exact = exact_isomap(*x, neighbors, k, world);
  PhaseTimer timer;
  const LandmarkIsomapResult r = landmark_isomap(*x, landmark_settings(neighbors, k, n), world, timer);
  ASSERT_EQ(r.mds.landmark_rows.size(), std::size_t(n));  // every row, ascending
  EXPECT_EQ(r.mds.landmark_rows.back(), n - 1);
  EXPECT_EQ(r.graph.edges, exact.graph.edges);
  // B_L is the n x n B of exact Isomap: the same eigenvalues; n / M = 1.
  ASSERT_EQ(r.mds.eigenvalues.size(), std::size_t(k));
  for (int j = 0; j < k; ++j) {
    EXPECT_NEAR(r.mds.eigenvalues[j], exact.mds.eigenvalues[j], 1e-8 * exact.mds.eigenvalues[0]);
    EXPECT_EQ(r.mds.scaled_eigenvalues[j], r.mds.eigenvalues[j]);
  }
  // Triangulating a landmark gives its MDS coordinates: the exact embedding
  // (the landmarks' mean is the data mean), each column up to sign.
  bool close = true;
  double worst = 0;
  if (world.is_root()) {
    ASSERT_EQ(r.mds.embedding.size(), std::size_t(n) * k);
    for (int j = 0; j < k; ++j) {
      double scale = 0, same = 0, flipped = 0;
      for (int i = 0; i < n; ++i) {
        const double a = r.mds.embedding[std::size_t(i) * k + j];
        const double b = exact.mds.embedding[std::size_t(i) * k + j];
        scale = std::max(scale, std::abs(b));
        same = std::max(same, std::abs(a - b));
        flipped = std::max(flipped, std::abs(a + b));
      }
      worst = std::max(worst, std::min(same, flipped) / scale);
    }
    close = worst < 1e-8;
  } else {
    EXPECT_TRUE(r.mds.embedding.empty());
  }
  EXPECT_TRUE(test::all_ranks(world, close)) << "max diff / max entry " << worst;
}

TEST(LandmarkIsomap, CompleteGraphIsClassicalMdsWithFewLandmarks) {
  // K = n - 1: every pair is an edge and the direct edge is the shortest
  // path (triangle inequality), so the geodesics are the Euclidean
  // distances; for k = d and M > d landmarks in general position the
  // triangulation reproduces the points up to a rigid motion: classical MDS
  // of all points (serial LAPACK here) up to rotation and shift.
  const Comm world = Comm::world();
  const int n = 50, d = 3, k = 3, m = 7;
  std::vector<double> x = test::random_data(n, d, 5);
  for (int i = 0; i < n; ++i)
    for (int t = 0; t < d; ++t) x[std::size_t(i) * d + t] *= 3 - t;  // distinct spreads
  const std::string dir = test::scratch_dir(world, "landmark_isomap_complete");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  PhaseTimer timer;
  const LandmarkIsomapResult r =
      landmark_isomap(*file, landmark_settings(n - 1, k, m), world, timer);
  EXPECT_EQ(r.graph.edges, n * (n - 1) / 2);
  double error = 0;
  if (world.is_root()) {
    test::Dense b{n, std::vector<double>(std::size_t(n) * n)};
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double s = 0;
        for (int t = 0; t < d; ++t) s += std::pow(x[std::size_t(i) * d + t] - x[std::size_t(j) * d + t], 2);
        b(i, j) = -0.5 * s;
      }
    test::Dense vectors;
    const auto w = test::serial_eigh(test::serial_center(b), vectors);
    std::vector<double> z(std::size_t(n) * k);
    for (int j = 0; j < k; ++j)
      for (int i = 0; i < n; ++i) z[std::size_t(i) * k + j] = vectors(i, n - 1 - j) * std::sqrt(w[n - 1 - j]);
    error = procrustes_error(r.mds.embedding, z, n, k);
  }
  world.broadcast(&error, 1);
  EXPECT_LT(error, 1e-10);
}

TEST(LandmarkIsomap, FewLandmarksCloseToExactAndTheSameOnOneRank) {
  const Comm world = Comm::world();
  const int n = 400, neighbors = 5, k = 2, m = 40;
  auto x = swiss_roll(world, n, 1);
  const spectral::IsomapResult exact = exact_isomap(*x, neighbors, k, world);
  PhaseTimer timer;
  const LandmarkIsomapSettings s = landmark_settings(neighbors, k, m);
  LandmarkIsomapResult r = landmark_isomap(*x, s, world, timer);
  EXPECT_EQ(r.mds.landmark_rows, uniform_landmarks(n, m, s.seed));
  // Scaled landmark eigenvalues estimate the exact ones.
  for (int j = 0; j < k; ++j)
    EXPECT_NEAR(r.mds.scaled_eigenvalues[j], exact.mds.eigenvalues[j], 0.1 * exact.mds.eigenvalues[j]);
  // The bound: measured 0.043 here (0.072 with M = 20, 0.024 with M = 160,
  // and 1e-10 or less when the geodesics are Euclidean: the complete-graph
  // test). What limits it is the part of the geodesic matrix that is not
  // 2-dimensional Euclidean (18% of ||B||_F for this sparse roll, K = 5),
  // which the landmarks' MDS sees only through them. Data and seed are
  // fixed, so the margin to 0.06 only absorbs differences between BLAS and
  // LAPACK builds; a graph that short-circuits the roll (K = 10 here) gives
  // 0.15.
  double error = 0;
  if (world.is_root()) error = procrustes_error(r.mds.embedding, exact.mds.embedding, n, k);
  world.broadcast(&error, 1);
  EXPECT_LT(error, 0.06) << "Procrustes error / ||exact||_F";

  // The same fit on rank 0 alone (its own communicator) as on every rank.
  std::vector<double> alone;
  if (world.is_root()) {
    const Comm self = Comm::self();
    auto mine = swiss_roll(self, n, 1);
    alone = landmark_isomap(*mine, s, self, timer).mds.embedding;
  }
  double scale = 0;
  for (double v : r.mds.embedding) scale = std::max(scale, std::abs(v));
  const bool same = !world.is_root() || test::max_abs_diff(alone, r.mds.embedding) <= 1e-13 * scale;
  EXPECT_TRUE(test::all_ranks(world, same));

  // Recomputing the geodesics instead of holding them: the same embedding
  // (sums over the ranks' landmarks in another order: round-off only).
  LandmarkIsomapSettings twice = s;
  twice.geodesics = GeodesicStorage::recomputed;
  const LandmarkIsomapResult again_twice = landmark_isomap(*x, twice, world, timer);
  EXPECT_EQ(again_twice.geodesics, GeodesicStorage::recomputed);
  EXPECT_EQ(r.geodesics, GeodesicStorage::stored);  // automatic: it fits
  EXPECT_TRUE(test::all_ranks(
      world, test::max_abs_diff(again_twice.mds.eigenvalues, r.mds.eigenvalues) <=
                 1e-12 * r.mds.eigenvalues[0]));
  const bool same_twice = !world.is_root() || test::max_abs_diff(again_twice.mds.embedding,
                                                                 r.mds.embedding) <= 1e-12 * scale;
  EXPECT_TRUE(test::all_ranks(world, same_twice));

  // transform: the training points are their own nearest training points.
  LandmarkIsomapProjection p;
  p.graph = s.graph;
  p.landmark_rows = r.mds.landmark_rows;
  p.model = r.mds.model;
  const auto again = landmark_isomap_transform(p, *x, *x, world);
  const bool back = !world.is_root() || test::max_abs_diff(again, r.mds.embedding) <= 1e-12 * scale;
  EXPECT_TRUE(test::all_ranks(world, back));
}

TEST(LandmarkIsomap, AgreedErrorsAndConnect) {
  const Comm world = Comm::world();
  // Two 10 x 3 grids of unit spacing, 1000 apart: at K = 5 every point
  // lists its grid neighbours, so each grid is one component.
  const int half = 30, n = 2 * half;
  std::vector<double> x;
  for (int g = 0; g < 2; ++g)
    for (int i = 0; i < half; ++i) x.insert(x.end(), {1000.0 * g + i % 10, double(i / 10), 0.0});
  const std::string dir = test::scratch_dir(world, "landmark_isomap_errors");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, 3});
  PhaseTimer timer;
  const auto error = [&](LandmarkIsomapSettings s) {
    return test::caught([&] { landmark_isomap(*file, s, world, timer); });
  };
  const auto has = [&](const std::string& text, const std::string& part) {
    return test::all_ranks(world, text.find(part) != std::string::npos);
  };
  EXPECT_TRUE(has(error(landmark_settings(5, 2, n + 1)), "--landmarks 61 exceeds the number of points (60)"));
  EXPECT_TRUE(has(error(landmark_settings(5, 2, 2)), "--landmarks 2 is too few for --components 2"));
  EXPECT_TRUE(has(error(landmark_settings(60, 2, 10)), "--neighbors 60 must be below"));
  EXPECT_TRUE(has(error(landmark_settings(5, 2, 10)), "has 2 connected components (sizes 30, 30)"));
  LandmarkIsomapSettings tight = landmark_settings(5, 2, 10);
  tight.connect = true;  // else the components are the error
  tight.max_memory_per_rank = 1000;
  EXPECT_TRUE(has(error(tight), "not enough memory"));
  LandmarkIsomapSettings joined = landmark_settings(5, 2, 10);
  joined.connect = true;
  const LandmarkIsomapResult r = landmark_isomap(*file, joined, world, timer);
  EXPECT_EQ(r.added_edges.size(), 1u);
  EXPECT_EQ(r.graph.components, 2);
  // Joined by one edge of length about 1000, the first axis separates the rolls.
  bool split = true;
  if (world.is_root())
    for (int i = 0; i < half; ++i)
      split = split && r.mds.embedding[std::size_t(i) * 2] * r.mds.embedding[std::size_t(i + half) * 2] < 0;
  EXPECT_TRUE(test::all_ranks(world, split));
}
