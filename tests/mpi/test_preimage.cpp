// Pre-images of kernel PCA reconstructions against independent oracles: the
// PCA reconstruction by LAPACK for the linear kernel (fixed-point closed form,
// ridge with its shrinkage, nearest by brute force), the explicit
// feature-space formula k(x,x) - 2 gamma^T k_x + gamma^T K gamma with the
// full serial kernel for rbf, a serial fixed-point iteration, and a
// denoising experiment. Every grid shape and two block sizes.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "kembed/spectral/inverse_map.hpp"
#include "kembed/spectral/kpca.hpp"
#include "kembed/spectral/kpca_transform.hpp"
#include "kembed/spectral/preimage.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using namespace kembed;
using namespace kembed::spectral;
using namespace kembed::kernel;
using kembed::test::grid_shapes;

namespace {

void broadcast(const Comm& comm, std::vector<double>& v, std::size_t size) {
  v.resize(size);
  MPI_Bcast(v.data(), static_cast<int>(size), MPI_DOUBLE, 0, comm.get());
}

// A kernel PCA fit written out as the files a model holds.
struct Fit {
  int n = 0, d = 0, k = 0;
  std::vector<double> x;             // n x d
  std::vector<double> coefficients;  // n x k, every rank
  KpcaModelStats stats;
  std::unique_ptr<io::MatrixFile> x_file, a_file;
};

Fit fit(const Comm& world, const std::string& dir, std::vector<double> x, int n, int d,
        const Kernel& kernel, int k) {
  Fit f;
  f.n = n, f.d = d, f.k = k, f.x = std::move(x);
  f.x_file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", f.x), {n, d});
  const BlacsGrid grid(world, 1, world.size());
  KpcaSettings settings;
  settings.kernel = kernel;
  settings.components = k;
  settings.block_size = 4;
  PhaseTimer timer;
  const KpcaResult r = fit_kpca(*f.x_file, grid, settings, timer);
  f.coefficients = r.coefficients;
  broadcast(world, f.coefficients, std::size_t(n) * k);
  f.a_file = io::open_matrix_file(world, test::write_bin(world, dir, "a.bin", f.coefficients),
                                  {n, k});
  f.stats = {r.kernel, n, d, k, r.eigenvalues, r.col_means, r.grand_mean};
  return f;
}

// The first c embedding coordinates of the m points `y` (kpca_transform).
std::vector<double> project(const Comm& world, const std::string& dir, const Fit& f,
                            const std::vector<double>& y, int m, int c) {
  auto y_file = io::open_matrix_file(world, test::write_bin(world, dir, "y.bin", y), {m, f.d});
  const BlacsGrid grid(world, 1, world.size());
  KpcaProjection p{f.stats.kernel, f.n, f.d, f.k, f.stats.col_means, f.stats.grand_mean};
  auto full = kpca_transform(p, f.x_file.get(), *f.a_file, *y_file, grid, 3);
  broadcast(world, full, std::size_t(m) * f.k);
  std::vector<double> z(std::size_t(m) * c);
  for (int q = 0; q < m; ++q)
    for (int j = 0; j < c; ++j) z[q * c + j] = full[q * f.k + j];
  return z;
}

// gamma = 1/n + (I - 11^T/n) A_c z, from the definition.
std::vector<double> serial_gamma(const Fit& f, const double* z, int c) {
  std::vector<double> az(f.n, 0.0);
  double mean = 0;
  for (int i = 0; i < f.n; ++i) {
    for (int j = 0; j < c; ++j) az[i] += f.coefficients[i * f.k + j] * z[j];
    mean += az[i] / f.n;
  }
  for (double& g : az) g = 1.0 / f.n + g - mean;
  return az;
}

// ||phi(y) - sum_i gamma_i phi(x_i)||^2 with the full kernel matrix K.
double serial_distance(const Fit& f, const test::Dense& kmat, const std::vector<double>& g,
                       const double* y) {
  double cross = 0, quad = 0;
  for (int i = 0; i < f.n; ++i) {
    cross += g[i] * f.stats.kernel(&f.x[i * f.d], y, f.d);
    for (int l = 0; l < f.n; ++l) quad += g[i] * kmat(i, l) * g[l];
  }
  return f.stats.kernel(y, y, f.d) - 2 * cross + quad;
}

// One step of the Gaussian fixed-point map F(y).
std::vector<double> serial_step(const Fit& f, const std::vector<double>& g, const double* y) {
  std::vector<double> num(f.d, 0.0);
  double den = 0;
  for (int i = 0; i < f.n; ++i) {
    const double w = g[i] * f.stats.kernel(&f.x[i * f.d], y, f.d);
    den += w;
    for (int t = 0; t < f.d; ++t) num[t] += w * f.x[i * f.d + t];
  }
  for (double& v : num) v /= den;
  return num;
}

double distance2(const double* a, const double* b, int d) {
  double s = 0;
  for (int t = 0; t < d; ++t) s += (a[t] - b[t]) * (a[t] - b[t]);
  return s;
}

// The fixed-point iteration from `start` until a step moves at most
// tol * max(1, ||y||), kembed's documented stopping rule.
std::vector<double> serial_fixed_point(const Fit& f, const std::vector<double>& g,
                                       const double* start, double tol, int max_iter) {
  std::vector<double> y(start, start + f.d), zero(f.d, 0.0);
  for (int it = 0; it < max_iter; ++it) {
    const auto next = serial_step(f, g, y.data());
    const double change = std::sqrt(distance2(next.data(), y.data(), f.d));
    y = next;
    if (change <= tol * std::max(1.0, std::sqrt(distance2(y.data(), zero.data(), f.d)))) break;
  }
  return y;
}

std::string where(int p, int q, int nb) {
  return "grid " + std::to_string(p) + "x" + std::to_string(q) + " nb " + std::to_string(nb);
}

}  // namespace

TEST(Preimage, LinearKernelGivesThePcaReconstruction) {
  const Comm world = Comm::world();
  const int n = 30, d = 5, k = 3, m = 6;
  auto x = test::random_data(n, d, 4);
  for (int i = 0; i < n; ++i) x[i * d + 2] = 4 * x[i * d + 2] + 3;  // offset, unequal variances
  const std::string dir = test::scratch_dir(world, "preimage_linear");
  Kernel linear;
  linear.type = KernelType::linear;
  const Fit f = fit(world, dir, x, n, d, linear, k);
  const auto y = test::random_data(m, d, 5);

  // PCA by LAPACK: mean, unit axes u_j and variances lambda_j of Xc^T Xc.
  std::vector<double> mean(d, 0.0);
  for (int i = 0; i < n; ++i)
    for (int t = 0; t < d; ++t) mean[t] += x[i * d + t] / n;
  test::Dense scatter{d, std::vector<double>(d * d, 0.0)}, axes;
  for (int i = 0; i < n; ++i)
    for (int a = 0; a < d; ++a)
      for (int b = 0; b < d; ++b) scatter(a, b) += (x[i * d + a] - mean[a]) * (x[i * d + b] - mean[b]);
  const auto lambda = test::serial_eigh(scatter, axes);  // ascending
  // mean + sum_{j<c} shrink_j u_j u_j^T (y - mean), shrink = lambda/(lambda+alpha).
  auto reconstruct = [&](const double* yq, int c, double alpha) {
    std::vector<double> r = mean;
    for (int j = 0; j < c; ++j) {
      const int col = d - 1 - j;
      double proj = 0;
      for (int t = 0; t < d; ++t) proj += axes(t, col) * (yq[t] - mean[t]);
      const double shrink = lambda[col] / (lambda[col] + alpha);
      for (int t = 0; t < d; ++t) r[t] += shrink * proj * axes(t, col);
    }
    return r;
  };
  const double scale = 10;  // size of the data's coordinates

  for (int c : {2, 3}) {
    const auto z = project(world, dir, f, y, m, c);
    for (auto [p, q] : grid_shapes(world.size()))
      for (int nb : {2, 5}) {
        const BlacsGrid grid(world, p, q);
        FeatureReconstruction r(f.stats, *f.x_file, *f.a_file, z, c, grid, nb);
        const Preimages fixed = fixed_point_preimages(r, {});
        const Preimages nearest = nearest_preimages(r);
        for (int s = 0; s < m; ++s) {
          const auto expected = reconstruct(&y[s * d], c, 0);
          for (int t = 0; t < d; ++t)
            EXPECT_NEAR(fixed.points[s * d + t], expected[t], 1e-10 * scale) << where(p, q, nb);
          // phi is the identity: the reconstruction is its own pre-image.
          EXPECT_LT(fixed.distance[s], 1e-14 * scale * scale) << where(p, q, nb);
          // Nearest: the training sample closest to the reconstruction.
          int best = 0;
          for (int i = 1; i < n; ++i)
            if (distance2(&x[i * d], expected.data(), d) < distance2(&x[best * d], expected.data(), d))
              best = i;
          EXPECT_EQ(nearest.nearest[s], best) << where(p, q, nb);
          for (int t = 0; t < d; ++t) EXPECT_EQ(nearest.points[s * d + t], x[best * d + t]);
          EXPECT_NEAR(nearest.distance[s], distance2(&x[best * d], expected.data(), d),
                      1e-10 * scale * scale) << where(p, q, nb);
        }
        if (c != k) continue;
        // Ridge: the shrunk reconstruction, for two regularizations.
        for (double alpha : {1e-3, 5.0}) {
          std::vector<double> embedding(std::size_t(n) * k);
          for (int i = 0; i < n * k; ++i) embedding[i] = f.coefficients[i] * f.stats.eigenvalues[i % k];
          InverseMap map = fit_inverse_map(f.stats.kernel, embedding, k, *f.x_file, alpha, grid, nb);
          std::vector<double> w = map.weights.gather_to_root(), w_rows(std::size_t(n) * d);
          if (world.is_root())
            for (int i = 0; i < n; ++i)
              for (int t = 0; t < d; ++t) w_rows[i * d + t] = w[t * n + i];
          auto w_file = io::open_matrix_file(world, test::write_bin(world, dir, "w.bin", w_rows), {n, d});
          const auto points = apply_inverse_map(f.stats.kernel, z, k, *f.a_file, f.stats.eigenvalues,
                                                *w_file, map.mean, grid, nb);
          for (int s = 0; s < m; ++s) {
            const auto expected = reconstruct(&y[s * d], k, alpha);
            for (int t = 0; t < d; ++t)
              EXPECT_NEAR(points[s * d + t], expected[t], 1e-9 * scale)
                  << where(p, q, nb) << " alpha " << alpha;
          }
        }
      }
  }
}

TEST(Preimage, RbfNearestAndFixedPointAgainstTheExplicitFormula) {
  const Comm world = Comm::world();
  const int n = 40, d = 3, k = 5, c = 3, m = 7;
  const auto x = test::random_data(n, d, 11);
  const std::string dir = test::scratch_dir(world, "preimage_rbf");
  Kernel rbf;
  rbf.type = KernelType::rbf;
  rbf.gamma = 0.3;
  const Fit f = fit(world, dir, x, n, d, rbf, k);
  const test::Dense kmat = test::serial_kernel(f.stats.kernel, x, n, d);
  // Coefficients near (not at) training embeddings: z = E_row + noise.
  std::vector<double> z(std::size_t(m) * c);
  std::mt19937_64 gen(3);
  std::normal_distribution<double> noise(0, 0.05);
  for (int s = 0; s < m; ++s)
    for (int j = 0; j < c; ++j)
      z[s * c + j] = f.coefficients[(5 * s) * k + j] * f.stats.eigenvalues[j] + noise(gen);

  // Serial oracle: distances of every training sample by the explicit formula.
  std::vector<int> best(m, 0);
  std::vector<std::vector<double>> fixed_point(m);
  for (int s = 0; s < m; ++s) {
    const auto g = serial_gamma(f, &z[s * c], c);
    std::vector<double> dist(n);
    for (int i = 0; i < n; ++i) dist[i] = serial_distance(f, kmat, g, &x[i * d]);
    best[s] = static_cast<int>(std::min_element(dist.begin(), dist.end()) - dist.begin());
    fixed_point[s] = serial_fixed_point(f, g, &x[best[s] * d], 1e-13, 5000);
  }

  FixedPointSettings settings;
  settings.tol = 1e-12;
  settings.max_iter = 5000;
  for (auto [p, q] : grid_shapes(world.size()))
    for (int nb : {3, 8}) {
      const BlacsGrid grid(world, p, q);
      FeatureReconstruction r(f.stats, *f.x_file, *f.a_file, z, c, grid, nb);
      const Preimages nearest = nearest_preimages(r);
      const Preimages fixed = fixed_point_preimages(r, settings);
      for (int s = 0; s < m; ++s) {
        const auto g = serial_gamma(f, &z[s * c], c);
        EXPECT_EQ(nearest.nearest[s], best[s]) << where(p, q, nb);
        EXPECT_NEAR(nearest.distance[s], serial_distance(f, kmat, g, &x[best[s] * d]), 1e-12)
            << where(p, q, nb);
        EXPECT_TRUE(fixed.converged[s]) << where(p, q, nb);
        EXPECT_EQ(fixed.restarts[s], 0);
        const double* xs = &fixed.points[s * d];
        // A fixed point of the update, the one the serial iteration finds ...
        const auto step = serial_step(f, g, xs);
        EXPECT_LT(std::sqrt(distance2(step.data(), xs, d)), 1e-10) << where(p, q, nb);
        for (int t = 0; t < d; ++t) EXPECT_NEAR(xs[t], fixed_point[s][t], 1e-9) << where(p, q, nb);
        // ... closer in feature space than where it started, as reported.
        const double final_distance = serial_distance(f, kmat, g, xs);
        EXPECT_NEAR(fixed.distance[s], final_distance, 1e-12) << where(p, q, nb);
        EXPECT_NEAR(fixed.start_distance[s], nearest.distance[s], 1e-12) << where(p, q, nb);
        EXPECT_LT(final_distance, nearest.distance[s]) << where(p, q, nb);
      }
    }
}

TEST(Preimage, VanishingDenominatorRestartsFromTheNearestSample) {
  const Comm world = Comm::world();
  const int n = 20, d = 2, k = 3, m = 2;
  const auto x = test::random_data(n, d, 17);
  const std::string dir = test::scratch_dir(world, "preimage_restart");
  Kernel rbf;
  rbf.type = KernelType::rbf;
  rbf.gamma = 1;
  const Fit f = fit(world, dir, x, n, d, rbf, k);
  const auto z = project(world, dir, f, x, n, k);  // the training points themselves
  std::vector<double> z2(z.begin(), z.begin() + m * k);
  const BlacsGrid grid(world, 1, world.size());
  FeatureReconstruction r(f.stats, *f.x_file, *f.a_file, z2, k, grid, 2);
  FixedPointSettings settings;
  // Start 1000 away from every sample: every kernel value underflows to 0.
  settings.init = {1000, 1000, -1000, 1000};
  const Preimages fixed = fixed_point_preimages(r, settings);
  const Preimages nearest = nearest_preimages(r);
  for (int s = 0; s < m; ++s) {
    EXPECT_EQ(fixed.restarts[s], 1);
    EXPECT_TRUE(fixed.converged[s]);
    EXPECT_GT(fixed.start_distance[s], 0.5);  // k(y, y) + ||phi_hat||^2 with no overlap
    EXPECT_LE(fixed.distance[s], nearest.distance[s] + 1e-12);
  }
  // With no restart left the point is reported unconverged at its nearest sample.
  settings.max_restarts = 0;
  const Preimages given_up = fixed_point_preimages(r, settings);
  for (int s = 0; s < m; ++s) {
    EXPECT_FALSE(given_up.converged[s]);
    for (int t = 0; t < d; ++t) EXPECT_EQ(given_up.points[s * d + t], nearest.points[s * d + t]);
  }
}

TEST(Preimage, FixedPointDenoisesNoisyCircles) {
  const Comm world = Comm::world();
  const int n = 200, d = 2, k = 8, c = 4, m = 50;
  const double sigma = 0.15;
  std::mt19937_64 gen(1);
  std::uniform_real_distribution<double> angle(0, 2 * M_PI);
  std::normal_distribution<double> noise(0, sigma);
  std::vector<double> train, clean, noisy;
  for (int i = 0; i < n; ++i) {
    const double a = angle(gen);
    train.push_back(std::cos(a) + noise(gen));
    train.push_back(std::sin(a) + noise(gen));
  }
  for (int s = 0; s < m; ++s) {
    const double a = angle(gen);
    clean.push_back(std::cos(a));
    clean.push_back(std::sin(a));
    noisy.push_back(clean[2 * s] + noise(gen));
    noisy.push_back(clean[2 * s + 1] + noise(gen));
  }
  const std::string dir = test::scratch_dir(world, "preimage_denoise");
  Kernel rbf;
  rbf.type = KernelType::rbf;
  rbf.gamma = 2;
  const Fit f = fit(world, dir, train, n, d, rbf, k);
  const auto z = project(world, dir, f, noisy, m, c);

  // Serial fixed-point iteration from the nearest sample (explicit formula).
  const test::Dense kmat = test::serial_kernel(f.stats.kernel, train, n, d);
  std::vector<double> expected(std::size_t(m) * d);
  for (int s = 0; s < m; ++s) {
    const auto g = serial_gamma(f, &z[s * c], c);
    int best = 0;
    double best_distance = INFINITY;
    for (int i = 0; i < n; ++i) {
      const double dist = serial_distance(f, kmat, g, &train[i * d]);
      if (dist < best_distance) best = i, best_distance = dist;
    }
    const auto y = serial_fixed_point(f, g, &train[best * d], 1e-8, 500);
    std::copy(y.begin(), y.end(), &expected[s * d]);
  }

  for (auto [p, q] : grid_shapes(world.size())) {
    const BlacsGrid grid(world, p, q);
    FeatureReconstruction r(f.stats, *f.x_file, *f.a_file, z, c, grid, 16);
    const Preimages den = fixed_point_preimages(r, {});
    double mse_noisy = 0, mse_denoised = 0, worst = 0;
    for (int s = 0; s < m; ++s) {
      mse_noisy += distance2(&noisy[s * d], &clean[s * d], d) / m;
      mse_denoised += distance2(&den.points[s * d], &clean[s * d], d) / m;
      worst = std::max(worst, std::sqrt(distance2(&den.points[s * d], &expected[s * d], d)));
      EXPECT_TRUE(den.converged[s]);
    }
    if (world.is_root() && p == 1)
      std::printf("denoising circles (sigma %.2f, %d of %d components): mse noisy %.4f, "
                  "denoised %.4f, ratio %.3f\n",
                  sigma, c, k, mse_noisy, mse_denoised, mse_denoised / mse_noisy);
    EXPECT_LT(mse_denoised / mse_noisy, 0.8) << where(p, q, 16);
    // The same points as the serial iteration, whatever the grid.
    EXPECT_LT(worst, 1e-6) << where(p, q, 16);
  }
}
