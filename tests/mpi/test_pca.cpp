// Linear PCA (fit_pca, pca_transform) against a serial LAPACK reference on
// the serially formed covariance matrix, and against identities: the
// covariance and Gram routes agree, linear-kernel KPCA is PCA, --variance
// picks the right k on data with a prescribed spectrum, whitened components
// are uncorrelated with unit variance, and bad input fails on every rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kembed/core/error.hpp"
#include "kembed/linalg/lapack.hpp"
#include "kembed/spectral/kpca.hpp"
#include "kembed/spectral/pca.hpp"
#include "kembed/spectral/pca_likelihood.hpp"
#include "kembed/spectral/spectral_step.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using kembed::test::grid_shapes;

using namespace kembed;
using namespace kembed::spectral;
using namespace kembed::kernel;
using kembed::test::max_abs_diff;

namespace {

// Row-major n x d data with unequal column scales and non-zero means.
std::vector<double> skewed_data(int n, int d, unsigned seed) {
  auto x = test::random_data(n, d, seed);
  for (int i = 0; i < n; ++i)
    for (int t = 0; t < d; ++t) {
      x[std::size_t(i) * d + t] = (t + 1) * x[std::size_t(i) * d + t] + 2.0 * t - 3;
      if (t > 0) x[std::size_t(i) * d + t] += 0.5 * x[std::size_t(i) * d];  // correlated
    }
  return x;
}

struct SerialPca {
  std::vector<double> mean, scale;
  std::vector<double> values;      // top k explained variances, descending
  std::vector<double> spectrum;    // all d, descending
  std::vector<double> embedding;   // n x k row-major
  std::vector<double> components;  // d x k row-major
  double total = 0;
};

// PCA by the book on one process: center (and scale), C = Xc^T Xc / (n-1) by
// loops, LAPACK dsyevd, Z = Xc U, sign convention on Z with U flipped along.
SerialPca serial_pca(const std::vector<double>& x, int n, int d, int k, bool standardize) {
  SerialPca r;
  std::vector<double> xc = x;
  for (int t = 0; t < d; ++t) {
    double mean = 0, ss = 0;
    for (int i = 0; i < n; ++i) mean += x[std::size_t(i) * d + t];
    mean /= n;
    for (int i = 0; i < n; ++i) ss += std::pow(x[std::size_t(i) * d + t] - mean, 2);
    const double scale = standardize ? std::sqrt(ss / (n - 1)) : 1.0;
    r.mean.push_back(mean);
    r.scale.push_back(scale);
    for (int i = 0; i < n; ++i)
      xc[std::size_t(i) * d + t] = (x[std::size_t(i) * d + t] - mean) / scale;
  }
  test::Dense c{d, std::vector<double>(std::size_t(d) * d, 0.0)}, u;
  for (int a = 0; a < d; ++a)
    for (int b = 0; b < d; ++b) {
      for (int i = 0; i < n; ++i)
        c(a, b) += xc[std::size_t(i) * d + a] * xc[std::size_t(i) * d + b];
      c(a, b) /= n - 1;
    }
  for (int a = 0; a < d; ++a) r.total += c(a, a);
  const auto w = test::serial_eigh(c, u);
  for (int j = 0; j < d; ++j) r.spectrum.push_back(w[d - 1 - j]);
  r.values.assign(r.spectrum.begin(), r.spectrum.begin() + k);
  std::vector<double> z(std::size_t(n) * k, 0.0);  // column-major
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < n; ++i)
      for (int t = 0; t < d; ++t)
        z[std::size_t(j) * n + i] += xc[std::size_t(i) * d + t] * u(t, d - 1 - j);
  const auto before = z;
  test::serial_fix_signs(z, n, k);
  r.embedding.resize(std::size_t(n) * k);
  r.components.resize(std::size_t(d) * k);
  for (int j = 0; j < k; ++j) {
    double sign = 1;
    for (int i = 0; i < n; ++i)
      if (before[std::size_t(j) * n + i] != 0) {
        sign = z[std::size_t(j) * n + i] == before[std::size_t(j) * n + i] ? 1.0 : -1.0;
        break;
      }
    for (int i = 0; i < n; ++i) r.embedding[std::size_t(i) * k + j] = z[std::size_t(j) * n + i];
    for (int t = 0; t < d; ++t) r.components[std::size_t(t) * k + j] = sign * u(t, d - 1 - j);
  }
  return r;
}

struct PcaCase {
  bool standardize;
  Solver solver;
  PcaRoute route;
};

class PcaVsSerial : public ::testing::TestWithParam<PcaCase> {};

std::string what(const PcaRoute route, int p, int q, int nb) {
  return pca_route_name(route) + " grid " + std::to_string(p) + "x" + std::to_string(q) + " nb " +
         std::to_string(nb);
}

}  // namespace

TEST_P(PcaVsSerial, MatchesLapackOnEveryGridAndBlocking) {
  const Comm world = Comm::world();
  const int n = 37, d = 5, k = 3;
  const auto x = skewed_data(n, d, 11);
  const std::string dir = test::scratch_dir(world, "pca_serial");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  const SerialPca ref = serial_pca(x, n, d, k, GetParam().standardize);
  double tail = 0;
  for (int j = k; j < d; ++j) tail += ref.spectrum[j];
  PcaSettings settings;
  settings.components = k;
  settings.standardize = GetParam().standardize;
  settings.solver = GetParam().solver;
  settings.route = GetParam().route;
  for (auto [p, q] : grid_shapes(world.size()))
    for (int nb : {2, 16}) {
      BlacsGrid grid(world, p, q);
      settings.block_size = nb;
      PhaseTimer timer;
      const PcaResult r = fit_pca(*file, grid, settings, timer);
      const std::vector<double> z = row_major_on_root(*r.embedding);
      const std::string where = what(r.route, p, q, nb);
      // No ASSERT here: a rank leaving early would hang the others' collectives.
      EXPECT_EQ(r.k, k) << where;
      EXPECT_EQ(r.route,
                settings.route == PcaRoute::automatic ? PcaRoute::covariance : settings.route);
      EXPECT_LT(max_abs_diff(r.mean, ref.mean), 1e-12) << where;
      EXPECT_LT(max_abs_diff(r.scale, ref.scale), 1e-12) << where;
      EXPECT_NEAR(r.total_variance, ref.total, 1e-12 * ref.total) << where;
      EXPECT_NEAR(r.noise_variance, tail / (d - k), 1e-10 * ref.values[0]) << where;
      for (int j = 0; j < std::min<int>(k, r.explained_variance.size()); ++j) {
        EXPECT_NEAR(r.explained_variance[j], ref.values[j], 1e-12 * ref.values[0]) << where;
        EXPECT_NEAR(r.explained_ratio[j], ref.values[j] / ref.total, 1e-12) << where;
        EXPECT_LT(r.residuals[j], 1e-12) << where;
      }
      if (world.is_root()) {
        EXPECT_LT(max_abs_diff(z, ref.embedding), 1e-9) << where;
        EXPECT_LT(max_abs_diff(r.components, ref.components), 1e-10) << where;
      } else {
        EXPECT_TRUE(z.empty() && r.components.empty());
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Variants, PcaVsSerial,
                         ::testing::Values(PcaCase{false, Solver::evd, PcaRoute::automatic},
                                           PcaCase{true, Solver::evd, PcaRoute::automatic},
                                           PcaCase{false, Solver::evr, PcaRoute::covariance},
                                           PcaCase{true, Solver::evr, PcaRoute::gram},
                                           PcaCase{false, Solver::evd, PcaRoute::gram}),
                         [](const auto& info) {
                           return std::string(info.param.standardize ? "standardized"
                                                                     : "centered") +
                                  "_" + solver_name(info.param.solver) + "_" +
                                  pca_route_name(info.param.route);
                         });

// Both shapes (n >= d and d > n), forcing each route on the same data.
TEST(Pca, CovarianceAndGramRoutesAgree) {
  const Comm world = Comm::world();
  for (auto [n, d] : {std::pair<int, int>{30, 12}, std::pair<int, int>{12, 30}}) {
    const auto x = skewed_data(n, d, 5);
    const std::string dir = test::scratch_dir(world, "pca_routes");
    auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
    BlacsGrid grid(world);
    PcaSettings settings;
    settings.components = 4;
    settings.block_size = 5;
    settings.standardize = true;
    PhaseTimer timer;
    settings.route = PcaRoute::covariance;
    const PcaResult cov = fit_pca(*file, grid, settings, timer);
    settings.route = PcaRoute::gram;
    const PcaResult gram = fit_pca(*file, grid, settings, timer);
    settings.route = PcaRoute::automatic;
    const PcaResult automatic = fit_pca(*file, grid, settings, timer);
    const std::vector<double> cov_z = row_major_on_root(*cov.embedding);
    const std::vector<double> gram_z = row_major_on_root(*gram.embedding);
    const std::string shape = std::to_string(n) + " x " + std::to_string(d);
    EXPECT_EQ(automatic.route, n >= d ? PcaRoute::covariance : PcaRoute::gram) << shape;
    EXPECT_EQ(cov.spectrum.size(), std::size_t(d));
    EXPECT_EQ(gram.spectrum.size(), std::size_t(n));
    const double top = cov.explained_variance[0];
    for (int j = 0; j < 4; ++j) {
      EXPECT_NEAR(cov.explained_variance[j], gram.explained_variance[j], 1e-12 * top) << shape;
      EXPECT_NEAR(cov.explained_ratio[j], gram.explained_ratio[j], 1e-12) << shape;
    }
    EXPECT_NEAR(cov.total_variance, gram.total_variance, 1e-12 * top) << shape;
    EXPECT_NEAR(cov.noise_variance, gram.noise_variance, 1e-10 * top) << shape;
    if (world.is_root()) {
      EXPECT_LT(max_abs_diff(cov_z, gram_z), 1e-9) << shape;
      EXPECT_LT(max_abs_diff(cov.components, gram.components), 1e-9) << shape;
      // The axes are orthonormal on both routes.
      for (const PcaResult* r : {&cov, &gram})
        for (int a = 0; a < 4; ++a)
          for (int b = 0; b < 4; ++b) {
            double dot = 0;
            for (int t = 0; t < d; ++t) dot += r->components[t * 4 + a] * r->components[t * 4 + b];
            EXPECT_NEAR(dot, a == b ? 1.0 : 0.0, 1e-12) << shape;
          }
    }
  }
}

TEST(Pca, LinearKernelPcaIsPcaWithEigenvaluesTimesNMinusOne) {
  const Comm world = Comm::world();
  const int n = 45, d = 6, k = 4;
  const auto x = skewed_data(n, d, 9);
  const std::string dir = test::scratch_dir(world, "pca_kpca");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  BlacsGrid grid(world);
  PhaseTimer timer;
  KpcaSettings ks;
  ks.kernel.type = KernelType::linear;
  ks.components = k;
  ks.block_size = 7;
  const KpcaResult kpca = fit_kpca(*file, grid, ks, timer);
  for (PcaRoute route : {PcaRoute::covariance, PcaRoute::gram}) {
    PcaSettings ps;
    ps.components = k;
    ps.block_size = 4;
    ps.route = route;
    const PcaResult pca = fit_pca(*file, grid, ps, timer);
    const std::vector<double> pca_z = row_major_on_root(*pca.embedding);
    for (int j = 0; j < k; ++j) {
      EXPECT_NEAR(kpca.eigenvalues[j], (n - 1) * pca.explained_variance[j],
                  1e-12 * kpca.eigenvalues[0]);
      EXPECT_NEAR(kpca.explained_ratio[j], pca.explained_ratio[j], 1e-12);
    }
    if (world.is_root()) {
      EXPECT_LT(max_abs_diff(kpca.embedding, pca_z), 1e-9);
    }
  }
}

// X = Q diag(s) W^T + mean with Q orthonormal and orthogonal to 1 (so
// centering keeps it) and W orthogonal: the covariance eigenvalues are
// exactly s_j^2 / (n-1).
TEST(Pca, VarianceSelectsTheSmallestKAboveTheThreshold) {
  const Comm world = Comm::world();
  const int n = 40, d = 6;
  const std::vector<double> variances = {10, 5, 2.5, 1.5, 0.5, 0.5};  // ratios /20
  auto orthonormal = [](std::vector<double> a, int rows, int cols, bool center) {
    // Modified Gram-Schmidt on the columns of row-major a (after centering).
    for (int j = 0; j < cols; ++j) {
      if (center) {
        double mean = 0;
        for (int i = 0; i < rows; ++i) mean += a[i * cols + j] / rows;
        for (int i = 0; i < rows; ++i) a[i * cols + j] -= mean;
      }
      for (int pass = 0; pass < 2; ++pass)
        for (int l = 0; l < j; ++l) {
          double dot = 0;
          for (int i = 0; i < rows; ++i) dot += a[i * cols + j] * a[i * cols + l];
          for (int i = 0; i < rows; ++i) a[i * cols + j] -= dot * a[i * cols + l];
        }
      double norm = 0;
      for (int i = 0; i < rows; ++i) norm += a[i * cols + j] * a[i * cols + j];
      for (int i = 0; i < rows; ++i) a[i * cols + j] /= std::sqrt(norm);
    }
    return a;
  };
  const auto q = orthonormal(test::random_data(n, d, 3), n, d, true);
  const auto w = orthonormal(test::random_data(d, d, 4), d, d, false);
  std::vector<double> x(std::size_t(n) * d);
  for (int i = 0; i < n; ++i)
    for (int t = 0; t < d; ++t) {
      double v = 7.0 - t;
      for (int j = 0; j < d; ++j)
        v += q[i * d + j] * std::sqrt(variances[j] * (n - 1)) * w[t * d + j];
      x[std::size_t(i) * d + t] = v;
    }
  const std::string dir = test::scratch_dir(world, "pca_variance");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  // Cumulative ratios: 0.5, 0.75, 0.875, 0.95, 0.975, 1.
  const std::vector<std::pair<double, int>> cases = {{0.3, 1},  {0.5 - 1e-9, 1}, {0.5 + 1e-9, 2},
                                                     {0.74, 2}, {0.8, 3},        {0.9, 4},
                                                     {0.96, 5}, {0.99, 6}};
  BlacsGrid grid(world);
  for (PcaRoute route : {PcaRoute::covariance, PcaRoute::gram})
    for (auto [threshold, expected] : cases) {
      // The n x n Gram route is the slower one: a few thresholds suffice.
      if (route == PcaRoute::gram && threshold != 0.3 && threshold != 0.8 && threshold != 0.99)
        continue;
      PcaSettings settings;
      settings.variance = threshold;
      settings.route = route;
      settings.block_size = 8;
      PhaseTimer timer;
      const PcaResult r = fit_pca(*file, grid, settings, timer);
      EXPECT_EQ(r.k, expected) << "--variance " << threshold << " " << pca_route_name(route);
      EXPECT_EQ(r.embedding->rows(), n);
      EXPECT_EQ(r.embedding->cols(), r.k);
      EXPECT_NEAR(r.total_variance, 20.0, 1e-10);
      for (int j = 0; j < std::min(r.k, d); ++j)
        EXPECT_NEAR(r.explained_variance[j], variances[j], 1e-10) << j;
      if (r.k < d) {
        double tail = 0;
        for (int j = r.k; j < d; ++j) tail += variances[j];
        EXPECT_NEAR(r.noise_variance, tail / (d - r.k), 1e-10);
      }
    }
}

TEST(Pca, WhitenedComponentsHaveUnitVarianceAndNoCorrelation) {
  const Comm world = Comm::world();
  for (auto [n, d] : {std::pair<int, int>{50, 5}, std::pair<int, int>{15, 40}}) {
    const int k = 4;
    const auto x = skewed_data(n, d, 17);
    const std::string dir = test::scratch_dir(world, "pca_whiten");
    auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
    BlacsGrid grid(world);
    PcaSettings settings;
    settings.components = k;
    settings.whiten = true;
    settings.block_size = 4;
    PhaseTimer timer;
    const PcaResult r = fit_pca(*file, grid, settings, timer);
    settings.whiten = false;
    const PcaResult plain = fit_pca(*file, grid, settings, timer);
    const std::vector<double> white = row_major_on_root(*r.embedding);
    const std::vector<double> unwhite = row_major_on_root(*plain.embedding);
    if (!world.is_root()) continue;
    for (int a = 0; a < k; ++a) {
      double mean = 0;
      for (int i = 0; i < n; ++i) mean += white[i * k + a] / n;
      EXPECT_NEAR(mean, 0.0, 1e-12);
      for (int b = 0; b < k; ++b) {
        double cov = 0;
        for (int i = 0; i < n; ++i) cov += white[i * k + a] * white[i * k + b];
        EXPECT_NEAR(cov / (n - 1), a == b ? 1.0 : 0.0, 1e-10) << n << " x " << d;
      }
      // Whitening rescales the plain components and keeps their signs.
      for (int i = 0; i < n; ++i)
        EXPECT_NEAR(white[i * k + a] * std::sqrt(plain.explained_variance[a]),
                    unwhite[i * k + a], 1e-10);
    }
  }
}

TEST(Pca, TransformOfTrainingPointsReproducesTheFit) {
  const Comm world = Comm::world();
  const int n = 33, d = 7, k = 3;
  const auto x = skewed_data(n, d, 23);
  const std::string dir = test::scratch_dir(world, "pca_transform");
  const std::string data = test::write_bin(world, dir, "x.bin", x);
  auto file = io::open_matrix_file(world, data, {n, d});
  for (PcaRoute route : {PcaRoute::covariance, PcaRoute::gram})
    for (bool flags : {false, true}) {
      BlacsGrid grid(world);
      PcaSettings settings;
      settings.components = k;
      settings.standardize = settings.whiten = flags;
      settings.route = route;
      settings.block_size = 4;
      PhaseTimer timer;
      const PcaResult r = fit_pca(*file, grid, settings, timer);
      const std::vector<double> fitted = row_major_on_root(*r.embedding);
      // The axes as model format 1 stores them (d x k) and as format 2 (k x d).
      std::vector<double> rows_of_axes(r.components.size());
      for (int t = 0; t < d && world.is_root(); ++t)
        for (int j = 0; j < k; ++j) rows_of_axes[std::size_t(j) * d + t] = r.components[t * k + j];
      for (bool as_rows : {false, true}) {
        auto axes = io::open_matrix_file(
            world, test::write_bin(world, dir, "u.bin", as_rows ? rows_of_axes : r.components),
            {as_rows ? k : d, as_rows ? d : k});
        const PcaProjection model{d,     k,       r.mean,      r.scale, r.explained_variance,
                                  flags, as_rows, std::nullopt};
        const auto z = pca_transform(model, *axes, *file, world).embedding;
        if (world.is_root()) {
          EXPECT_LT(max_abs_diff(z, fitted), 1e-10) << (as_rows ? "k x d" : "d x k") << " axes";
        } else {
          EXPECT_TRUE(z.empty());
        }
        // In pieces of 1 to 5 rows (ranks with fewer pieces than others
        // take part in the reads with none), scored: the same rows and
        // log-likelihoods as in one piece.
        PcaProjection scored = model;
        scored.noise_variance = r.noise_variance;
        const PcaTransformed whole = pca_transform(scored, *axes, *file, world, true);
        for (int rows : {1, 2, 5}) {
          const PcaTransformed pieces =
              pca_transform(scored, *axes, *file, world, true, std::int64_t(rows) * d * 8);
          if (world.is_root()) {
            ASSERT_EQ(pieces.embedding.size(), fitted.size());
            EXPECT_LT(max_abs_diff(pieces.embedding, fitted), 1e-10) << rows << "-row pieces";
            ASSERT_EQ(pieces.log_likelihood.size(), std::size_t(n));
            EXPECT_LT(max_abs_diff(pieces.log_likelihood, whole.log_likelihood), 1e-12)
                << rows << "-row pieces";
          }
        }
        // Fewer points than ranks: some ranks project no rows.
        const std::vector<double> three(x.begin(), x.begin() + 3 * d);
        auto few = io::open_matrix_file(world, test::write_bin(world, dir, "y.bin", three), {3, d});
        const auto z3 = pca_transform(model, *axes, *few, world).embedding;
        if (world.is_root()) {
          const std::vector<double> want(fitted.begin(), fitted.begin() + 3 * k);
          EXPECT_LT(max_abs_diff(z3, want), 1e-10) << "3 points";
        }
      }
    }
}

TEST(Pca, ConstantColumnUnderStandardizeIsAnAgreedErrorNamingIt) {
  const Comm world = Comm::world();
  const int n = 23, d = 4;
  auto x = test::random_data(n, d, 2);
  for (int i = 0; i < n; ++i) x[i * d + 2] = 0.1;  // column 3; its mean rounds away from 0.1
  const std::string dir = test::scratch_dir(world, "pca_constant");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  BlacsGrid grid(world);
  PcaSettings settings;
  settings.components = 2;
  settings.block_size = 3;
  settings.standardize = true;
  std::string message;
  try {
    PhaseTimer timer;
    fit_pca(*file, grid, settings, timer);
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("column 3 (1-based"), std::string::npos) << message;
  EXPECT_NE(message.find("constant"), std::string::npos) << message;
  EXPECT_TRUE(test::all_ranks(world, !message.empty()));

  // Without --standardize a constant column is harmless (zero variance).
  settings.standardize = false;
  PhaseTimer timer;
  const PcaResult r = fit_pca(*file, grid, settings, timer);
  EXPECT_EQ(r.k, 2);
}

TEST(Pca, BadSettingsAreAgreedErrors) {
  const Comm world = Comm::world();
  const int n = 10, d = 3;
  const std::string dir = test::scratch_dir(world, "pca_bad");
  auto file = io::open_matrix_file(
      world, test::write_bin(world, dir, "x.bin", test::random_data(n, d, 1)), {n, d});
  BlacsGrid grid(world);
  struct Bad {
    PcaSettings settings;
    std::string expected;
  };
  PcaSettings too_many;
  too_many.components = 4;
  PcaSettings evr;
  evr.variance = 0.9;
  evr.solver = Solver::evr;
  for (const Bad& bad :
       {Bad{too_many, "between 1 and min(n, d) = 3"}, Bad{evr, "--solver evr does not compute"}}) {
    std::string message;
    try {
      PhaseTimer timer;
      fit_pca(*file, grid, bad.settings, timer);
    } catch (const Error& e) {
      message = e.what();
    }
    EXPECT_NE(message.find(bad.expected), std::string::npos) << message;
    EXPECT_TRUE(test::all_ranks(world, !message.empty()));
  }
}

// The probabilistic PCA formulas against dense serial algebra: log det C
// from the eigenvalues against dsyevd's eigenvalues of the formed C, the
// precision as C's inverse, score_samples against the dense quadratic form
// with that precision, and scikit-learn's noise variance on wide data
// (min(n, d) - k discarded values, not d - k).
TEST(PcaLikelihood, FormulasAgreeWithDenseAlgebra) {
  const int d = 7, k = 3, m = 4;
  // Orthonormal axes W (k x d): eigenvectors of a random B^T B.
  const auto b = test::random_data(d + 2, d, 21);
  std::vector<double> gram(std::size_t(d) * d, 0.0);
  for (int i = 0; i < d + 2; ++i)
    for (int s = 0; s < d; ++s)
      for (int t = 0; t < d; ++t) gram[std::size_t(t) * d + s] += b[i * d + s] * b[i * d + t];
  lapack::syevd(gram, d);  // columns: orthonormal eigenvectors
  std::vector<double> axes(std::size_t(k) * d);
  for (int j = 0; j < k; ++j)
    for (int t = 0; t < d; ++t) axes[std::size_t(j) * d + t] = gram[std::size_t(j) * d + t];
  // The second axis below the noise level: c_2 = max(l_2, s) = s.
  const PpcaParameters p{d, {5.0, 0.2, 1.5}, 0.7};
  ASSERT_EQ(ppca_undefined_reason(p), "");

  const std::vector<double> c = ppca_covariance(p, axes), prec = ppca_precision(p, axes);
  std::vector<double> values = c;
  const std::vector<double> eig = lapack::syevd(values, d);
  double log_det = 0;
  for (double v : eig) log_det += std::log(v);
  EXPECT_NEAR(ppca_log_det_covariance(p), log_det, 1e-12 * std::abs(log_det));
  double identity = 0;
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) {
      double sum = 0;
      for (int t = 0; t < d; ++t) sum += prec[std::size_t(i) * d + t] * c[std::size_t(t) * d + j];
      identity = std::max(identity, std::abs(sum - (i == j ? 1.0 : 0.0)));
    }
  EXPECT_LT(identity, 1e-12);

  const auto r = test::random_data(m, d, 22);  // centered rows
  std::vector<double> y(std::size_t(m) * k, 0.0), yt(std::size_t(m) * k, 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < k; ++j)
      for (int t = 0; t < d; ++t) y[std::size_t(i) * k + j] += r[i * d + t] * axes[j * d + t];
  // The axes stored d x k (format 1) give the same scores.
  std::vector<double> columns(std::size_t(d) * k);
  for (int j = 0; j < k; ++j)
    for (int t = 0; t < d; ++t) columns[std::size_t(t) * k + j] = axes[std::size_t(j) * d + t];
  const auto scores = ppca_score_rows(p, axes, true, r, y, m);
  const auto scores_columns = ppca_score_rows(p, columns, false, r, y, m);
  for (int i = 0; i < m; ++i) {
    double quad = 0;
    for (int s = 0; s < d; ++s)
      for (int t = 0; t < d; ++t)
        quad += r[i * d + s] * prec[std::size_t(s) * d + t] * r[i * d + t];
    const double expected = -0.5 * quad - 0.5 * (d * std::log(2 * M_PI) + log_det);
    EXPECT_NEAR(scores[i], expected, 1e-12 * std::abs(expected)) << i;
    EXPECT_NEAR(scores_columns[i], expected, 1e-12 * std::abs(expected)) << i;
  }

  // Wide data (n = 5 < d = 9), k = 2: the total minus the kept over 5 - 2.
  EXPECT_NEAR(ppca_noise_variance(5, 9, {4.0, 2.0}, 9.0, {}), 1.0, 1e-15);
  EXPECT_NEAR(ppca_noise_variance(5, 9, {4.0, 2.0}, 9.0, {4.0, 2.0, 2.0, 1.0, 0.0}), 1.0, 1e-15);
  EXPECT_EQ(ppca_noise_variance(5, 9, {4.0, 2.0, 2.0, 1.0, 0.0}, 9.0, {}), 0.0);
  // Tall (n = 20 >= d = 4), k = 1: over d - k = 3.
  EXPECT_NEAR(ppca_noise_variance(20, 4, {6.0}, 9.0, {}), 1.0, 1e-15);
  // s = 0 with k < d: no density.
  EXPECT_NE(ppca_undefined_reason(PpcaParameters{d, {5.0, 1.0}, 0.0}), "");
}
