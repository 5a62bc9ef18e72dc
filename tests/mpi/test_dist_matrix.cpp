// DistMatrix layout, scatter/gather, pdgemr2d copies and the typed eigensolver
// wrappers, on every grid shape the rank count allows.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <random>

#include "linalg/fortran.hpp"
#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/linalg/scalapack.hpp"
#include "test_support.hpp"

using kembed::test::grid_shapes;

using kembed::BlacsGrid;
using kembed::Comm;
using kembed::DistMatrix;
using kembed::test::all_ranks;

namespace {

std::vector<double> random_symmetric(int n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist;
  std::vector<double> a(std::size_t(n) * n);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) a[std::size_t(j) * n + i] = a[std::size_t(i) * n + j] = dist(gen);
  return a;
}

// Serial LAPACK reference: ascending eigenvalues of a column-major matrix.
std::vector<double> serial_eigenvalues(std::vector<double> a, int n) {
  std::vector<double> w(n);
  int lwork = -1, liwork = -1, info = 0, iq = 0;
  double q = 0;
  dsyevd_("N", "L", &n, a.data(), &n, w.data(), &q, &lwork, &iq, &liwork, &info, 1, 1);
  lwork = int(q) + 1;
  liwork = iq + 1;
  std::vector<double> work(lwork);
  std::vector<int> iwork(liwork);
  dsyevd_("N", "L", &n, a.data(), &n, w.data(), work.data(), &lwork, iwork.data(), &liwork, &info,
          1, 1);
  EXPECT_EQ(info, 0);
  return w;
}

}  // namespace

TEST(BlockCyclic, NumrocAndIndexMapsAgree) {
  for (std::int64_t n : {0, 1, 5, 7, 64, 100, 129})
    for (int nb : {1, 3, 8, 64})
      for (int np : {1, 2, 3, 4}) {
        std::int64_t total = 0;
        for (int ip = 0; ip < np; ++ip) {
          kembed::BlockCyclic1D d(n, nb, ip, np);
          const int zero = 0, in = int(n);
          EXPECT_EQ(d.local_size(), numroc_(&in, &nb, &ip, &zero, &np));
          total += d.local_size();
          for (int l = 0; l < d.local_size(); ++l) {
            const auto g = d.to_global(l);
            ASSERT_EQ(d.owner(g), ip);
            ASSERT_EQ(d.to_local(g), l);
          }
          std::int64_t covered = 0;
          for (auto r : d.owned_ranges()) covered += r.size();
          EXPECT_EQ(covered, d.local_size());
        }
        EXPECT_EQ(total, n);
      }
}

TEST(DistMatrix, ScatterGatherRoundTripOnEveryGrid) {
  auto world = Comm::world();
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    // n not a multiple of the block, n smaller than one block, n < ranks.
    for (auto [m, n, mb, nb] : std::vector<std::array<int, 4>>{
             {13, 7, 4, 3}, {5, 5, 8, 8}, {2, 3, 1, 1}, {1, 1, 2, 2}, {40, 9, 5, 2}}) {
      std::vector<double> full(std::size_t(m) * n);
      std::iota(full.begin(), full.end(), 1.0);
      DistMatrix a(grid, m, n, mb, nb);
      a.scatter_from_root(world.is_root() ? full : std::vector<double>{});
      bool ok = true;
      for (int lj = 0; lj < a.local_cols(); ++lj)
        for (int li = 0; li < a.local_rows(); ++li)
          ok = ok && a.local(li, lj) == full[a.col_dist().to_global(lj) * m +
                                             a.row_dist().to_global(li)];
      EXPECT_TRUE(all_ranks(world, ok)) << p << "x" << q << " m=" << m << " n=" << n;
      const auto back = a.gather_to_root();
      if (world.is_root()) {
        EXPECT_EQ(back, full);
      }
    }
  }
}

TEST(DistMatrix, FillAndCopyAcrossBlockings) {
  auto world = Comm::world();
  BlacsGrid grid(world);
  DistMatrix a(grid, 11, 9, 3, 2);
  a.fill([](std::int64_t i, std::int64_t j) { return 100.0 * i + j; });
  DistMatrix b(grid, 6, 4, 2, 5);
  kembed::copy(a, 2, 3, 6, 4, b, 0, 0);
  const auto full = b.gather_to_root();
  if (world.is_root()) {
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 6; ++i) EXPECT_EQ(full[j * 6 + i], 100.0 * (i + 2) + (j + 3));
  }
}

TEST(Eigensolvers, SyevdAndSyevrMatchSerialLapack) {
  auto world = Comm::world();
  const int n = 37;
  const auto sym = random_symmetric(n, 7);
  const auto ref = serial_eigenvalues(sym, n);
  for (auto [p, q] : grid_shapes(world.size()))
    for (int nb : {4, 64}) {
      BlacsGrid grid(world, p, q);
      DistMatrix a(grid, n, n, nb, nb), z(grid, n, n, nb, nb);
      a.scatter_from_root(sym);
      const auto w = kembed::scalapack::syevd(a, z);
      for (int i = 0; i < n; ++i)
        EXPECT_NEAR(w[i], ref[i], 1e-12 * std::abs(ref[n - 1])) << p << "x" << q << " nb=" << nb;

      // Orthonormal eigenvectors: Z^T Z = I.
      DistMatrix ztz(grid, n, n, nb, nb);
      kembed::scalapack::gemm('T', 'N', 1.0, z, z, 0.0, ztz);
      bool ok = true;
      for (int lj = 0; lj < ztz.local_cols(); ++lj)
        for (int li = 0; li < ztz.local_rows(); ++li) {
          const double expect = ztz.row_dist().to_global(li) == ztz.col_dist().to_global(lj);
          ok = ok && std::abs(ztz.local(li, lj) - expect) < 1e-12;
        }
      EXPECT_TRUE(all_ranks(world, ok));

      // Residual A Z - Z W, with A rebuilt (pdsyevd overwrote it).
      DistMatrix a_again(grid, n, n, nb, nb), az(grid, n, n, nb, nb);
      a_again.scatter_from_root(sym);
      kembed::scalapack::gemm('N', 'N', 1.0, a_again, z, 0.0, az);
      double worst = 0;
      for (int lj = 0; lj < az.local_cols(); ++lj)
        for (int li = 0; li < az.local_rows(); ++li)
          worst = std::max(worst, std::abs(az.local(li, lj) -
                                           z.local(li, lj) * w[az.col_dist().to_global(lj)]));
      EXPECT_LT(worst, 1e-12 * std::abs(ref[n - 1])) << p << "x" << q << " nb=" << nb;

      const int k = 5;
      DistMatrix a2(grid, n, n, nb, nb), z2(grid, n, n, nb, nb);
      a2.scatter_from_root(sym);
      const auto wr = kembed::scalapack::syevr(a2, n - k + 1, n, z2);
      ASSERT_EQ(int(wr.size()), k);
      for (int i = 0; i < k; ++i) EXPECT_NEAR(wr[i], ref[n - k + i], 1e-12 * std::abs(ref[n - 1]));
      // Residual of the k returned vectors (columns 0..k-1 of z2).
      DistMatrix a3(grid, n, n, nb, nb), az2(grid, n, n, nb, nb);
      a3.scatter_from_root(sym);
      kembed::scalapack::gemm('N', 'N', 1.0, a3, z2, 0.0, az2);
      double worst_r = 0;
      for (int lj = 0; lj < az2.local_cols(); ++lj) {
        const auto j = az2.col_dist().to_global(lj);
        if (j >= k) continue;
        for (int li = 0; li < az2.local_rows(); ++li)
          worst_r = std::max(worst_r, std::abs(az2.local(li, lj) - z2.local(li, lj) * wr[j]));
      }
      EXPECT_LT(worst_r, 1e-12 * std::abs(ref[n - 1])) << "evr " << p << "x" << q << " nb=" << nb;
    }
}
