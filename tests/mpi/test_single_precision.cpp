// Single-precision kernel storage (--precision single) against double:
// the product within the classical float rounding bound of a serial product
// of the rounded operands, assembly that rounds each double entry once (in
// slabs, with the sums of the double entries), an agreed error for entries
// beyond float's range, kernel PCA within the perturbation bound of a serial
// LAPACK reference, and the memory plan's halved matrix.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <random>

#include "kembed/core/error.hpp"
#include "kembed/kernel/assemble.hpp"
#include "kembed/linalg/block_product.hpp"
#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/spectral/eigensolver.hpp"
#include "kembed/spectral/kpca.hpp"
#include "kembed/spectral/krylov.hpp"
#include "kembed/spectral/mds.hpp"
#include "kembed/spectral/memory_plan.hpp"
#include "kembed/spectral/residuals.hpp"
#include "kembed/spectral/spectral_step.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using namespace kembed;
using kembed::test::all_ranks;
using kembed::test::grid_shapes;

namespace {

// Unit round-off of float (round to nearest).
constexpr double kUnit = 0x1p-24;

std::vector<double> uniform(std::size_t count, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> v(count);
  for (double& x : v) x = dist(gen);
  return v;
}

double rounded(double v) { return static_cast<double>(static_cast<float>(v)); }

}  // namespace

TEST(SinglePrecision, ProductMeetsTheFloatRoundingBoundOnEveryGrid) {
  // sgemm sums n products of the rounded operands: |Y - fl(A) fl(X)| <=
  // gamma_{n+1} |fl(A)| |fl(X)| entrywise, gamma_m = m u / (1 - m u), the
  // extra 1 for the result's rounding to float.
  const Comm world = Comm::world();
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    BlacsGrid line(grid.comm(), grid.comm().size(), 1);
    for (int n : {37, 150})
      for (int nb : {8, 64}) {
        const auto full = uniform(std::size_t(n) * n, 3u + unsigned(n + nb));
        SingleMatrix a(grid, n, n, nb, nb);
        a.fill([&](std::int64_t i, std::int64_t j) {
          return static_cast<float>(full[std::size_t(j) * n + i]);
        });
        BlockProduct product(a);
        const int w = 24;
        const auto xfull = uniform(std::size_t(n) * w, 5u + unsigned(n));
        DistMatrix x(line, n, w, nb, w), y(line, n, w, nb, w);
        x.fill([&](std::int64_t i, std::int64_t j) { return xfull[std::size_t(j) * n + i]; });
        product.apply(x.data(), x.ld(), w, y.data(), y.ld());
        const double gamma = (n + 1) * kUnit / (1 - (n + 1) * kUnit);
        bool within = true;
        double beyond_double = 0;  // the storage really is float
        for (int j = 0; j < w; ++j)
          for (int li = 0; li < y.local_rows(); ++li) {
            const std::int64_t i = y.row_dist().to_global(li);
            double reference = 0, magnitude = 0, exact = 0;
            for (int t = 0; t < n; ++t) {
              const double at = rounded(full[std::size_t(t) * n + i]);
              const double xt = rounded(xfull[std::size_t(j) * n + t]);
              reference += at * xt;
              magnitude += std::abs(at * xt);
              exact += full[std::size_t(t) * n + i] * xfull[std::size_t(j) * n + t];
            }
            within &= std::abs(y.local(li, j) - reference) <= gamma * magnitude;
            beyond_double = std::max(beyond_double, std::abs(y.local(li, j) - exact));
          }
        EXPECT_TRUE(all_ranks(world, within)) << p << "x" << q << " n " << n << " nb " << nb;
        EXPECT_GT(world.max(beyond_double), 1e-9) << "the product did not use float storage";
      }
  }
}

TEST(SinglePrecision, AssemblyRoundsEachDoubleEntryOnceSlabBySlab) {
  const Comm world = Comm::world();
  const int n = 150, d = 3, nb = 8;
  const auto x = uniform(std::size_t(n) * d, 17u);
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    for (kernel::KernelType type :
         {kernel::KernelType::rbf, kernel::KernelType::linear, kernel::KernelType::poly}) {
      kernel::Kernel k;
      k.type = type;
      // rbf with a large gamma: entries below float's normal range occur.
      k.gamma = type == kernel::KernelType::rbf ? 30.0 : 0.5;
      DistMatrix reference(grid, n, n, nb, nb);
      const auto rows = test::panel(x, d, reference.row_dist()),
                 cols = test::panel(x, d, reference.col_dist());
      kernel::LocalSums reference_sums;
      kernel::assemble_kernel(k, rows, cols, d, reference, &reference_sums);
      // One slab (default), and one block column per process column per slab.
      for (std::int64_t slab : {std::int64_t{0}, std::int64_t{1}}) {
        SingleMatrix single(grid, n, n, nb, nb);
        kernel::LocalSums sums;
        kernel::assemble_kernel(k, rows, cols, d, single, sums, slab);
        bool once = true;
        for (int lj = 0; lj < single.local_cols(); ++lj)
          for (int li = 0; li < single.local_rows(); ++li) {
            const double v = reference.local(li, lj);
            const float expected = std::abs(v) < FLT_MIN ? 0.0f : static_cast<float>(v);
            once &= single.local(li, lj) == expected;
          }
        EXPECT_TRUE(all_ranks(world, once)) << k.name() << " slab " << slab;
        // Column sums are the same columns' sums; row sums add the slabs' in
        // another order, so within n ulps of the sum of magnitudes.
        bool sums_match =
            sums.cols == reference_sums.cols && sums.rows.size() == reference_sums.rows.size();
        for (std::size_t li = 0; sums_match && li < sums.rows.size(); ++li) {
          double magnitude = 0;
          for (int lj = 0; lj < reference.local_cols(); ++lj)
            magnitude += std::abs(reference.local(int(li), lj));
          sums_match &=
              std::abs(sums.rows[li] - reference_sums.rows[li]) <= n * DBL_EPSILON * magnitude;
        }
        EXPECT_TRUE(all_ranks(world, sums_match)) << k.name() << " slab " << slab;
      }
    }
  }
}

TEST(SinglePrecision, EntryBeyondFloatRangeIsAnAgreedErrorNamingIt) {
  // Only row 47 is huge: its linear-kernel entry (47, 47) = 1e40 exceeds
  // float's range, (47, j) = 1e20 x_j does not. Its column lies in a later
  // slab, so the message must carry the slab's column offset.
  const Comm world = Comm::world();
  const int n = 60, d = 2, nb = 4;
  auto x = uniform(std::size_t(n) * d, 23u);
  x[47 * d] = 1e20;
  x[47 * d + 1] = 0;
  BlacsGrid grid(world);
  SingleMatrix single(grid, n, n, nb, nb);
  kernel::Kernel k;
  k.type = kernel::KernelType::linear;
  kernel::LocalSums sums;
  std::string message;
  try {
    kernel::assemble_kernel(k, test::panel(x, d, single.row_dist()),
                            test::panel(x, d, single.col_dist()), d, single, sums, 1);
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("kernel entry (48, 48) is 1e+40, beyond single precision's range"),
            std::string::npos)
      << message;
  EXPECT_TRUE(all_ranks(world, !message.empty()));
}

TEST(SinglePrecision, KpcaWithinThePerturbationBoundOfTheSerialReference) {
  // Weyl: rounding each centered entry once moves every eigenvalue by at most
  // u ||K~||_F; sgemm's sums add at most gamma_n ||K~||_F to a residual, and
  // krylov stops at tol ||K~||. So |lambda - lambda_ref| <= delta with
  // delta = (tol + u + gamma_n) ||K~||_F, and each embedding column is within
  // sqrt(lambda) 2 delta / gap + delta / sqrt(lambda) (Davis-Kahan).
  const Comm world = Comm::world();
  const int n = 300, d = 5, k = 4;
  const auto x = test::random_data(n, d, 31);
  const std::string dir = test::scratch_dir(world, "single");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  spectral::KpcaSettings settings;
  settings.kernel.type = kernel::KernelType::rbf;
  settings.kernel.gamma = 0.3;
  settings.components = k;
  settings.solver = spectral::Solver::krylov;
  settings.krylov.tol = spectral::kSingleDefaultTol;
  settings.single_precision = true;
  const auto ref = test::serial_kpca(test::serial_kernel(settings.kernel, x, n, d), k + 1);
  for (auto [p, q] : grid_shapes(world.size()))
    for (int nb : {16, 64}) {
      BlacsGrid grid(world, p, q);
      settings.block_size = nb;
      PhaseTimer timer;
      const spectral::KpcaResult r = spectral::fit_kpca(*file, grid, settings, timer);
      const std::string where =
          std::to_string(p) + "x" + std::to_string(q) + " nb " + std::to_string(nb);
      const double delta =
          (settings.krylov.tol + kUnit + n * kUnit / (1 - n * kUnit)) * r.frobenius_norm;
      for (int j = 0; j < k; ++j) {
        EXPECT_NEAR(r.eigenvalues[j], ref.values[j], delta) << where;
        EXPECT_LE(r.residuals[j], settings.krylov.tol) << where;
      }
      if (!world.is_root()) continue;
      for (int j = 0; j < k; ++j) {
        const double above = j > 0 ? ref.values[j - 1] - ref.values[j] : INFINITY;
        const double gap = std::min(above, ref.values[j] - ref.values[j + 1]);
        const double lambda = ref.values[j];
        const double bound = std::sqrt(lambda) * 2 * delta / gap + delta / std::sqrt(lambda);
        double distance = 0;
        for (int i = 0; i < n; ++i) {
          const double e =
              r.embedding[std::size_t(i) * k + j] - ref.embedding[std::size_t(i) * (k + 1) + j];
          distance += e * e;
        }
        EXPECT_LE(std::sqrt(distance), bound) << where << " column " << j;
      }
    }
}

TEST(SinglePrecision, MdsWithinThePerturbationBoundOfDouble) {
  // As for kernel PCA, against the double fit on the same grid: B rounded
  // entry by entry, eigenvalues within (tol + u + gamma_n) ||B||_F (the
  // double fit's own error, 1e-12 relative, is far below).
  const Comm world = Comm::world();
  const int n = 240, d = 3, k = 3;
  const auto x = test::random_data(n, d, 37);
  const std::string dir = test::scratch_dir(world, "single_mds");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  spectral::MdsSettings settings;
  settings.metric = kernel::Metric::euclidean;
  settings.components = k;
  settings.solver = spectral::Solver::krylov;
  settings.block_size = 16;
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    PhaseTimer timer;
    settings.single_precision = false;
    settings.krylov.tol = 1e-12;
    const spectral::MdsResult twice = spectral::fit_mds(*file, grid, settings, timer);
    settings.single_precision = true;
    settings.krylov.tol = spectral::kSingleDefaultTol;
    const spectral::MdsResult once = spectral::fit_mds(*file, grid, settings, timer);
    const double delta =
        (settings.krylov.tol + kUnit + n * kUnit / (1 - n * kUnit)) * once.frobenius_norm;
    for (int j = 0; j < k; ++j)
      EXPECT_NEAR(once.eigenvalues[j], twice.eigenvalues[j], delta) << p << "x" << q;
    // The same centering means, from the double entries.
    EXPECT_NEAR(once.sq_grand_mean, twice.sq_grand_mean, 1e-12 * twice.sq_grand_mean);
  }
  // A point 1e25 away: -1/2 d^2 = -5e49 is beyond float's range (the
  // distance itself is fine for double MDS).
  auto far = x;
  far[5 * d] = 1e25;
  auto far_file = io::open_matrix_file(world, test::write_bin(world, dir, "far.bin", far), {n, d});
  BlacsGrid grid(world);
  PhaseTimer timer;
  std::string message;
  try {
    spectral::fit_mds(*far_file, grid, settings, timer);
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("entry of -1/2 D^(2) (1, 6) is"), std::string::npos) << message;
  EXPECT_NE(message.find("beyond single precision's range"), std::string::npos) << message;
}

TEST(SinglePrecision, DenseSolversRefuseAndThePlanHalvesTheMatrix) {
  const Comm world = Comm::world();
  BlacsGrid grid(world);
  SingleMatrix a(grid, 40, 40, 8, 8);
  a.fill([](std::int64_t i, std::int64_t j) { return i == j ? float(i + 1) : 0.0f; });
  spectral::SpectralRequest request;
  request.k = 2;
  request.solver = spectral::Solver::evd;
  PhaseTimer timer;
  EXPECT_THROW(spectral::spectral_step(a, request, timer), Error);

  // At n = 56000 on 1 x 2, float storage holds the busiest rank to 55% of
  // double's (both krylov); at small n the plan still says krylov.
  spectral::ProblemShape shape{56000, 64, 10, 1, 2, 64, spectral::Solver::krylov};
  const double twice = spectral::plan_memory(shape).total();
  shape.single_precision = true;
  const double once = spectral::plan_memory(shape).total();
  EXPECT_LE(once, 0.55 * twice);
  EXPECT_GE(once, 0.5 * twice);
  spectral::ProblemShape small{100, 3, 2, 1, 1, 64, spectral::Solver::automatic};
  small.single_precision = true;
  bool krylov_planned = false;
  for (const auto& item : spectral::plan_memory(small).items)
    krylov_planned |= item.first == "krylov basis and Ritz vectors";
  EXPECT_TRUE(krylov_planned);

  // A double run that does not fit is told when single precision would.
  spectral::ProblemShape big{56000, 64, 10, 1, 2, 64, spectral::Solver::automatic};
  big.single_precision_available = true;
  const std::string advice = spectral::memory_shortfall(big, 2, 0.5 * (once + twice));
  EXPECT_NE(advice.find("--precision single would fit here"), std::string::npos) << advice;
  big.single_precision_available = false;
  EXPECT_EQ(spectral::memory_shortfall(big, 2, 0.5 * (once + twice)).find("--precision single"),
            std::string::npos);
}

TEST(SinglePrecision, KrylovResidualsComeFromAProductAndStopAtTheFloatFloor) {
  // With float storage the products are not exactly linear in the basis, so
  // the Krylov relation can report residuals below what the stored matrix
  // gives. A convergence the relation reports is confirmed by one product of
  // the Ritz vectors, whose residuals are reported; a tol below float's
  // round-off stops within a few cycles, saying so, not after max_cycles.
  // A = H diag(lambda) H, H = I - 2 u u^T: exact spectrum lambda_i = 0.9^i.
  const Comm world = Comm::world();
  const int n = 400, k = 4;
  std::vector<double> lambda(n);
  for (int i = 0; i < n; ++i) lambda[i] = std::pow(0.9, i);
  const test::ReflectedSpectrum exact(lambda, uniform(n, 11));
  const auto entry = [&](std::int64_t i, std::int64_t j) { return rounded(exact(i, j)); };
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    SingleMatrix a(grid, n, n, 16, 16);
    a.fill([&](std::int64_t i, std::int64_t j) { return static_cast<float>(entry(i, j)); });
    a.set_storage(Storage::lower_blocks);
    const std::string where = std::to_string(p) + "x" + std::to_string(q);
    // A reachable tol: converged, and the residuals reported are those of
    // the returned pairs through the stored matrix's product (the same
    // product spectral::residual_norms takes); exact arithmetic on the float
    // entries gives at most tol too.
    spectral::KrylovSettings settings;
    settings.tol = spectral::kSingleDefaultTol;
    const spectral::KrylovResult r = spectral::krylov_top_eigenpairs(a, k, settings);
    ASSERT_TRUE(r.converged) << where;
    const auto product = spectral::residual_norms(a, r.vectors, r.values);
    const auto v = r.vectors.gather_to_root();
    for (int j = 0; j < k; ++j) {
      EXPECT_NEAR(r.residual_norms[j], product[j], 1e-3 * product[j]) << where << " pair " << j;
      EXPECT_LE(r.residuals[j], settings.tol) << where << " pair " << j;
      if (!world.is_root()) continue;
      EXPECT_LE(test::serial_residual(entry, &v[std::size_t(j) * n], r.values[j], n),
                settings.tol * r.norm_estimate)
          << where << " pair " << j;
    }
    // A tol below float's reach (1e-12 of ||A|| = 1): stopped within a few
    // cycles, at the floor, with the products' residual (about u ||A||), and
    // an error that says why.
    settings.tol = 1e-12;
    const spectral::KrylovResult low = spectral::krylov_top_eigenpairs(a, k, settings);
    EXPECT_FALSE(low.converged) << where;
    EXPECT_TRUE(low.at_precision_floor) << where;
    EXPECT_LE(low.cycles, 4) << where;
    EXPECT_GT(*std::max_element(low.residuals.begin(), low.residuals.end()), kUnit) << where;
    std::string message;
    try {
      spectral::top_eigenpairs(a, k, spectral::Solver::krylov, settings);
    } catch (const Error& e) {
      message = e.what();
    }
    EXPECT_NE(message.find("float's round-off in the products"), std::string::npos) << message;
  }
}
