// Assembly into an uninitialized block (filled with NaN first, as garbage)
// writes every entry, and centering from the sums assembly took equals the
// two-pass centering, on every grid shape and several block sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "kembed/core/error.hpp"
#include "kembed/kernel/assemble.hpp"
#include "kembed/kernel/distances.hpp"
#include "kembed/kernel/local_blocks.hpp"
#include "kembed/linalg/reductions.hpp"
#include "kembed/spectral/centering.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using namespace kembed;
using namespace kembed::kernel;
using namespace kembed::spectral;
using kembed::test::all_ranks;
using kembed::test::grid_shapes;

namespace {

void fill_nan(DistMatrix& a) {
  const std::size_t count = std::size_t(a.ld()) * std::max(1, a.local_cols());
  std::fill_n(a.data(), count, std::numeric_limits<double>::quiet_NaN());
}

// Owned entries of a and b are bitwise equal (NaN included as a mismatch).
bool same_bits(const DistMatrix& a, const DistMatrix& b) {
  for (int lj = 0; lj < a.local_cols(); ++lj)
    for (int li = 0; li < a.local_rows(); ++li) {
      const double x = a.local(li, lj), y = b.local(li, lj);
      if (std::memcmp(&x, &y, sizeof x) != 0 || std::isnan(x)) return false;
    }
  return true;
}

}  // namespace

TEST(FusedCentering, UninitializedAssemblyAndOnePassCenteringMatchTwoPasses) {
  const Comm world = Comm::world();
  const int n = 37, d = 4;
  auto x = test::random_data(n, d, 5);
  auto huge = x;  // one huge row: rbf refills its pairs after the fused sums
  for (int t = 0; t < d; ++t) huge[5 * d + t] *= 1e200;
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    for (int nb : {3, 64})
      for (KernelType type : {KernelType::rbf, KernelType::linear, KernelType::poly,
                              KernelType::sigmoid, KernelType::cosine, KernelType::laplacian})
        for (const auto* data : {&x, &huge}) {
          if (data == &huge && type != KernelType::rbf) continue;  // others overflow by design
          const Kernel kernel = test::test_kernel(type);
          DistMatrix fused = DistMatrix::uninitialized(grid, n, n, nb, nb);
          DistMatrix plain(grid, n, n, nb, nb);
          fill_nan(fused);
          const auto rows = test::panel(*data, d, fused.row_dist());
          const auto cols = test::panel(*data, d, fused.col_dist());
          LocalSums sums;
          assemble_kernel(kernel, rows, cols, d, fused, &sums);
          assemble_kernel(kernel, rows, cols, d, plain);
          EXPECT_TRUE(all_ranks(world, same_bits(fused, plain)))
              << "assembly left entries unwritten: " << Kernel::name(type) << " nb " << nb;
          // The serial kernel is the independent reference for the centered result.
          const auto reference = test::serial_center(test::serial_kernel(kernel, *data, n, d));
          const CenteringStats one = center_kernel(fused, sums);
          const CenteringStats two = center_kernel(plain);
          EXPECT_TRUE(all_ranks(world, same_bits(fused, plain) && one.row_means == two.row_means &&
                                           one.col_means == two.col_means &&
                                           one.grand_mean == two.grand_mean))
              << Kernel::name(type) << " grid " << p << "x" << q << " nb " << nb;
          const auto full = fused.gather_to_root();
          bool close = true;
          if (world.is_root()) {
            double scale = 0;
            for (double v : reference.a) scale = std::max(scale, std::abs(v));
            for (std::size_t i = 0; i < full.size(); ++i)
              close &= std::abs(full[i] - reference.a[i]) <= 1e-12 * std::max(scale, 1.0);
          }
          EXPECT_TRUE(all_ranks(world, close)) << Kernel::name(type) << " against serial J K J";
        }
  }
}

TEST(FusedCentering, CenteringTakesTheFrobeniusNormOfWhatItWrites) {
  // The norm centering takes while writing is the one a separate pass over
  // the stored result gives (bit for bit), and the serial J K J's, on every
  // grid, with entries that need scaling (1e200) or none (1e-200 squares to
  // nothing), and on float storage from the sums of the double entries.
  const Comm world = Comm::world();
  const int n = 131;  // columns long enough that a change of summation order shows
  const auto x = test::random_data(n, n, 3);
  for (double scale : {1.0, 1e200, 1e-200}) {
    test::Dense k{n, std::vector<double>(std::size_t(n) * n)};
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        k(i, j) = scale * (x[std::size_t(i) * n + j] + x[std::size_t(j) * n + i]);
    const auto centered = test::serial_center(k);
    long double squares = 0;  // of the serial result over scale^2, in extended range
    for (double v : centered.a) squares += (long double)(v / scale) * (v / scale);
    const double reference = scale * std::sqrt(static_cast<double>(squares));
    for (auto [p, q] : grid_shapes(world.size())) {
      BlacsGrid grid(world, p, q);
      for (int nb : {2, 8}) {
        DistMatrix a(grid, n, n, nb, nb);
        a.fill([&](std::int64_t i, std::int64_t j) { return k(int(i), int(j)); });
        const CenteringStats stats = center_kernel(a);
        const double pass = frobenius_norm(a);
        EXPECT_TRUE(all_ranks(world, std::memcmp(&stats.frobenius_norm, &pass, sizeof pass) == 0))
            << stats.frobenius_norm << " vs " << pass << " scale " << scale << " grid " << p << "x"
            << q << " nb " << nb;
        EXPECT_NEAR(stats.frobenius_norm, reference, 1e-13 * reference) << "scale " << scale;
        if (scale != 1.0) continue;
        SingleMatrix single(grid, n, n, nb, nb);
        DistMatrix rounded(grid, n, n, nb, nb);
        single.fill(
            [&](std::int64_t i, std::int64_t j) { return static_cast<float>(k(int(i), int(j))); });
        rounded.fill([&](std::int64_t i, std::int64_t j) {
          return double(static_cast<float>(k(int(i), int(j))));
        });
        const CenteringStats from_float = center_kernel(single, local_sums(rounded));
        const double single_pass = frobenius_norm(single);
        EXPECT_TRUE(all_ranks(
            world, std::memcmp(&from_float.frobenius_norm, &single_pass, sizeof single_pass) == 0))
            << "float storage, grid " << p << "x" << q << " nb " << nb;
        EXPECT_NEAR(from_float.frobenius_norm, reference, 1e-6 * reference);
      }
    }
  }
}

TEST(FusedCentering, TiledAssemblyOfBlocksLargerThanOneTile) {
  // Blocks of several gram tiles in both directions, with a short last tile
  // whose row count is not a multiple of 4 on some grids: every entry lands
  // in its place (against the kernel and distance of each pair from its
  // differences), and the sums taken tile by tile are the bits of the
  // separate pass.
  const Comm world = Comm::world();
  const int n = 2 * kGramTileRows + 54, d = 3;
  const auto x = test::random_data(n, d, 11);
  const auto point = [&](std::int64_t i) { return &x[std::size_t(i) * d]; };
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    const auto rows_cols = [&](const DistMatrix& a) {
      return std::make_pair(test::panel(x, d, a.row_dist()), test::panel(x, d, a.col_dist()));
    };
    // Largest |computed - f(x_i, x_j)| / max(1, |f(x_i, x_j)|) over the local block.
    const auto worst = [&](const DistMatrix& a, auto&& f) {
      double largest = 0;
      for (int lj = 0; lj < a.local_cols(); ++lj)
        for (int li = 0; li < a.local_rows(); ++li) {
          const double want =
              f(point(a.row_dist().to_global(li)), point(a.col_dist().to_global(lj)));
          largest =
              std::max(largest, std::abs(a.local(li, lj) - want) / std::max(1.0, std::abs(want)));
        }
      return largest;
    };
    for (KernelType type : {KernelType::rbf, KernelType::poly, KernelType::cosine}) {
      const Kernel kernel = test::test_kernel(type);
      DistMatrix fused = DistMatrix::uninitialized(grid, n, n, 64, 64);
      DistMatrix plain(grid, n, n, 64, 64);
      fill_nan(fused);
      const auto [rows, cols] = rows_cols(fused);
      LocalSums sums;
      assemble_kernel(kernel, rows, cols, d, fused, &sums);
      assemble_kernel(kernel, rows, cols, d, plain);
      const double error = worst(fused, [&](const double* a, const double* b) {
        double dot = 0, aa = 0, bb = 0, squared = 0;
        for (int t = 0; t < d; ++t) {
          dot += a[t] * b[t], aa += a[t] * a[t], bb += b[t] * b[t];
          squared += (a[t] - b[t]) * (a[t] - b[t]);
        }
        if (type == KernelType::rbf) return std::exp(-kernel.gamma * squared);
        if (type == KernelType::poly) return std::pow(kernel.gamma * dot + kernel.coef0, 3);
        return dot / std::sqrt(aa * bb);
      });
      // The Gram trick's round-off: a few ulp of |x||y| (at most about 40 here).
      EXPECT_TRUE(all_ranks(world, error <= 1e-13))
          << Kernel::name(type) << " grid " << p << "x" << q << ": error " << error;
      const CenteringStats one = center_kernel(fused, sums);
      const CenteringStats two = center_kernel(plain);
      EXPECT_TRUE(all_ranks(world, same_bits(fused, plain) && one.row_means == two.row_means &&
                                       one.col_means == two.col_means))
          << Kernel::name(type) << " grid " << p << "x" << q << ": tiled sums";
    }
    DistMatrix a = DistMatrix::uninitialized(grid, n, n, 64, 64);
    fill_nan(a);
    const auto [rows, cols] = rows_cols(a);
    assemble_distances(Metric::sqeuclidean, rows, cols, d, a);
    const double error = worst(a, [&](const double* u, const double* v) {
      double squared = 0;
      for (int t = 0; t < d; ++t) squared += (u[t] - v[t]) * (u[t] - v[t]);
      return squared;
    });
    EXPECT_TRUE(all_ranks(world, error <= 1e-13)) << "sqeuclidean grid " << p << "x" << q;
  }
}

TEST(FusedCentering, DistancesFillAnUninitializedBlock) {
  const Comm world = Comm::world();
  const int n = 23, d = 3;
  const auto x = test::random_data(n, d, 9);
  BlacsGrid grid(world);
  for (Metric metric :
       {Metric::euclidean, Metric::sqeuclidean, Metric::manhattan, Metric::cosine}) {
    DistMatrix a = DistMatrix::uninitialized(grid, n, n, 4, 4);
    DistMatrix b(grid, n, n, 4, 4);
    fill_nan(a);
    const auto rows = test::panel(x, d, a.row_dist());
    const auto cols = test::panel(x, d, a.col_dist());
    assemble_distances(metric, rows, cols, d, a);
    assemble_distances(metric, rows, cols, d, b);
    EXPECT_TRUE(all_ranks(world, same_bits(a, b))) << metric_name(metric);
  }
}

TEST(FusedCentering, RefusesSumsOfAnotherBlock) {
  const Comm world = Comm::world();
  BlacsGrid grid(world);
  DistMatrix a(grid, 10, 10, 2, 2);
  LocalSums wrong;
  wrong.rows.assign(a.local_rows() + 1, 0.0);
  wrong.cols.assign(a.local_cols(), 0.0);
  EXPECT_THROW(center_kernel(a, wrong), Error);
}
