// Kernel PCA end to end (fit_kpca) against a serial LAPACK reference on the
// same kernel, and against identities: linear-kernel KPCA = PCA, orthogonal
// components, small residuals, the same numbers on every grid and blocking.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kembed/core/error.hpp"
#include "kembed/linalg/elpa.hpp"
#include "kembed/spectral/kpca.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using kembed::test::grid_shapes;

using namespace kembed;
using namespace kembed::spectral;
using namespace kembed::kernel;

namespace {

using test::serial_kpca;

struct KpcaCase {
  KernelType type;
  Solver solver;
};

class KpcaVsSerial : public ::testing::TestWithParam<KpcaCase> {};

}  // namespace

TEST_P(KpcaVsSerial, EigenvaluesEmbeddingsResidualsOnEveryGridAndBlocking) {
  if (GetParam().solver == Solver::elpa && !elpa::available())
    GTEST_SKIP() << "built without ELPA (tested in test_eigensolvers)";
  const Comm world = Comm::world();
  const int n = 41, d = 4, k = 4;
  const auto x = test::random_data(n, d, 21);
  const std::string dir = test::scratch_dir(world, "kpca");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  KpcaSettings settings;
  settings.kernel.type = GetParam().type;
  settings.kernel.gamma = 0.4;
  settings.kernel.coef0 = 1;
  settings.components = k;
  settings.solver = GetParam().solver;
  // Krylov stops at its tolerance (relative to ||K~||_2 >= the reported
  // residuals' ||K~||_F scale); 1e-12 keeps the embeddings within 1e-8.
  settings.krylov.tol = 1e-12;
  const double residual_limit = 1e-12;
  const auto ref = serial_kpca(test::serial_kernel(settings.kernel, x, n, d), k);
  // ||K~||_F of the serially centered kernel: centering now takes the norm
  // as it writes K~, and the relative residuals are scaled by it.
  double squares = 0;
  for (double v : test::serial_center(test::serial_kernel(settings.kernel, x, n, d)).a)
    squares += v * v;
  const double frobenius = std::sqrt(squares);
  for (auto [p, q] : grid_shapes(world.size()))
    for (int nb : {3, 16, 64}) {
      BlacsGrid grid(world, p, q);
      settings.block_size = nb;
      PhaseTimer timer;
      const KpcaResult r = fit_kpca(*file, grid, settings, timer);
      const std::string where = "grid " + std::to_string(p) + "x" + std::to_string(q) +
                                " nb " + std::to_string(nb);
      // No ASSERT here: a rank leaving early would hang the others' collectives.
      EXPECT_EQ(r.eigenvalues.size(), std::size_t(k));
      EXPECT_NEAR(r.frobenius_norm, frobenius, 1e-12 * frobenius) << where;
      EXPECT_NEAR(r.trace, ref.trace, 1e-12 * std::abs(ref.trace)) << where;
      for (int j = 0; j < k; ++j) {
        EXPECT_NEAR(r.eigenvalues[j], ref.values[j], 1e-10 * ref.values[0]) << where;
        EXPECT_LT(r.residuals[j], residual_limit) << where;
        EXPECT_NEAR(r.explained_ratio[j], r.eigenvalues[j] / r.trace, 1e-15) << where;
      }
      if (world.is_root()) {
        EXPECT_EQ(r.embedding.size(), ref.embedding.size());
        double worst = 0;
        for (std::size_t i = 0; i < std::min(ref.embedding.size(), r.embedding.size()); ++i)
          worst = std::max(worst, std::abs(r.embedding[i] - ref.embedding[i]));
        EXPECT_LT(worst, 1e-8) << where;
        // Orthogonal components with squared norms lambda: Z^T Z = Lambda (V^T V = I).
        for (int a = 0; a < k; ++a)
          for (int b = 0; b < k; ++b) {
            double dot = 0;
            for (int i = 0; i < n; ++i) dot += r.embedding[i * k + a] * r.embedding[i * k + b];
            EXPECT_NEAR(dot, a == b ? r.eigenvalues[a] : 0.0, 1e-10 * r.eigenvalues[0]);
          }
      } else {
        EXPECT_TRUE(r.embedding.empty());
      }
    }
}

INSTANTIATE_TEST_SUITE_P(
    KernelsAndSolvers, KpcaVsSerial,
    ::testing::Values(KpcaCase{KernelType::rbf, Solver::evd}, KpcaCase{KernelType::rbf, Solver::evr},
                      KpcaCase{KernelType::poly, Solver::evd}, KpcaCase{KernelType::laplacian, Solver::evr},
                      KpcaCase{KernelType::sigmoid, Solver::evd}, KpcaCase{KernelType::cosine, Solver::evd},
                      KpcaCase{KernelType::rbf, Solver::krylov}, KpcaCase{KernelType::poly, Solver::krylov},
                      KpcaCase{KernelType::sigmoid, Solver::krylov}, KpcaCase{KernelType::rbf, Solver::elpa},
                      KpcaCase{KernelType::laplacian, Solver::elpa}),
    [](const auto& info) {
      return Kernel::name(info.param.type) + "_" + solver_name(info.param.solver);
    });

TEST(Kpca, LinearKernelEqualsPcaOfCenteredData) {
  const Comm world = Comm::world();
  const int n = 50, d = 3;
  auto x = test::random_data(n, d, 8);
  for (int i = 0; i < n; ++i) x[i * d + 1] = 3 * x[i * d + 1] + 5;  // unequal variances, offset
  const std::string dir = test::scratch_dir(world, "linear");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});

  // PCA by hand: centered X, its d x d scatter matrix Xc^T Xc, scores Xc U.
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
  std::vector<double> scores(std::size_t(n) * d);  // column-major n x d, descending order
  for (int j = 0; j < d; ++j)
    for (int i = 0; i < n; ++i)
      for (int t = 0; t < d; ++t) scores[j * n + i] += xc[i * d + t] * axes(t, d - 1 - j);
  test::serial_fix_signs(scores, n, d);

  BlacsGrid grid(world);
  KpcaSettings settings;
  settings.kernel.type = KernelType::linear;
  settings.components = d;
  settings.block_size = 8;
  PhaseTimer timer;
  const auto r = fit_kpca(*file, grid, settings, timer);
  double ratio_sum = 0;
  for (int j = 0; j < d; ++j) {
    EXPECT_NEAR(r.eigenvalues[j], w[d - 1 - j], 1e-10 * w[d - 1]);
    ratio_sum += r.explained_ratio[j];
  }
  EXPECT_NEAR(ratio_sum, 1.0, 1e-12);  // rank d: the top d eigenvalues are the whole trace
  if (world.is_root()) {
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < d; ++j) EXPECT_NEAR(r.embedding[i * d + j], scores[j * n + i], 1e-8);
  }
}

TEST(Kpca, MoreComponentsThanPositiveEigenvaluesIsAnAgreedError) {
  const Comm world = Comm::world();
  const int n = 20, d = 2;
  const std::string dir = test::scratch_dir(world, "rankdef");
  auto file = io::open_matrix_file(
      world, test::write_bin(world, dir, "x.bin", test::random_data(n, d, 4)), {n, d});
  BlacsGrid grid(world);
  KpcaSettings settings;
  settings.kernel.type = KernelType::linear;  // centered Gram matrix of rank d = 2
  settings.components = 3;
  settings.block_size = 4;
  std::string message;
  try {
    PhaseTimer timer;
    fit_kpca(*file, grid, settings, timer);
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("2 positive eigenvalues"), std::string::npos) << message;
  EXPECT_TRUE(test::all_ranks(world, !message.empty()));
}

TEST(Kpca, AsymmetricPrecomputedKernelNamesTheEntry) {
  const Comm world = Comm::world();
  const int n = 9;
  std::vector<double> kernel(n * n, 0.0);
  for (int i = 0; i < n; ++i) kernel[i * n + i] = 1;
  kernel[6 * n + 2] = 0.5;  // row 7, column 3 (1-based); its mirror stays 0
  const std::string dir = test::scratch_dir(world, "asym");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "k.bin", kernel), {n, n});
  BlacsGrid grid(world);
  KpcaSettings settings;
  settings.kernel.type = KernelType::precomputed;
  settings.block_size = 2;
  std::string message;
  try {
    PhaseTimer timer;
    fit_kpca(*file, grid, settings, timer);
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("entry (7, 3) is 0.5"), std::string::npos) << message;
  EXPECT_TRUE(test::all_ranks(world, !message.empty()));
}
