// Numerical edge cases of kernel PCA: kernels that are the identity, all
// ones, rank deficient through duplicate points or a linear kernel with
// d < k, and massively repeated eigenvalues. Each gives the right answer or
// a clear agreed error, never a NaN from the square root of a round-off
// eigenvalue; for evd and krylov on every grid.
#include <gtest/gtest.h>

#include <cmath>

#include "kembed/core/error.hpp"
#include "kembed/spectral/kpca.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using namespace kembed;
using namespace kembed::spectral;
using namespace kembed::kernel;
using kembed::test::grid_shapes;

namespace {

KpcaResult fit(io::MatrixFile& file, const BlacsGrid& grid, KernelType type, double gamma, int k,
               Solver solver) {
  KpcaSettings settings;
  settings.kernel.type = type;
  settings.kernel.gamma = gamma;
  settings.components = k;
  settings.solver = solver;
  settings.block_size = 4;
  settings.krylov.tol = 1e-12;
  PhaseTimer timer;
  return fit_kpca(file, grid, settings, timer);
}

// The agreed error message of a fit, or "" if it succeeded.
std::string fit_error(io::MatrixFile& file, const BlacsGrid& grid, KernelType type, double gamma,
                      int k, Solver solver) {
  try {
    fit(file, grid, type, gamma, k, solver);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool all_finite(const std::vector<double>& v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

const Solver kSolvers[] = {Solver::evd, Solver::krylov};

}  // namespace

TEST(EdgeCases, HugeGammaMakesTheKernelTheIdentity) {
  // K = I: the centered kernel I - 11^T/n has eigenvalue 1 with multiplicity
  // n - 1. Any orthonormal basis of 1-perp is right: check the subspace
  // (Z^T Z = I, Z^T 1 = 0) and that evd reports the zero gap.
  const Comm world = Comm::world();
  const int n = 24, d = 3, k = 4;
  const std::string dir = test::scratch_dir(world, "edge_identity");
  auto file = io::open_matrix_file(
      world, test::write_bin(world, dir, "x.bin", test::random_data(n, d, 2)), {n, d});
  for (Solver solver : kSolvers)
    for (auto [p, q] : grid_shapes(world.size())) {
      const BlacsGrid grid(world, p, q);
      const KpcaResult r = fit(*file, grid, KernelType::rbf, 1e6, k, solver);
      for (int j = 0; j < k; ++j) {
        EXPECT_NEAR(r.eigenvalues[j], 1.0, 1e-12) << solver_name(solver);
        EXPECT_LT(r.residuals[j], 1e-12) << solver_name(solver);
      }
      if (solver == Solver::evd) {
        EXPECT_LT(r.smallest_gap, 1e-12);
      }
      if (!world.is_root()) continue;
      for (int a = 0; a < k; ++a) {
        double sum = 0;
        for (int i = 0; i < n; ++i) sum += r.embedding[i * k + a];
        EXPECT_NEAR(sum, 0.0, 1e-12) << solver_name(solver);
        for (int b = 0; b < k; ++b) {
          double dot = 0;
          for (int i = 0; i < n; ++i) dot += r.embedding[i * k + a] * r.embedding[i * k + b];
          EXPECT_NEAR(dot, a == b ? 1.0 : 0.0, 1e-12) << solver_name(solver);
        }
      }
    }
}

TEST(EdgeCases, TinyGammaMakesTheKernelAllOnesAndFitsFailClearly) {
  // exp(-1e-20 ||x - y||^2) == 1 in double: the centered kernel is 0 and no
  // component has a positive eigenvalue.
  const Comm world = Comm::world();
  const int n = 20, d = 2;
  const std::string dir = test::scratch_dir(world, "edge_ones");
  auto file = io::open_matrix_file(
      world, test::write_bin(world, dir, "x.bin", test::random_data(n, d, 3)), {n, d});
  const BlacsGrid grid(world, 1, world.size());
  for (Solver solver : kSolvers) {
    const std::string error = fit_error(*file, grid, KernelType::rbf, 1e-20, 2, solver);
    EXPECT_NE(error.find("more components than the 0 positive eigenvalues"), std::string::npos)
        << solver_name(solver) << ": " << error;
    // With none positive, fewer components cannot help: the message must not
    // advise "--components 1 or fewer", but say why none exists.
    EXPECT_EQ(error.find("or fewer"), std::string::npos) << solver_name(solver) << ": " << error;
    EXPECT_NE(error.find("no component exists"), std::string::npos)
        << solver_name(solver) << ": " << error;
  }
}

TEST(EdgeCases, DuplicatedPointsDoubleTheEigenvaluesAndLimitTheRank) {
  // Every point twice: K2 = [K K; K K], whose centered eigenvalues are twice
  // those of the centered K of the distinct points (same centering mean),
  // and whose rank is that of K. Asking for more than n - 1 fails clearly.
  const Comm world = Comm::world();
  const int n = 15, d = 3, k = 3;
  const auto x = test::random_data(n, d, 4);
  std::vector<double> twice = x;
  twice.insert(twice.end(), x.begin(), x.end());
  const std::string dir = test::scratch_dir(world, "edge_duplicates");
  auto twice_file =
      io::open_matrix_file(world, test::write_bin(world, dir, "x2.bin", twice), {2 * n, d});
  Kernel kernel;
  kernel.type = KernelType::rbf;
  kernel.gamma = 0.5;
  test::Dense vectors;
  const auto w = test::serial_eigh(test::serial_center(test::serial_kernel(kernel, x, n, d)),
                                   vectors);
  for (Solver solver : kSolvers)
    for (auto [p, q] : grid_shapes(world.size())) {
      const BlacsGrid grid(world, p, q);
      const KpcaResult r = fit(*twice_file, grid, KernelType::rbf, 0.5, k, solver);
      for (int j = 0; j < k; ++j)
        EXPECT_NEAR(r.eigenvalues[j], 2 * w[n - 1 - j], 1e-10 * w[n - 1]) << solver_name(solver);
      // Duplicates embed at the same point.
      if (world.is_root()) {
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < k; ++j)
            EXPECT_NEAR(r.embedding[i * k + j], r.embedding[(i + n) * k + j], 1e-9);
      }
      const std::string error = fit_error(*twice_file, grid, KernelType::rbf, 0.5, n, solver);
      EXPECT_NE(error.find("positive eigenvalues"), std::string::npos)
          << solver_name(solver) << ": " << error;
    }
}

TEST(EdgeCases, LinearKernelWithFewerFeaturesThanComponents) {
  // d = 2: the centered linear kernel has rank 2; the third eigenvalue is
  // round-off and must not become sqrt(negative).
  const Comm world = Comm::world();
  const int n = 30, d = 2;
  const std::string dir = test::scratch_dir(world, "edge_linear");
  auto file = io::open_matrix_file(
      world, test::write_bin(world, dir, "x.bin", test::random_data(n, d, 6)), {n, d});
  for (Solver solver : kSolvers)
    for (auto [p, q] : grid_shapes(world.size())) {
      const BlacsGrid grid(world, p, q);
      const std::string error = fit_error(*file, grid, KernelType::linear, 0, 3, solver);
      EXPECT_NE(error.find("more components than the 2 positive eigenvalues"), std::string::npos)
          << solver_name(solver) << ": " << error;
      const KpcaResult r = fit(*file, grid, KernelType::linear, 0, 2, solver);
      EXPECT_TRUE(all_finite(r.eigenvalues) && all_finite(r.residuals));
      if (world.is_root()) {
        EXPECT_TRUE(all_finite(r.embedding));
      }
    }
}
