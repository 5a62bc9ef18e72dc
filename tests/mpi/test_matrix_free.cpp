// --storage none: the matrix-free operator (PointMatrixOperator, centered by
// CenteredOperator) against the serially built and centered matrix (pair by
// pair from the definitions, explicit J K J), for every kernel and for MDS
// under every metric, on every grid shape the rank count allows and block
// sizes that leave ranks without rows; then kpca and mds with --storage none
// against the stored path (eigenvalues, embeddings under the sign rule, the
// trace and ||.||_F), single precision within its tolerance, the
// refusals, and the plan's time estimate against its model worked by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "kembed/core/error.hpp"
#include "kembed/spectral/centered_operator.hpp"
#include "kembed/spectral/kernel_operator.hpp"
#include "kembed/spectral/kpca.hpp"
#include "kembed/spectral/mds.hpp"
#include "kembed/spectral/time_estimate.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using namespace kembed;
using namespace kembed::kernel;
using namespace kembed::spectral;
using kembed::test::all_ranks;
using kembed::test::Dense;
using kembed::test::grid_shapes;

namespace {

constexpr KernelType kKernels[] = {KernelType::linear,    KernelType::poly,
                                   KernelType::rbf,       KernelType::laplacian,
                                   KernelType::sigmoid,   KernelType::cosine};
constexpr Metric kMetrics[] = {Metric::euclidean, Metric::sqeuclidean, Metric::manhattan,
                               Metric::cosine};

// d(x, y) from the metric's definition, pair by pair.
double serial_distance(Metric metric, const double* x, const double* y, int d) {
  double l2 = 0, l1 = 0, dot = 0, xx = 0, yy = 0;
  for (int t = 0; t < d; ++t) {
    l2 += (x[t] - y[t]) * (x[t] - y[t]);
    l1 += std::abs(x[t] - y[t]);
    dot += x[t] * y[t];
    xx += x[t] * x[t];
    yy += y[t] * y[t];
  }
  switch (metric) {
    case Metric::euclidean: return std::sqrt(l2);
    case Metric::sqeuclidean: return l2;
    case Metric::manhattan: return l1;
    case Metric::cosine: return 1 - dot / std::sqrt(xx * yy);
  }
  return 0;
}

// -1/2 D^(2) pair by pair.
Dense serial_half_squares(Metric metric, const std::vector<double>& x, int n, int d) {
  Dense a{n, std::vector<double>(std::size_t(n) * n)};
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double v = serial_distance(metric, &x[std::size_t(i) * d], &x[std::size_t(j) * d], d);
      a(i, j) = -0.5 * v * v;
    }
  return a;
}

// Collective: max |(A~ X)_ij - y_ij| / (max_i sum_j |A~_ij| max |X|) over this
// rank's rows of the operator's layout, y = centered.apply(X).
double relative_product_error(const Dense& centered_ref, const BlacsGrid& grid, int n, int nb,
                              std::vector<double> row_panel, std::vector<double> col_panel,
                              int d, TileEntries entries, const Comm& world) {
  PointMatrixOperator a(grid, n, nb, std::move(row_panel), std::move(col_panel), d, entries,
                        false);
  const PointMatrixSums sums = a.sums();
  std::vector<double> means = sums.row_sums;
  for (double& m : means) m /= n;
  CenteredOperator centered(a, means, sums.total / (double(n) * n));
  const int width = 5, rows = centered.rows().local_size(), ld = std::max(1, rows);
  std::mt19937 random(7);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<double> x_all(std::size_t(n) * width);  // the same on every rank
  for (double& v : x_all) v = uniform(random);
  std::vector<double> x(std::size_t(ld) * width), y(std::size_t(ld) * width, 0.0);
  for (int j = 0; j < width; ++j)
    for (int l = 0; l < rows; ++l)
      x[std::size_t(j) * ld + l] = x_all[std::size_t(j) * n + centered.rows().to_global(l)];
  centered.apply(x.data(), ld, width, y.data(), ld);
  double scale = 0;
  for (int i = 0; i < n; ++i) {
    double row = 0;
    for (int j = 0; j < n; ++j) row += std::abs(centered_ref(i, j));
    scale = std::max(scale, row);
  }
  double worst = 0;
  for (int j = 0; j < width; ++j)
    for (int l = 0; l < rows; ++l) {
      const std::int64_t i = centered.rows().to_global(l);
      double expected = 0;
      for (int t = 0; t < n; ++t)
        expected += centered_ref(int(i), t) * x_all[std::size_t(j) * n + t];
      const double diff = std::abs(expected - y[std::size_t(j) * ld + l]);
      worst = std::max(worst, std::isnan(diff) ? INFINITY : diff);
    }
  return world.max(worst) / scale;
}

}  // namespace

TEST(MatrixFree, CenteredProductEqualsSerialCenteredMatrixForEveryKernelAndMetric) {
  const Comm world = Comm::world();
  const int n = 37, d = 4;
  const auto x = test::random_data(n, d, 5);
  for (auto [p, q] : grid_shapes(world.size()))
    for (int nb : {3, 8, 64}) {  // 64 > n: every rank but one without rows
      BlacsGrid grid(world, p, q);
      const BlockCyclic1D rows(n, nb, grid.myrow(), p), cols(n, nb, grid.mycol(), q);
      const std::string where = std::to_string(p) + "x" + std::to_string(q) + " nb " +
                                std::to_string(nb);
      for (KernelType type : kKernels) {
        const Kernel kernel = test::test_kernel(type);
        const Dense ref = test::serial_center(test::serial_kernel(kernel, x, n, d));
        const double error =
            relative_product_error(ref, grid, n, nb, test::panel(x, d, rows),
                                   test::panel(x, d, cols), d, kernel, world);
        EXPECT_LT(error, 1e-13) << Kernel::name(type) << " " << where;
      }
      for (Metric metric : kMetrics) {
        const Dense ref = test::serial_center(serial_half_squares(metric, x, n, d));
        const double error =
            relative_product_error(ref, grid, n, nb, test::panel(x, d, rows),
                                   test::panel(x, d, cols), d, metric, world);
        EXPECT_LT(error, 1e-13) << metric_name(metric) << " " << where;
      }
    }
}

namespace {

// |a - b| of two row-major embeddings relative to max |a|.
double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double top = 0;
  for (double v : a) top = std::max(top, std::abs(v));
  return test::max_abs_diff(a, b) / top;
}

}  // namespace

TEST(MatrixFree, KpcaMatchesTheStoredPathOnEveryGrid) {
  const Comm world = Comm::world();
  const int n = 53, d = 5, k = 3;
  const auto x = test::random_data(n, d, 11);
  const std::string dir = test::scratch_dir(world, "matrix_free_kpca");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  for (KernelType type : kKernels) {
    KpcaSettings settings;
    settings.kernel = test::test_kernel(type);
    settings.components = k;
    settings.solver = Solver::krylov;
    settings.krylov.tol = 1e-13;
    settings.block_size = 8;
    settings.storage = StorageRequest::full;
    BlacsGrid reference_grid(world);
    PhaseTimer timer;
    const KpcaResult stored = fit_kpca(*file, reference_grid, settings, timer);
    settings.storage = StorageRequest::none;
    for (auto [p, q] : grid_shapes(world.size()))
      for (int nb : {4, 64}) {
        BlacsGrid grid(world, p, q);
        settings.block_size = nb;
        const KpcaResult free = fit_kpca(*file, grid, settings, timer);
        const std::string where = Kernel::name(type) + " " + std::to_string(p) + "x" +
                                  std::to_string(q) + " nb " + std::to_string(nb);
        EXPECT_EQ(free.storage, MatrixStorage::none) << where;
        EXPECT_GT(free.passes, 2) << where;
        for (int j = 0; j < k; ++j)
          EXPECT_NEAR(free.eigenvalues[j], stored.eigenvalues[j], 1e-10 * stored.eigenvalues[j])
              << where;
        EXPECT_NEAR(free.trace, stored.trace, 1e-12 * std::abs(stored.trace)) << where;
        EXPECT_NEAR(free.frobenius_norm, stored.frobenius_norm, 1e-12 * stored.frobenius_norm)
            << where;
        EXPECT_TRUE(all_ranks(world, test::max_abs_diff(free.col_means, stored.col_means) <
                                         1e-13 * (1 + std::abs(stored.grand_mean))))
            << where;
        if (world.is_root()) {
          EXPECT_LT(relative_difference(stored.embedding, free.embedding), 1e-8) << where;
        }
      }
  }
}

TEST(MatrixFree, MdsMatchesTheStoredPathForEveryMetric) {
  const Comm world = Comm::world();
  const int n = 47, d = 3, k = 2;
  const auto x = test::random_data(n, d, 13);
  const std::string dir = test::scratch_dir(world, "matrix_free_mds");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  for (Metric metric : kMetrics) {
    MdsSettings settings;
    settings.metric = metric;
    settings.components = k;
    settings.solver = Solver::krylov;
    settings.krylov.tol = 1e-13;
    settings.block_size = 5;
    settings.storage = StorageRequest::full;
    BlacsGrid reference_grid(world);
    PhaseTimer timer;
    const MdsResult stored = fit_mds(*file, reference_grid, settings, timer);
    settings.storage = StorageRequest::none;
    for (auto [p, q] : grid_shapes(world.size())) {
      BlacsGrid grid(world, p, q);
      const MdsResult free = fit_mds(*file, grid, settings, timer);
      const std::string where =
          metric_name(metric) + " " + std::to_string(p) + "x" + std::to_string(q);
      EXPECT_EQ(free.storage, MatrixStorage::none) << where;
      for (int j = 0; j < k; ++j)
        EXPECT_NEAR(free.eigenvalues[j], stored.eigenvalues[j], 1e-10 * stored.eigenvalues[j])
            << where;
      EXPECT_NEAR(free.trace, stored.trace, 1e-12 * std::abs(stored.trace)) << where;
      EXPECT_NEAR(free.frobenius_norm, stored.frobenius_norm, 1e-12 * stored.frobenius_norm)
          << where;
      EXPECT_NEAR(free.sq_grand_mean, stored.sq_grand_mean, 1e-13 * stored.sq_grand_mean)
          << where;
      if (world.is_root()) {
        EXPECT_LT(relative_difference(stored.embedding, free.embedding), 1e-8) << where;
      }
    }
  }
}

TEST(MatrixFree, SinglePrecisionWithinItsTolerance) {
  const Comm world = Comm::world();
  const int n = 61, d = 4, k = 3;
  const auto x = test::random_data(n, d, 17);
  const std::string dir = test::scratch_dir(world, "matrix_free_single");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  KpcaSettings settings;
  settings.kernel = test::test_kernel(KernelType::rbf);
  settings.components = k;
  settings.solver = Solver::krylov;
  settings.block_size = 8;
  settings.storage = StorageRequest::full;
  BlacsGrid grid(world);
  PhaseTimer timer;
  const KpcaResult exact = fit_kpca(*file, grid, settings, timer);
  settings.storage = StorageRequest::none;
  settings.single_precision = true;
  settings.krylov.tol = kSingleDefaultTol;
  const KpcaResult single = fit_kpca(*file, grid, settings, timer);
  for (int j = 0; j < k; ++j) {
    EXPECT_NEAR(single.eigenvalues[j], exact.eigenvalues[j], 1e-5 * exact.eigenvalues[0]);
    EXPECT_LT(single.residuals[j], 1e-5);
  }
}

TEST(MatrixFree, RefusesWhatItCannotRecompute) {
  const Comm world = Comm::world();
  const int n = 20;
  const auto x = test::random_data(n, n, 3);
  const std::string dir = test::scratch_dir(world, "matrix_free_refusals");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, n});
  BlacsGrid grid(world);
  PhaseTimer timer;
  KpcaSettings kpca;
  kpca.kernel.type = KernelType::precomputed;
  kpca.storage = StorageRequest::none;
  kpca.solver = Solver::krylov;
  const std::string precomputed = test::caught([&] { fit_kpca(*file, grid, kpca, timer); });
  EXPECT_NE(precomputed.find("--storage none recomputes the kernel"), std::string::npos)
      << precomputed;
  MdsSettings mds;  // a distance matrix: nothing to recompute
  mds.storage = StorageRequest::none;
  mds.solver = Solver::krylov;
  const std::string distances = test::caught([&] { fit_mds(*file, grid, mds, timer); });
  EXPECT_NE(distances.find("--storage none recomputes the distances"), std::string::npos)
      << distances;
  KpcaSettings evd;
  evd.storage = StorageRequest::none;
  evd.solver = Solver::evd;
  const std::string solver = test::caught([&] { fit_kpca(*file, grid, evd, timer); });
  EXPECT_NE(solver.find("--storage none needs --solver krylov"), std::string::npos) << solver;
}

TEST(MatrixFree, AutoRunsMatrixFreeOnlyWhereNothingStoredFits) {
  const Comm world = Comm::world();
  const int n = 2000, d = 3, k = 2;  // the matrix well above the process baseline
  const auto x = test::random_data(n, d, 19);
  const std::string dir = test::scratch_dir(world, "matrix_free_auto");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  BlacsGrid grid(world);
  PhaseTimer timer;
  KpcaSettings settings;
  settings.components = k;
  settings.solver = Solver::krylov;
  settings.block_size = 16;
  ProblemShape shape{n, d, k, grid.nprow(), grid.npcol(), 16, Solver::krylov};
  // Between the two plans: the stored one does not fit, the matrix-free one does.
  const double stored = kpca_fit_plan(settings, shape, 0, world.size()).memory.total();
  shape.matrix_free = true;
  const double free = plan_memory(shape).total();
  ASSERT_LT(free, stored);
  settings.max_memory_per_rank = (free + stored) / 2;
  const KpcaResult chosen = fit_kpca(*file, grid, settings, timer);
  EXPECT_EQ(chosen.storage, MatrixStorage::none);
  EXPECT_NE(chosen.storage_note.find("--storage auto"), std::string::npos);
  settings.max_memory_per_rank = 2 * stored;
  const KpcaResult kept = fit_kpca(*file, grid, settings, timer);
  EXPECT_NE(kept.storage, MatrixStorage::none);
  EXPECT_TRUE(kept.storage_note.empty());
}

TEST(MatrixFree, TimeEstimateFollowsItsModel) {
  // Rates given, not measured: the estimate is then a closed form. On a 1x1
  // grid with n = 4096 and nb = 64 the 64 block columns hold 64 * 64 *
  // (64 + 63 + ... + 1) = 4096 * 2080 = 8,519,680 entries on and below the
  // block diagonal; d = 64, k = 10: b = max(10 + 4, 24) = 24 for both paths.
  const MachineRates rates{1e10, 1e9, 1e10, 64};
  ProblemShape shape{4096, 64, 10, 1, 1, 64, Solver::krylov};
  shape.lower_storage = true;
  const double entries = 4096.0 * 2080;
  const TimeEstimate stored = estimate_time(shape, rates);
  ASSERT_TRUE(stored.stored_modelled);
  EXPECT_EQ(stored.stored_width, 24);
  EXPECT_EQ(stored.free_width, 24);
  // Recomputing an entry: 128 flops at 1e10/s and one map at 1e9/s = 13.8 ns.
  EXPECT_NEAR(stored.assembly, entries * 13.8e-9, 1e-12 * entries);
  EXPECT_NEAR(stored.centering_pass, entries * 13.8e-9, 1e-12 * entries);
  // Stored product: 8 bytes at 1e10 B/s and 2 uses x 2 x 24 flops = 10.4 ns.
  EXPECT_NEAR(stored.stored_product, entries * 10.4e-9, 1e-12 * entries);
  // Matrix-free product: recomputation and 4 x 24 flops = 23.4 ns.
  EXPECT_NEAR(stored.free_product, entries * 23.4e-9, 1e-12 * entries);
  EXPECT_NEAR(stored.free_total(), 12 * stored.free_product + 2 * stored.centering_pass, 1e-9);
  // The same shape planned matrix-free gives the same two alternatives.
  ProblemShape none = shape;
  none.matrix_free = true;
  none.lower_storage = false;
  const TimeEstimate free = estimate_time(none, rates);
  EXPECT_DOUBLE_EQ(free.free_product, stored.free_product);
  EXPECT_DOUBLE_EQ(free.stored_product, stored.stored_product);
  EXPECT_NE(describe_time_estimate(none, free, rates).find("matrix-free (12 products of"),
            std::string::npos);

  // n doubled: about 4 times the work per pass (the diagonal blocks, whole
  // on a 1x1 grid, make it a little less); on 2x2 the busiest rank's share.
  for (const auto& [p, q] : std::vector<std::pair<int, int>>{{1, 1}, {1, 2}, {2, 2}}) {
    ProblemShape small{8000, 64, 10, p, q, 64, Solver::krylov};
    small.matrix_free = true;
    ProblemShape large = small;
    large.n = 16000;
    const TimeEstimate a = estimate_time(small, rates), b = estimate_time(large, rates);
    EXPECT_GT(b.free_product / a.free_product, 3.9) << p << "x" << q;
    EXPECT_LE(b.free_product / a.free_product, 4.0) << p << "x" << q;
    EXPECT_GT(b.stored_product / a.stored_product, 3.9) << p << "x" << q;
    EXPECT_GT(a.free_product, a.stored_product);
    for (double t : {a.assembly, a.stored_product, a.free_product, a.centering_pass})
      EXPECT_TRUE(std::isfinite(t) && t > 0);
  }

  // Measured here: positive, finite, in well under a second.
  const auto start = std::chrono::steady_clock::now();
  const MachineRates here = measure_machine_rates(64);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took.count(), 1.5);
  EXPECT_EQ(here.gemm_depth, 64);
  // Few features: still measured 64 deep, the depth of the products (at
  // d = 3 a 3-deep dgemm is all call overhead).
  EXPECT_EQ(measure_machine_rates(3).gemm_depth, 64);
  for (double r : {here.gemm_flops, here.map_entries, here.read_bytes})
    EXPECT_TRUE(std::isfinite(r) && r > 0) << r;
  const std::string text = describe_time_estimate(shape, estimate_time(shape, here), here);
  EXPECT_EQ(text.rfind("estimated time of the busiest rank: ", 0), 0u) << text;
  EXPECT_NE(text.find("stored (assembly"), std::string::npos) << text;
  EXPECT_NE(text.find("[this run]"), std::string::npos) << text;
  EXPECT_NE(text.find("GFLOP/s"), std::string::npos) << text;
}
