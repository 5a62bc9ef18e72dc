// Classical MDS (fit_mds, mds_transform) against independent serial
// references: distances of points give the points back up to rotation (and
// the PCA scores), LAPACK on the serially double-centered matrix, the same
// numbers on every grid and blocking, honest reports for a non-Euclidean
// graph metric, and agreed errors for every kind of invalid distance matrix.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kembed/core/error.hpp"
#include "kembed/kernel/distance_checks.hpp"
#include "kembed/spectral/mds.hpp"
#include "eurodist.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using kembed::test::grid_shapes;

using namespace kembed;
using namespace kembed::spectral;
using namespace kembed::kernel;
using kembed::test::max_abs_diff;

namespace {

// Row-major n x d points with distinct spreads along each axis and an offset.
std::vector<double> spread_points(int n, int d, unsigned seed) {
  auto x = test::random_data(n, d, seed);
  for (int i = 0; i < n; ++i)
    for (int t = 0; t < d; ++t) x[std::size_t(i) * d + t] = x[std::size_t(i) * d + t] * (d - t) + t;
  return x;
}

// metric(x_i, x_j) pair by pair from the definitions (row-major n x n).
std::vector<double> serial_distances(Metric metric, const std::vector<double>& x, int n, int d) {
  std::vector<double> dist(std::size_t(n) * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double* a = &x[std::size_t(i) * d];
      const double* b = &x[std::size_t(j) * d];
      double sq = 0, l1 = 0, dot = 0, na = 0, nb = 0;
      for (int t = 0; t < d; ++t) {
        sq += (a[t] - b[t]) * (a[t] - b[t]);
        l1 += std::abs(a[t] - b[t]);
        dot += a[t] * b[t];
        na += a[t] * a[t];
        nb += b[t] * b[t];
      }
      double v = 0;
      switch (metric) {
        case Metric::euclidean:
          v = std::sqrt(sq);
          break;
        case Metric::sqeuclidean:
          v = sq;
          break;
        case Metric::manhattan:
          v = l1;
          break;
        case Metric::cosine:
          v = 1 - dot / std::sqrt(na * nb);
          break;
      }
      dist[std::size_t(i) * n + j] = i == j ? 0.0 : v;
    }
  return dist;
}

// B = -1/2 J D^(2) J by explicit products (serial_center), from row-major D.
test::Dense serial_b(const std::vector<double>& dist, int n) {
  test::Dense d2{n, std::vector<double>(std::size_t(n) * n)};
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double v = dist[std::size_t(i) * n + j];
      d2(i, j) = -0.5 * v * v;
    }
  return test::serial_center(d2);
}

struct Reference {
  std::vector<double> spectrum;   // all n, descending
  std::vector<double> embedding;  // n x k row-major
};

Reference serial_mds(const std::vector<double>& dist, int n, int k) {
  test::Dense vectors;
  const auto w = test::serial_eigh(serial_b(dist, n), vectors);
  Reference ref;
  ref.spectrum.assign(w.rbegin(), w.rend());
  std::vector<double> v(std::size_t(n) * k);
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < n; ++i) v[std::size_t(j) * n + i] = vectors(i, n - 1 - j);
  test::serial_fix_signs(v, n, k);
  ref.embedding.resize(std::size_t(n) * k);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < k; ++j)
      ref.embedding[std::size_t(i) * k + j] =
          v[std::size_t(j) * n + i] * std::sqrt(ref.spectrum[j]);
  return ref;
}

// The agreed message of fit_mds, or "" when it succeeds.
std::string fit_error(io::MatrixFile& file, const BlacsGrid& grid, const MdsSettings& settings) {
  try {
    PhaseTimer timer;
    fit_mds(file, grid, settings, timer);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

struct MdsCase {
  bool points;  // fit from points (else from the distance matrix in a file)
  Metric metric;
  Solver solver;
};

class MdsVsSerial : public ::testing::TestWithParam<MdsCase> {};

}  // namespace

TEST_P(MdsVsSerial, EigenvaluesEmbeddingsOnEveryGridAndBlocking) {
  const Comm world = Comm::world();
  const int n = 37, d = 4, k = 3;
  const MdsCase c = GetParam();
  const auto x = spread_points(n, d, 5);
  const auto dist = serial_distances(c.metric, x, n, d);
  const auto ref = serial_mds(dist, n, k);
  double squares = 0;  // ||B||_F, which centering takes as it writes B
  for (double v : serial_b(dist, n).a) squares += v * v;
  const double frobenius = std::sqrt(squares);
  const std::string dir = test::scratch_dir(world, "mds_vs_serial");
  auto file = c.points
                  ? io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d})
                  : io::open_matrix_file(world, test::write_bin(world, dir, "d.bin", dist), {n, n});
  MdsSettings settings;
  if (c.points) settings.metric = c.metric;
  settings.components = k;
  settings.solver = c.solver;
  double positive = 0, absolute = 0;
  for (double v : ref.spectrum) positive += std::max(v, 0.0), absolute += std::abs(v);
  const double scale = ref.spectrum[0];
  std::vector<double> first_embedding;
  for (auto [p, q] : grid_shapes(world.size()))
    for (int nb : {3, 16, 64}) {
      BlacsGrid grid(world, p, q);
      settings.block_size = nb;
      PhaseTimer timer;
      const MdsResult r = fit_mds(*file, grid, settings, timer);
      const std::string where =
          "grid " + std::to_string(p) + "x" + std::to_string(q) + " nb " + std::to_string(nb);
      // No ASSERT: a rank leaving early would hang the others' collectives.
      EXPECT_EQ(r.eigenvalues.size(), std::size_t(k)) << where;
      EXPECT_NEAR(r.frobenius_norm, frobenius, 1e-12 * frobenius) << where;
      for (int j = 0; j < k && j < static_cast<int>(r.eigenvalues.size()); ++j) {
        EXPECT_NEAR(r.eigenvalues[j], ref.spectrum[j], 1e-10 * scale) << where;
        EXPECT_LT(r.residuals[j], 1e-12) << where;
      }
      if (c.solver == Solver::evd) {
        EXPECT_LT(max_abs_diff(r.spectrum, ref.spectrum), 1e-10 * scale) << where;
        EXPECT_NEAR(r.explained_ratio[0], ref.spectrum[0] / positive, 1e-10) << where;
        double top = 0;
        for (int j = 0; j < k; ++j) top += ref.spectrum[j];
        EXPECT_TRUE(r.gof1 && r.gof2) << where;
        if (r.gof1 && r.gof2) {
          EXPECT_NEAR(*r.gof1, top / absolute, 1e-10) << where;
          EXPECT_NEAR(*r.gof2, top / positive, 1e-10) << where;
        }
      } else {
        EXPECT_TRUE(r.spectrum.empty() && !r.gof1 && !r.gof2 && !r.negative_count) << where;
        EXPECT_NEAR(r.explained_ratio[0], r.eigenvalues[0] / r.trace, 1e-15) << where;
      }
      if (world.is_root()) {
        EXPECT_LT(max_abs_diff(r.embedding, ref.embedding), 1e-8) << where;
        // Identical up to round-off on every grid and blocking.
        if (first_embedding.empty()) first_embedding = r.embedding;
        EXPECT_LT(max_abs_diff(r.embedding, first_embedding), 1e-10) << where;
      } else {
        EXPECT_TRUE(r.embedding.empty()) << where;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(InputsMetricsSolvers, MdsVsSerial,
                         ::testing::Values(MdsCase{false, Metric::euclidean, Solver::evd},
                                           MdsCase{false, Metric::manhattan, Solver::evr},
                                           MdsCase{true, Metric::euclidean, Solver::evd},
                                           MdsCase{true, Metric::sqeuclidean, Solver::evd},
                                           MdsCase{true, Metric::manhattan, Solver::evd},
                                           MdsCase{true, Metric::cosine, Solver::evr}),
                         [](const auto& info) {
                           return std::string(info.param.points ? "points_" : "distances_") +
                                  metric_name(info.param.metric) + "_" +
                                  solver_name(info.param.solver);
                         });

TEST(Mds, EuclideanDistancesGiveThePointsBackAndThePcaScores) {
  const Comm world = Comm::world();
  const int n = 45, d = 3;
  const auto x = spread_points(n, d, 11);
  const std::string dir = test::scratch_dir(world, "mds_points");
  auto dfile = io::open_matrix_file(
      world, test::write_bin(world, dir, "d.bin", serial_distances(Metric::euclidean, x, n, d)),
      {n, n});
  // Centered points, their Gram matrix and (by PCA of the scatter matrix) their scores.
  std::vector<double> xc = x;
  for (int t = 0; t < d; ++t) {
    double mean = 0;
    for (int i = 0; i < n; ++i) mean += x[i * d + t] / n;
    for (int i = 0; i < n; ++i) xc[i * d + t] -= mean;
  }
  test::Dense scatter{d, std::vector<double>(d * d, 0.0)}, axes;
  for (int a = 0; a < d; ++a)
    for (int b = 0; b < d; ++b)
      for (int i = 0; i < n; ++i) scatter(a, b) += xc[i * d + a] * xc[i * d + b];
  const auto w = test::serial_eigh(scatter, axes);
  std::vector<double> scores(std::size_t(n) * d);  // column-major n x d, descending
  for (int j = 0; j < d; ++j)
    for (int i = 0; i < n; ++i)
      for (int t = 0; t < d; ++t) scores[j * n + i] += xc[i * d + t] * axes(t, d - 1 - j);
  test::serial_fix_signs(scores, n, d);

  BlacsGrid grid(world);
  MdsSettings settings;
  settings.components = d;
  settings.block_size = 8;
  PhaseTimer timer;
  const MdsResult r = fit_mds(*dfile, grid, settings, timer);
  for (int j = 0; j < d; ++j) EXPECT_NEAR(r.eigenvalues[j], w[d - 1 - j], 1e-10 * w[d - 1]);
  // Euclidean: no negative eigenvalues, and d components explain everything.
  EXPECT_TRUE(r.negative_count && *r.negative_count == 0);
  EXPECT_TRUE(r.gof1 && std::abs(*r.gof1 - 1) < 1e-10);
  EXPECT_TRUE(r.gof2 && std::abs(*r.gof2 - 1) < 1e-10);
  if (world.is_root()) {
    double gram = 0, scale = 0;
    for (int i = 0; i < n; ++i)
      for (int l = 0; l < n; ++l) {
        double yy = 0, xx = 0;
        for (int t = 0; t < d; ++t) {
          yy += r.embedding[i * d + t] * r.embedding[l * d + t];
          xx += xc[i * d + t] * xc[l * d + t];
        }
        gram = std::max(gram, std::abs(yy - xx));
        scale = std::max(scale, std::abs(xx));
      }
    EXPECT_LT(gram, 1e-10 * scale) << "Y Y^T != Xc Xc^T";
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < d; ++j) EXPECT_NEAR(r.embedding[i * d + j], scores[j * n + i], 1e-8);
  }
}

TEST(Mds, GraphShortestPathMetricReportsNegativeEigenvaluesAndGof) {
  const Comm world = Comm::world();
  // A 9-cycle with one chord (0-4) and a pendant vertex 9 on vertex 6:
  // shortest paths by Floyd-Warshall. Cycles are not Euclidean-embeddable.
  const int n = 10;
  const double inf = 1e300;
  std::vector<double> g(n * n, inf);
  auto edge = [&](int a, int b) { g[a * n + b] = g[b * n + a] = 1; };
  for (int i = 0; i < 9; ++i) edge(i, (i + 1) % 9);
  edge(0, 4);
  edge(6, 9);
  for (int i = 0; i < n; ++i) g[i * n + i] = 0;
  for (int m = 0; m < n; ++m)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        g[i * n + j] = std::min(g[i * n + j], g[i * n + m] + g[m * n + j]);

  // Independent serial figures (R's cmdscale definitions).
  test::Dense vectors;
  auto w = test::serial_eigh(serial_b(g, n), vectors);
  std::sort(w.rbegin(), w.rend());
  const int k = 2;
  double top = w[0] + w[1], absolute = 0, positive = 0;
  int negative = 0;
  for (double v : w) {
    absolute += std::abs(v);
    positive += std::max(v, 0.0);
    negative += v < -1e-8 ? 1 : 0;
  }
  EXPECT_GT(negative, 0) << "the test graph should not be Euclidean";

  const std::string dir = test::scratch_dir(world, "mds_graph");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "g.bin", g), {n, n});
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    MdsSettings settings;
    settings.components = k;
    settings.block_size = 3;
    PhaseTimer timer;
    const MdsResult r = fit_mds(*file, grid, settings, timer);
    EXPECT_TRUE(r.negative_count && *r.negative_count == negative);
    EXPECT_TRUE(r.smallest_eigenvalue && std::abs(*r.smallest_eigenvalue - w[n - 1]) < 1e-12);
    EXPECT_TRUE(r.gof1 && std::abs(*r.gof1 - top / absolute) < 1e-12);
    EXPECT_TRUE(r.gof2 && std::abs(*r.gof2 - top / positive) < 1e-12);
    EXPECT_TRUE(r.positive_sum && std::abs(*r.positive_sum - positive) < 1e-12);
    EXPECT_NEAR(r.explained_ratio[0], w[0] / positive, 1e-12);

    // evr cannot know: nothing is guessed.
    settings.solver = Solver::evr;
    const MdsResult e = fit_mds(*file, grid, settings, timer);
    EXPECT_TRUE(!e.gof1 && !e.gof2 && !e.negative_count && !e.smallest_eigenvalue);
    EXPECT_TRUE(e.ratio_of_trace);
    EXPECT_NEAR(e.eigenvalues[0], w[0], 1e-12);

    // More components than positive eigenvalues: an agreed error with the count.
    int positive_count = 0;
    for (double v : w) positive_count += v > 1e-8 ? 1 : 0;
    settings.solver = Solver::evd;
    settings.components = positive_count + 1;
    const std::string message = fit_error(*file, grid, settings);
    EXPECT_NE(message.find("the " + std::to_string(positive_count) + " positive eigenvalues"),
              std::string::npos)
        << message;
    EXPECT_TRUE(test::all_ranks(world, !message.empty()));
  }
}

TEST(Mds, EveryInvalidDistanceMatrixIsAnAgreedErrorNamingTheEntry) {
  const Comm world = Comm::world();
  const int n = 9;
  const auto base = serial_distances(Metric::euclidean, test::random_data(n, 2, 3), n, 2);
  struct Bad {
    std::string name;
    std::vector<double> dist;
    int rows, cols;
    std::string expected;
  };
  std::vector<Bad> cases;
  {
    std::vector<double> rect(base.begin(), base.begin() + 6 * n);
    cases.push_back({"rect", rect, 6, n, "must be square, found 6 x 9"});
  }
  {
    auto d = base;
    d[5 * n + 5] = 0.25;
    d[7 * n + 7] = 0.5;
    cases.push_back({"diag", d, n, n, "diagonal entry (6, 6) is 0.25"});
  }
  {
    auto d = base;
    d[6 * n + 2] = d[2 * n + 6] = -1.5;  // first in row-major order: (3, 7)
    d[8 * n + 1] = d[1 * n + 8] = -2;    // (2, 9) comes earlier still
    cases.push_back(
        {"negative", d, n, n, "entry (2, 9) is -2, but distances must be non-negative"});
  }
  {
    auto d = base;
    d[6 * n + 2] = 0.5;
    d[2 * n + 6] = 0.75;
    cases.push_back({"asymmetric", d, n, n, "entry (7, 3) is 0.5 but (3, 7) is 0.75"});
  }
  const std::string dir = test::scratch_dir(world, "mds_invalid");
  for (const auto& c : cases)
    for (auto [p, q] : grid_shapes(world.size())) {
      auto file = io::open_matrix_file(world, test::write_bin(world, dir, c.name + ".bin", c.dist),
                                       {c.rows, c.cols});
      BlacsGrid grid(world, p, q);
      MdsSettings settings;
      settings.block_size = 2;
      const std::string message = fit_error(*file, grid, settings);
      EXPECT_NE(message.find(c.expected), std::string::npos) << c.name << ": " << message;
      EXPECT_NE(message.find(c.name + ".bin"), std::string::npos) << message;
      EXPECT_TRUE(test::all_ranks(world, !message.empty())) << c.name;
    }

  // --symmetrize: the asymmetric matrix is averaged instead, and the fit
  // equals the fit of the averaged matrix.
  auto asym = cases.back().dist, averaged = asym;
  averaged[6 * n + 2] = averaged[2 * n + 6] = 0.625;
  auto afile = io::open_matrix_file(world, test::write_bin(world, dir, "a.bin", asym), {n, n});
  auto sfile = io::open_matrix_file(world, test::write_bin(world, dir, "s.bin", averaged), {n, n});
  BlacsGrid grid(world);
  MdsSettings settings;
  settings.block_size = 2;
  PhaseTimer timer;
  const MdsResult plain = fit_mds(*sfile, grid, settings, timer);
  settings.symmetrize = true;
  const MdsResult sym = fit_mds(*afile, grid, settings, timer);
  EXPECT_TRUE(sym.max_asymmetry && std::abs(*sym.max_asymmetry - 0.25) < 1e-15);
  EXPECT_LT(max_abs_diff(sym.eigenvalues, plain.eigenvalues), 1e-12);
  EXPECT_LT(max_abs_diff(sym.embedding, plain.embedding), 1e-12);

  // Points: the cosine distance of a zero vector is undefined.
  auto x = test::random_data(n, 3, 9);
  for (int t = 0; t < 3; ++t) x[4 * 3 + t] = 0;
  auto xfile = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, 3});
  settings = MdsSettings{};
  settings.metric = Metric::cosine;
  settings.block_size = 2;
  const std::string message = fit_error(*xfile, grid, settings);
  EXPECT_NE(message.find("row 5 is the zero vector"), std::string::npos) << message;
  EXPECT_TRUE(test::all_ranks(world, !message.empty()));
}

TEST(Mds, GowerTransformReproducesTrainingPointsAndMatchesSerialFormula) {
  const Comm world = Comm::world();
  const int n = 30, m = 7, d = 3, k = 2;
  const auto x = spread_points(n, d, 17);
  const auto y = spread_points(m, d, 18);
  const auto dist = serial_distances(Metric::manhattan, x, n, d);
  // New points' distances to the training points (m x n).
  std::vector<double> dstar(std::size_t(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int t = 0; t < d; ++t) dstar[i * n + j] += std::abs(y[i * d + t] - x[j * d + t]);

  const std::string dir = test::scratch_dir(world, "mds_transform");
  auto dfile = io::open_matrix_file(world, test::write_bin(world, dir, "d.bin", dist), {n, n});
  auto xfile = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  auto yfile = io::open_matrix_file(world, test::write_bin(world, dir, "y.bin", y), {m, d});
  auto dsfile = io::open_matrix_file(world, test::write_bin(world, dir, "ds.bin", dstar), {m, n});
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    MdsSettings settings;
    settings.components = k;
    settings.block_size = 4;
    PhaseTimer timer;
    const MdsResult r = fit_mds(*dfile, grid, settings, timer);
    const std::string vname = "v" + std::to_string(p) + "x" + std::to_string(q) + ".bin";
    auto vfile = io::open_matrix_file(world, test::write_bin(world, dir, vname, r.vectors), {n, k});
    MdsProjection model;
    model.n = n;
    model.k = k;
    model.eigenvalues = r.eigenvalues;
    model.sq_row_means = r.sq_row_means;
    model.sq_grand_mean = r.sq_grand_mean;
    // Training distance rows give back the training embedding.
    const auto again = mds_transform(model, nullptr, *vfile, *dfile, grid, 5);
    // New points given by distances, and as points (distances assembled).
    const auto by_distances = mds_transform(model, nullptr, *vfile, *dsfile, grid, 3);
    MdsProjection points_model = model;
    points_model.metric = Metric::manhattan;
    points_model.d = d;
    const auto by_points = mds_transform(points_model, xfile.get(), *vfile, *yfile, grid, 2);
    if (!world.is_root()) continue;
    EXPECT_LT(max_abs_diff(again, r.embedding), 1e-10);
    EXPECT_LT(max_abs_diff(by_points, by_distances), 1e-10);
    // Serial Gower for every new point, with r and g computed here.
    std::vector<double> rmean(n, 0.0);
    double g = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        rmean[j] += dist[i * n + j] * dist[i * n + j] / n;
        g += dist[i * n + j] * dist[i * n + j] / (double(n) * n);
      }
    for (int i = 0; i < m; ++i) {
      double qmean = 0;
      for (int j = 0; j < n; ++j) qmean += dstar[i * n + j] * dstar[i * n + j] / n;
      for (int c = 0; c < k; ++c) {
        double yc = 0;
        for (int j = 0; j < n; ++j) {
          const double b = -0.5 * (dstar[i * n + j] * dstar[i * n + j] - rmean[j] - qmean + g);
          yc += r.vectors[j * k + c] * b;
        }
        yc /= std::sqrt(r.eigenvalues[c]);
        EXPECT_NEAR(by_distances[i * k + c], yc, 1e-9) << "point " << i << " component " << c;
      }
    }
  }
}

// ---- --add: the additive constants of Cailliez and Lingoes ----

namespace {

// R 4.2.2: r <- cmdscale(eurodist, k = 2, add = TRUE, eig = TRUE), printed
// with sprintf("%.17g", ...): r$ac, r$eig[1:2], t(r$points[1:3, ]).
constexpr double kRCailliez = 2132.6784951979384;
constexpr double kRCailliezEig[] = {42271880.80057101, 29539104.213812925};
constexpr double kRCailliezPoints[] = {-2683.2195822804028, 3149.753939631074,
                                       1448.3278544949562,  734.87726041759322,
                                       -234.92183007752953, -735.20435823117577};
// R 4.2.2, Lingoes by hand (R's cmdscale has only Cailliez):
//   d <- as.matrix(eurodist)
//   B2 <- -0.5 * .Call(stats:::C_DoubleCentre, d^2)
//   c <- -min(eigen(B2, symmetric = TRUE, only.values = TRUE)$values)
//   dl <- sqrt(d^2 + 2 * c); diag(dl) <- 0
//   r <- cmdscale(dl, k = 2, eig = TRUE)
// c, r$eig[1:2], t(r$points[1:3, ]) with sprintf("%.17g", ...).
constexpr double kRLingoes = 2251844.3317361567;
constexpr double kRLingoesEig[] = {21790221.421278987, 14108399.665737225};
constexpr double kRLingoesPoints[] = {2418.6562549070436, 1962.1996620584737, -871.64970487380992,
                                      596.48185161247545, 62.5008685947586,   -400.42569116763491};

// Largest |difference| of the first rows of a row-major n x 2 embedding and
// `expected` (3 x 2), each column compared up to its sign.
double points_difference(const std::vector<double>& y, const double* expected) {
  double worst = 0;
  for (int c = 0; c < 2; ++c) {
    const double sign = (y[c] > 0) == (expected[c] > 0) ? 1 : -1;
    for (int i = 0; i < 3; ++i)
      worst = std::max(worst, std::abs(sign * y[i * 2 + c] - expected[i * 2 + c]));
  }
  return worst;
}

// Off-diagonal d_ij + c (row-major copy).
std::vector<double> shifted(const std::vector<double>& dist, int n, double c) {
  auto out = dist;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) out[std::size_t(i) * n + j] += c;
  return out;
}

// Cailliez's constant from the definition, serially: the largest real
// eigenvalue (dgeev) of [[0, 2 B2], [-I, -4 B1]] built with plain loops.
double serial_cailliez(const std::vector<double>& dist, int n) {
  const test::Dense b2 = serial_b(dist, n);
  test::Dense half{n, std::vector<double>(std::size_t(n) * n)};
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) half(i, j) = -0.5 * dist[std::size_t(i) * n + j];
  const test::Dense b1 = test::serial_center(half);
  test::Dense z{2 * n, std::vector<double>(std::size_t(4) * n * n, 0.0)};
  for (int i = 0; i < n; ++i) {
    z(n + i, i) = -1;
    for (int j = 0; j < n; ++j) {
      z(i, n + j) = 2 * b2(i, j);
      z(n + i, n + j) = -4 * b1(i, j);
    }
  }
  double best = -std::numeric_limits<double>::infinity();
  for (auto [re, im] : test::serial_eigenvalues_general(z))
    if (im == 0) best = std::max(best, re);
  return best;
}

}  // namespace

TEST(MdsAdditive, CailliezMatchesRAndTheSerialEigenproblemOnEveryGridAndBlocking) {
  const Comm world = Comm::world();
  const int n = test::kEurodistSize, k = 2;
  const auto dist = test::eurodist_matrix();
  const double c_serial = serial_cailliez(dist, n);
  EXPECT_NEAR(c_serial, kRCailliez, 1e-9 * kRCailliez);
  // The definition: at c* the corrected B is positive semidefinite (up to
  // round-off), just below it is not.
  test::Dense unused;
  const auto at = test::serial_eigh(serial_b(shifted(dist, n, c_serial), n), unused);
  const auto below = test::serial_eigh(serial_b(shifted(dist, n, 0.99 * c_serial), n), unused);
  EXPECT_GT(at.front(), -1e-12 * at.back());
  EXPECT_LT(below.front(), -1e-6 * below.back());

  const std::string dir = test::scratch_dir(world, "mds_cailliez");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "d.bin", dist), {n, n});
  for (auto [p, q] : grid_shapes(world.size()))
    for (int nb : {3, 8}) {
      BlacsGrid grid(world, p, q);
      MdsSettings settings;
      settings.components = k;
      settings.block_size = nb;
      settings.additive = AdditiveMethod::cailliez;
      PhaseTimer timer;
      const MdsResult r = fit_mds(*file, grid, settings, timer);
      const std::string where =
          std::to_string(p) + "x" + std::to_string(q) + " nb " + std::to_string(nb);
      ASSERT_TRUE(r.additive.has_value());
      EXPECT_NEAR(r.additive->constant, kRCailliez, 1e-9 * kRCailliez) << where;
      EXPECT_NEAR(r.additive->constant, c_serial, 1e-10 * c_serial) << where;
      EXPECT_EQ(r.additive->largest_real_part, r.additive->constant) << where;
      for (int j = 0; j < k; ++j)
        EXPECT_NEAR(r.eigenvalues[j], kRCailliezEig[j], 1e-9 * kRCailliezEig[0]) << where;
      // The corrected B is Euclidean: nothing below round-off at c*'s scale.
      EXPECT_GT(r.spectrum.back(), -1e-12 * r.spectrum.front()) << where;
      if (world.is_root()) {
        EXPECT_LT(points_difference(r.embedding, kRCailliezPoints), 1e-8 * 4000) << where;
      }
    }
}

TEST(MdsAdditive, CailliezFromPointsMatchesSerialDgeevAtALargerSize) {
  const Comm world = Comm::world();
  // Manhattan distances of 130 points (2n = 260): many QR sweeps across blocks.
  const int n = 130, d = 3;
  const auto x = spread_points(n, d, 41);
  const auto dist = serial_distances(Metric::manhattan, x, n, d);
  const double c_serial = serial_cailliez(dist, n);
  ASSERT_GT(c_serial, 0);
  test::Dense unused;
  const auto at = test::serial_eigh(serial_b(shifted(dist, n, c_serial), n), unused);
  EXPECT_GT(at.front(), -1e-10 * at.back());
  const std::string dir = test::scratch_dir(world, "mds_cailliez_points");
  auto xfile = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    MdsSettings settings;
    settings.metric = Metric::manhattan;
    settings.components = 2;
    settings.block_size = 16;
    settings.additive = AdditiveMethod::cailliez;
    PhaseTimer timer;
    const MdsResult r = fit_mds(*xfile, grid, settings, timer);
    EXPECT_NEAR(r.additive->constant, c_serial, 1e-10 * c_serial) << p << "x" << q;
  }
}

TEST(MdsAdditive, LingoesMatchesRAndSerialDsyevdFromDistancesAndFromPoints) {
  const Comm world = Comm::world();
  const int n = test::kEurodistSize, k = 2;
  const auto dist = test::eurodist_matrix();
  test::Dense unused;
  const double c_serial = -test::serial_eigh(serial_b(dist, n), unused).front();
  EXPECT_NEAR(c_serial, kRLingoes, 1e-10 * kRLingoes);
  // Manhattan distances of points are not Euclidean: the constant also
  // applies to distances computed from points under a metric.
  const int m = 25, d = 3;
  const auto x = spread_points(m, d, 31);
  const auto manhattan = serial_distances(Metric::manhattan, x, m, d);
  const double c_points = -test::serial_eigh(serial_b(manhattan, m), unused).front();
  ASSERT_GT(c_points, 0);
  std::vector<double> corrected = manhattan;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j)
      if (i != j) {
        double& v = corrected[std::size_t(i) * m + j];
        v = std::sqrt(v * v + 2 * c_points);
      }
  const Reference ref = serial_mds(corrected, m, k);

  const std::string dir = test::scratch_dir(world, "mds_lingoes");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "d.bin", dist), {n, n});
  auto xfile = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {m, d});
  for (auto [p, q] : grid_shapes(world.size()))
    for (int nb : {2, 5}) {
      BlacsGrid grid(world, p, q);
      MdsSettings settings;
      settings.components = k;
      settings.block_size = nb;
      settings.additive = AdditiveMethod::lingoes;
      PhaseTimer timer;
      const MdsResult r = fit_mds(*file, grid, settings, timer);
      const std::string where =
          std::to_string(p) + "x" + std::to_string(q) + " nb " + std::to_string(nb);
      ASSERT_TRUE(r.additive.has_value());
      EXPECT_NEAR(r.additive->constant, c_serial, 1e-10 * c_serial) << where;
      EXPECT_NEAR(r.additive->constant, kRLingoes, 1e-9 * kRLingoes) << where;
      for (int j = 0; j < k; ++j)
        EXPECT_NEAR(r.eigenvalues[j], kRLingoesEig[j], 1e-9 * kRLingoesEig[0]) << where;
      EXPECT_GT(r.spectrum.back(), -1e-12 * r.spectrum.front()) << where;
      if (world.is_root()) {
        EXPECT_LT(points_difference(r.embedding, kRLingoesPoints), 1e-8 * 3000) << where;
      }

      settings.metric = Metric::manhattan;
      const MdsResult rp = fit_mds(*xfile, grid, settings, timer);
      EXPECT_NEAR(rp.additive->constant, c_points, 1e-10 * c_points) << where;
      for (int j = 0; j < k; ++j)
        EXPECT_NEAR(rp.eigenvalues[j], ref.spectrum[j], 1e-10 * ref.spectrum[0]) << where;
      if (world.is_root()) {
        EXPECT_LT(max_abs_diff(rp.embedding, ref.embedding), 1e-9) << where;
      }
    }
}

TEST(MdsAdditive, TransformCorrectsNewDistancesAsTheFitDid) {
  const Comm world = Comm::world();
  const int n = test::kEurodistSize, k = 2, m = 3;
  const auto dist = test::eurodist_matrix();
  // New objects: three cities' rows stretched (all distances positive).
  std::vector<double> dstar(std::size_t(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) dstar[i * n + j] = 1.05 * dist[(4 * i + 1) * n + j] + 10;
  const std::string dir = test::scratch_dir(world, "mds_add_transform");
  auto dfile = io::open_matrix_file(world, test::write_bin(world, dir, "d.bin", dist), {n, n});
  auto dsfile = io::open_matrix_file(world, test::write_bin(world, dir, "ds.bin", dstar), {m, n});
  for (AdditiveMethod method : {AdditiveMethod::cailliez, AdditiveMethod::lingoes})
    for (auto [p, q] : grid_shapes(world.size())) {
      BlacsGrid grid(world, p, q);
      MdsSettings settings;
      settings.components = k;
      settings.block_size = 4;
      settings.additive = method;
      PhaseTimer timer;
      const MdsResult r = fit_mds(*dfile, grid, settings, timer);
      const double c = r.additive->constant;
      const std::string vname = "v" + std::to_string(p) + "x" + std::to_string(q) + ".bin";
      auto vfile =
          io::open_matrix_file(world, test::write_bin(world, dir, vname, r.vectors), {n, k});
      MdsProjection model;
      model.n = n;
      model.k = k;
      model.eigenvalues = r.eigenvalues;
      model.sq_row_means = r.sq_row_means;
      model.sq_grand_mean = r.sq_grand_mean;
      model.additive = method;
      model.additive_constant = c;
      // The training rows (zero on the diagonal: the same object) give the fit back.
      const auto again = mds_transform(model, nullptr, *vfile, *dfile, grid, 5);
      const auto placed = mds_transform(model, nullptr, *vfile, *dsfile, grid, 3);
      if (!world.is_root()) continue;
      EXPECT_LT(max_abs_diff(again, r.embedding), 1e-9 * 4000);
      // Serial Gower on the corrected distances, written from the definitions.
      auto fix = [&](double v) {
        return method == AdditiveMethod::cailliez ? v + c : std::sqrt(v * v + 2 * c);
      };
      std::vector<double> rmean(n, 0.0);
      double g = 0;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          const double v = i == j ? 0 : fix(dist[i * n + j]);
          rmean[j] += v * v / n;
          g += v * v / (double(n) * n);
        }
      for (int i = 0; i < m; ++i) {
        double qmean = 0;
        for (int j = 0; j < n; ++j) qmean += fix(dstar[i * n + j]) * fix(dstar[i * n + j]) / n;
        for (int col = 0; col < k; ++col) {
          double yc = 0;
          for (int j = 0; j < n; ++j) {
            const double v = fix(dstar[i * n + j]);
            yc += r.vectors[j * k + col] * -0.5 * (v * v - rmean[j] - qmean + g);
          }
          yc /= std::sqrt(r.eigenvalues[col]);
          EXPECT_NEAR(placed[i * k + col], yc, 1e-9 * 4000)
              << "point " << i << " component " << col;
        }
      }
    }
}

TEST(MdsAdditive, StorageItCannotUseIsAnAgreedError) {
  const Comm world = Comm::world();
  const int m = 12, d = 2;
  const auto x = spread_points(m, d, 3);
  const std::string dir = test::scratch_dir(world, "mds_add_errors");
  auto xfile = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {m, d});
  BlacsGrid grid(world, 1, world.size());
  MdsSettings settings;
  settings.metric = Metric::euclidean;
  settings.block_size = 4;
  settings.additive = AdditiveMethod::cailliez;
  settings.single_precision = true;
  settings.solver = Solver::krylov;
  EXPECT_NE(fit_error(*xfile, grid, settings)
                .find("--add cailliez needs the n x n dissimilarities "
                      "stored whole in double"),
            std::string::npos);
  settings.single_precision = false;
  settings.solver = Solver::evd;
  settings.storage = StorageRequest::lower;
  settings.additive = AdditiveMethod::lingoes;
  EXPECT_NE(fit_error(*xfile, grid, settings).find("--add lingoes needs"), std::string::npos);
  // auto (and full) hold the whole matrix in double.
  settings.storage = StorageRequest::automatic;
  EXPECT_EQ(fit_error(*xfile, grid, settings), "");
}
