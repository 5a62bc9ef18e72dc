// BlockProduct against a serial product of the gathered matrices and
// against pdgemm, on every grid shape the rank count allows, for block sizes
// that leave some ranks without rows or columns and widths of 1 to 40.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "kembed/core/error.hpp"
#include "kembed/linalg/block_product.hpp"
#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/linalg/scalapack.hpp"
#include "kembed/spectral/krylov.hpp"
#include "linalg/fortran.hpp"
#include "test_support.hpp"

using kembed::BlacsGrid;
using kembed::BlockCyclic1D;
using kembed::BlockProduct;
using kembed::Comm;
using kembed::DistMatrix;
using kembed::test::all_ranks;
using kembed::test::grid_shapes;

namespace {

// Reproducible n x n (column-major, not symmetric: the product must not rely
// on symmetry) and n x w values, the same on every rank.
std::vector<double> square(int n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> a(std::size_t(n) * n);
  for (double& v : a) v = dist(gen);
  return a;
}

std::vector<double> block(int n, int w, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> x(std::size_t(n) * w);
  for (double& v : x) v = dist(gen);
  return x;
}

}  // namespace

TEST(BlockProduct, MatchesSerialProductAndPdgemmOnEveryGrid) {
  const Comm world = Comm::world();
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    BlacsGrid line(grid.comm(), grid.comm().size(), 1);
    for (int n : {1, 37, 100})
      for (int nb : {1, 8, 64}) {
        const auto full = square(n, 7u + unsigned(n) + unsigned(nb));
        DistMatrix a(grid, n, n, nb, nb);
        a.fill([&](std::int64_t i, std::int64_t j) { return full[std::size_t(j) * n + i]; });
        BlockProduct product(a);
        for (int w : {1, 5, 40}) {
          const auto xfull = block(n, w, 11u * unsigned(w) + unsigned(n));
          // X and Y in the line layout, with a leading dimension larger than the rows.
          DistMatrix x(line, n, w, nb, w), y(line, n, w, nb, w);
          ASSERT_EQ(x.local_rows(), product.line_rows());
          x.fill([&](std::int64_t i, std::int64_t j) { return xfull[std::size_t(j) * n + i]; });
          const int ld = x.ld() + 3;
          std::vector<double> xs(std::size_t(ld) * w, 0.0), ys(std::size_t(ld) * w, -7.0);
          for (int j = 0; j < w; ++j)
            std::copy_n(x.data() + std::size_t(j) * x.ld(), x.local_rows(),
                        &xs[std::size_t(j) * ld]);
          product.apply(xs.data(), ld, w, ys.data(), ld);
          for (int j = 0; j < w; ++j)
            std::copy_n(&ys[std::size_t(j) * ld], y.local_rows(),
                        y.data() + std::size_t(j) * y.ld());
          // Entries past the rows are not written.
          bool untouched = true;
          for (int j = 0; j < w; ++j)
            for (int i = y.local_rows(); i < ld; ++i)
              untouched &= ys[std::size_t(j) * ld + i] == -7.0;
          EXPECT_TRUE(all_ranks(world, untouched));

          // pdgemm on the 2-D grid, gathered, as the reference from the library.
          DistMatrix x2(grid, n, w, nb, nb), y2(grid, n, w, nb, nb);
          x2.fill([&](std::int64_t i, std::int64_t j) { return xfull[std::size_t(j) * n + i]; });
          kembed::scalapack::gemm('N', 'N', 1.0, a, x2, 0.0, y2);
          const auto mine = y.gather_to_root();
          const auto theirs = y2.gather_to_root();
          bool ok = true;
          if (world.is_root()) {
            for (int j = 0; j < w; ++j)
              for (int i = 0; i < n; ++i) {
                // Serial loop as the independent reference; sums of n terms of
                // size <= 1 round to within n eps of the exact value.
                double s = 0, scale = 0;
                for (int t = 0; t < n; ++t) {
                  s += full[std::size_t(t) * n + i] * xfull[std::size_t(j) * n + t];
                  scale += std::abs(full[std::size_t(t) * n + i] * xfull[std::size_t(j) * n + t]);
                }
                const double tol = 4 * n * 2.2e-16 * std::max(scale, 1e-300);
                const double got = mine[std::size_t(j) * n + i];
                ok &= std::abs(got - s) <= tol;
                ok &= std::abs(got - theirs[std::size_t(j) * n + i]) <= tol;
              }
          }
          EXPECT_TRUE(all_ranks(world, ok))
              << "grid " << p << "x" << q << " n " << n << " nb " << nb << " w " << w;
        }
      }
  }
}

TEST(BlockProduct, RefusesRectangularBlocks) {
  const Comm world = Comm::world();
  BlacsGrid grid(world);
  DistMatrix a(grid, 10, 10, 2, 4);
  EXPECT_THROW(BlockProduct{a}, kembed::Error);
}

// The solver with either product finds the top eigenvalues of a symmetric
// matrix with a known gap, checked against serial LAPACK on the full matrix.
TEST(BlockProduct, KrylovWithEitherProductMatchesSerialEigenvalues) {
  const Comm world = Comm::world();
  const int n = 150, k = 4;
  // A random symmetric matrix plus a rank-k spike, so the top k stand apart.
  auto full = square(n, 3);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < j; ++i)
      full[std::size_t(j) * n + i] = full[std::size_t(i) * n + j];  // symmetric
  const auto spike = block(n, k, 4);
  for (int t = 0; t < k; ++t)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        full[std::size_t(j) * n + i] +=
            10.0 * (t + 1) * spike[std::size_t(t) * n + i] * spike[std::size_t(t) * n + j];
  std::vector<double> w(n), work(1);
  {
    auto a = full;
    int lwork = -1, liwork = -1, info = 0, iq = 0;
    double q = 0;
    dsyevd_("N", "L", &n, a.data(), &n, w.data(), &q, &lwork, &iq, &liwork, &info, 1, 1);
    lwork = int(q) + 1;
    liwork = iq + 1;
    work.resize(lwork);
    std::vector<int> iwork(liwork);
    dsyevd_("N", "L", &n, a.data(), &n, w.data(), work.data(), &lwork, iwork.data(), &liwork, &info,
            1, 1);
    ASSERT_EQ(info, 0);
  }
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    DistMatrix a(grid, n, n, 8, 8);
    a.fill([&](std::int64_t i, std::int64_t j) { return full[std::size_t(j) * n + i]; });
    for (auto which :
         {kembed::spectral::KrylovProduct::local, kembed::spectral::KrylovProduct::pdgemm}) {
      kembed::spectral::KrylovSettings settings;
      settings.product = which;
      const auto result = kembed::spectral::krylov_top_eigenpairs(a, k, settings);
      bool ok = result.converged;
      for (int t = 0; t < k; ++t)
        ok &= std::abs(result.values[t] - w[n - 1 - t]) <= 1e-10 * std::abs(w[n - 1]);
      EXPECT_TRUE(all_ranks(world, ok)) << "grid " << p << "x" << q;
    }
  }
}
