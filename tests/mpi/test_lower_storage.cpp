// Lower-block storage (Storage::lower_blocks) of a symmetric matrix, in both
// layouts: packed, as kembed assembles it (only the stored entries exist, so
// a stray write lands on another column's entries and a stray read returns
// one of them), and in ScaLAPACK's layout after unpack(), with the blocks
// above the diagonal filled with NaN, so any read of them shows in the
// results and any write of them is seen. On every grid shape the rank count
// allows and block sizes that leave ranks without blocks: assembly,
// centering, norms, the block product and the krylov solver against the full
// storage and serial references.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "kembed/kernel/assemble.hpp"
#include "kembed/kernel/distances.hpp"
#include "kembed/kernel/local_blocks.hpp"
#include "kembed/linalg/block_product.hpp"
#include "kembed/linalg/reductions.hpp"
#include "kembed/spectral/centering.hpp"
#include "kembed/spectral/eigensolver.hpp"
#include "kembed/spectral/krylov.hpp"
#include "kembed/spectral/memory_plan.hpp"
#include "kembed/spectral/spectral_step.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using namespace kembed;
using namespace kembed::kernel;
using namespace kembed::spectral;
using kembed::test::all_ranks;
using kembed::test::grid_shapes;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Whether global entry (i, j) lies in a block on or below the block diagonal.
bool in_lower_blocks(std::int64_t i, std::int64_t j, int nb) { return i / nb >= j / nb; }

// A matrix in lower-block storage holding `value(i, j)` in its stored
// blocks: packed, or unpacked with NaN above them.
template <class T, class F>
BasicDistMatrix<T> lower_matrix(const BlacsGrid& grid, int n, int nb, bool packed, F&& value) {
  BasicDistMatrix<T> a(grid, n, n, nb, nb);
  a.fill([&](std::int64_t i, std::int64_t j) {
    return in_lower_blocks(i, j, nb) ? static_cast<T>(value(i, j)) : static_cast<T>(kNaN);
  });
  a.set_storage(Storage::lower_blocks);
  if (packed) return a;
  a.unpack();
  for (int lj = 0; lj < a.local_cols(); ++lj)
    for (int li = 0; li < a.stored_from(lj); ++li) a.column(lj)[li] = static_cast<T>(kNaN);
  return a;
}

constexpr bool kLayouts[] = {true, false};  // packed, unpacked with NaN above

std::string layout_name(bool packed) { return packed ? " packed" : " unpacked"; }

// A lower-block matrix of NaN (packed or not) and a zero full matrix of the
// same shape, to assemble side by side, and the panels of x they need.
template <class T>
struct AssemblyPair {
  BasicDistMatrix<T> lower, full;
  std::vector<double> rows, cols;
};
template <class T>
AssemblyPair<T> assembly_pair(const BlacsGrid& grid, int n, int nb, bool packed,
                              const std::vector<double>& x, int d) {
  AssemblyPair<T> m{lower_matrix<T>(grid, n, nb, packed, [](auto, auto) { return kNaN; }),
                    BasicDistMatrix<T>(grid, n, n, nb, nb),
                    {},
                    {}};
  m.rows = test::panel(x, d, m.full.row_dist());
  m.cols = test::panel(x, d, m.full.col_dist());
  return m;
}

// Stored entries: exactly the local rows from stored_from(lj) on, which are
// the entries of blocks on and below the diagonal.
template <class T>
bool stored_rows_are_the_lower_blocks(const BasicDistMatrix<T>& a) {
  const int nb = a.row_dist().block_size();
  for (int lj = 0; lj < a.local_cols(); ++lj)
    for (int li = 0; li < a.local_rows(); ++li) {
      const std::int64_t i = a.row_dist().to_global(li), j = a.col_dist().to_global(lj);
      if ((li >= a.stored_from(lj)) != in_lower_blocks(i, j, nb)) return false;
      if ((li >= a.below_diagonal_from(lj)) != (i / nb > j / nb)) return false;
    }
  return true;
}

// Largest |a - b| over the stored entries, and whether the entries above
// them are still NaN in a (unpacked).
struct Comparison {
  double largest = 0;
  bool above_untouched = true;
};
Comparison compare_stored(const DistMatrix& a, const DistMatrix& full) {
  Comparison c;
  for (int lj = 0; lj < a.local_cols(); ++lj)
    for (int li = a.packed() ? a.stored_from(lj) : 0; li < a.local_rows(); ++li) {
      if (li < a.stored_from(lj)) {
        c.above_untouched &= std::isnan(a.column(lj)[li]);
        continue;
      }
      const double d = std::abs(a.local(li, lj) - full.local(li, lj));
      c.largest = std::isnan(d) ? INFINITY : std::max(c.largest, d);
    }
  return c;
}

std::vector<double> symmetric(int n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> a(std::size_t(n) * n);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) a[std::size_t(j) * n + i] = a[std::size_t(i) * n + j] = dist(gen);
  return a;
}

}  // namespace

TEST(LowerStorage, StoredRowsAreTheBlocksOnAndBelowTheDiagonal) {
  const Comm world = Comm::world();
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    for (int n : {1, 37, 200})
      for (int nb : {1, 3, 8, 64}) {
        DistMatrix a(grid, n, n, nb, nb);
        a.set_storage(Storage::lower_blocks);
        EXPECT_TRUE(all_ranks(world, stored_rows_are_the_lower_blocks(a)))
            << "grid " << p << "x" << q << " n " << n << " nb " << nb;
      }
  }
  BlacsGrid grid(world);
  DistMatrix rectangular(grid, 10, 12, 4, 4), uneven(grid, 10, 10, 2, 4);
  EXPECT_THROW(rectangular.set_storage(Storage::lower_blocks), Error);
  EXPECT_THROW(uneven.set_storage(Storage::lower_blocks), Error);
}

TEST(LowerStorage, PackedColumnsHoldTheStoredRowsBackToBack) {
  // The packed layout: each column's stored rows right after the column
  // before's, nothing between them; packing, unpacking, gathering and a
  // fresh uninitialized matrix agree on it and keep every stored value.
  const Comm world = Comm::world();
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    for (int n : {1, 37, 200})
      for (int nb : {1, 3, 64}) {
        const auto value = [n](std::int64_t i, std::int64_t j) { return double(i * n + j + 1); };
        DistMatrix a(grid, n, n, nb, nb);
        a.fill(value);
        a.set_storage(Storage::lower_blocks);
        const DistMatrix fresh =
            DistMatrix::uninitialized(grid, n, n, nb, nb, Storage::lower_blocks);
        const auto back_to_back = [](const DistMatrix& m) {
          bool ok = m.packed();
          const double* next = m.data() + (m.local_cols() > 0 ? m.stored_from(0) : 0);
          for (int lj = 0; lj < m.local_cols(); ++lj) {
            ok &= m.column(lj) + m.stored_from(lj) == next;
            next = m.column(lj) + m.local_rows();
            // The next column of the same block is column_ld apart (a BLAS
            // leading dimension, at least 1 where no row is stored).
            const int rows = m.local_rows() - m.stored_from(lj);
            if (lj + 1 < m.local_cols() &&
                m.col_dist().to_global(lj + 1) % m.col_dist().block_size())
              ok &=
                  m.column(lj + 1) - m.column(lj) == rows && (rows == 0 || m.column_ld(lj) == rows);
          }
          return ok;
        };
        bool ok = back_to_back(a) && back_to_back(fresh);
        for (int lj = 0; lj < a.local_cols(); ++lj) {
          ok &= fresh.column(lj) - fresh.data() == a.column(lj) - a.data();
          for (int li = a.stored_from(lj); li < a.local_rows(); ++li)
            ok &= a.local(li, lj) == value(a.row_dist().to_global(li), a.col_dist().to_global(lj));
        }
        const auto gathered = a.gather_to_root();
        for (std::int64_t j = 0; j < n && world.is_root(); ++j)
          for (std::int64_t i = 0; i < n; ++i)
            ok &= gathered[std::size_t(j * n + i)] == (in_lower_blocks(i, j, nb) ? value(i, j) : 0);
        EXPECT_THROW(a.desc(), Error);
        a.unpack();
        ok &= !a.packed() && a.desc()[8] == a.ld();
        for (int lj = 0; lj < a.local_cols(); ++lj) {
          ok &= a.column(lj) == a.data() + std::size_t(lj) * a.ld();
          for (int li = a.stored_from(lj); li < a.local_rows(); ++li)
            ok &= a.local(li, lj) == value(a.row_dist().to_global(li), a.col_dist().to_global(lj));
        }
        EXPECT_TRUE(all_ranks(world, ok)) << "grid " << p << "x" << q << " n " << n << " nb " << nb;
        EXPECT_THROW(a.set_storage(Storage::full), Error);
      }
  }
}

TEST(LowerStorage, AssemblyAndCenteringMatchFullStorageAndLeaveTheUpperBlocks) {
  // Every kernel kpca stores in lower blocks, on blocks of several Gram tiles
  // (n = 2102) and on small odd blocks: the stored entries are those of full
  // storage, the blocks above are never written, centering from the fused
  // sums gives full storage's means and norm, and the separate sums pass
  // gives the fused sums' bits.
  const Comm world = Comm::world();
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    for (auto [n, nb] :
         {std::pair{37, 3}, std::pair{37, 64}, std::pair{2 * kGramTileRows + 54, 64}}) {
      const int d = 4;
      const auto plain = test::random_data(n, d, 5);
      // One huge row: rbf and cosine refill its pairs from the differences
      // (the other kernels overflow there by design).
      auto huge = plain;
      for (int t = 0; t < d; ++t) huge[std::size_t(n / 2) * d + t] *= 1e200;
      for (KernelType type : {KernelType::rbf, KernelType::linear, KernelType::poly,
                              KernelType::sigmoid, KernelType::cosine})
        for (bool packed : kLayouts) {
          if (n > 100 && type != KernelType::rbf && type != KernelType::poly) continue;
          const auto& x = type == KernelType::rbf || type == KernelType::cosine ? huge : plain;
          const Kernel kernel = test::test_kernel(type);
          auto [lower, full, rows, cols] = assembly_pair<double>(grid, n, nb, packed, x, d);
          LocalSums lower_sums, full_sums;
          assemble_kernel(kernel, rows, cols, d, lower, &lower_sums);
          assemble_kernel(kernel, rows, cols, d, full, &full_sums);
          const std::string what = std::string(Kernel::name(type)) + " grid " + std::to_string(p) +
                                   "x" + std::to_string(q) + " n " + std::to_string(n) + " nb " +
                                   std::to_string(nb) + layout_name(packed);
          const Comparison assembled = compare_stored(lower, full);
          // The Gram products run on other tile shapes: a few ulp of |x||y|.
          EXPECT_TRUE(all_ranks(world, assembled.largest <= 1e-13 && assembled.above_untouched))
              << what << ": assembly off by " << assembled.largest;
          const LocalSums pass = local_sums(lower);
          EXPECT_TRUE(
              all_ranks(world, pass.rows == lower_sums.rows && pass.cols == lower_sums.cols))
              << what << ": fused and separate sums differ";

          const double full_trace = trace(full), lower_trace = trace(lower);
          const CenteringStats a = center_kernel(lower, lower_sums);
          const CenteringStats b = center_kernel(full, full_sums);
          const Comparison centered = compare_stored(lower, full);
          double means = std::abs(a.grand_mean - b.grand_mean), scale = std::abs(b.grand_mean);
          for (std::size_t i = 0; i < a.row_means.size(); ++i) {
            means = std::max({means, std::abs(a.row_means[i] - b.row_means[i]),
                              std::abs(a.col_means[i] - b.col_means[i])});
            scale = std::max(scale, std::abs(b.row_means[i]));
          }
          // Sums of n entries in another order: n eps of the largest sum.
          const double tol = 4 * n * 2.2e-16 * std::max(scale, 1.0);
          EXPECT_TRUE(all_ranks(world, means <= tol && centered.largest <= 1e-13 + 3 * tol &&
                                           centered.above_untouched))
              << what << ": means off by " << means << ", entries by " << centered.largest;
          EXPECT_NEAR(a.frobenius_norm, b.frobenius_norm, 1e-13 * b.frobenius_norm) << what;
          EXPECT_NEAR(frobenius_norm(lower), frobenius_norm(full), 1e-13 * b.frobenius_norm)
              << what;
          EXPECT_NEAR(lower_trace, full_trace, 1e-13 * std::max(1.0, std::abs(full_trace))) << what;
        }
    }
  }
}

TEST(LowerStorage, DistancesAndTwoPassCenteringMatchFullStorage) {
  // MDS from points: the distances of the tiled metrics in lower blocks, and
  // centering with its own sums pass (kernel_means), against full storage.
  const Comm world = Comm::world();
  const int n = 150, d = 3;
  const auto x = test::random_data(n, d, 21);
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    for (int nb : {5, 64})
      for (Metric metric : {Metric::euclidean, Metric::sqeuclidean, Metric::cosine})
        for (bool packed : kLayouts) {
          auto [lower, full, rows, cols] = assembly_pair<double>(grid, n, nb, packed, x, d);
          assemble_distances(metric, rows, cols, d, lower);
          assemble_distances(metric, rows, cols, d, full);
          const std::string what = metric_name(metric) + " grid " + std::to_string(p) + "x" +
                                   std::to_string(q) + " nb " + std::to_string(nb) +
                                   layout_name(packed);
          const Comparison assembled = compare_stored(lower, full);
          EXPECT_TRUE(all_ranks(world, assembled.largest <= 1e-13 && assembled.above_untouched))
              << what << ": distances off by " << assembled.largest;
          const CenteringStats a = center_kernel(lower), b = center_kernel(full);
          const Comparison centered = compare_stored(lower, full);
          double means = std::abs(a.grand_mean - b.grand_mean);
          for (std::size_t i = 0; i < a.row_means.size(); ++i)
            means = std::max({means, std::abs(a.row_means[i] - b.row_means[i]),
                              std::abs(a.col_means[i] - b.col_means[i])});
          EXPECT_TRUE(all_ranks(
              world, means <= 1e-13 && centered.largest <= 1e-13 && centered.above_untouched))
              << what << ": means off by " << means << ", entries by " << centered.largest;
          EXPECT_NEAR(a.frobenius_norm, b.frobenius_norm, 1e-13 * b.frobenius_norm) << what;
        }
  }
}

TEST(LowerStorage, SinglePrecisionAssemblyInSlabsMatchesFullStorage) {
  // Float storage is assembled in double slabs of columns; with small slabs
  // (several per matrix) each slab must compute and store exactly the rows of
  // its columns' lower blocks. The rounded entries, the sums and the
  // centered result are full storage's within float's rounding; the blocks
  // above stay NaN.
  const Comm world = Comm::world();
  const int n = 301, d = 5;
  const auto x = test::random_data(n, d, 8);
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    for (int nb : {4, 32})
      for (KernelType type : {KernelType::rbf, KernelType::poly})
        for (bool packed : kLayouts) {
          const Kernel kernel = test::test_kernel(type);
          auto [lower, full, rows, cols] = assembly_pair<float>(grid, n, nb, packed, x, d);
          LocalSums lower_sums, full_sums;
          const std::int64_t slab = 3 * std::int64_t{nb} * n;  // a few block columns per slab
          assemble_kernel(kernel, rows, cols, d, lower, lower_sums, slab);
          assemble_kernel(kernel, rows, cols, d, full, full_sums, slab);
          const CenteringStats a = center_kernel(lower, lower_sums);
          const CenteringStats b = center_kernel(full, full_sums);
          double largest = 0, scale = 0, means = 0;
          bool above_untouched = true;
          for (int lj = 0; lj < lower.local_cols(); ++lj)
            for (int li = packed ? lower.stored_from(lj) : 0; li < lower.local_rows(); ++li) {
              if (li < lower.stored_from(lj)) {
                above_untouched &= std::isnan(lower.column(lj)[li]);
                continue;
              }
              const double diff = std::abs(double(lower.local(li, lj)) - full.local(li, lj));
              largest = std::isnan(diff) ? INFINITY : std::max(largest, diff);
              scale = std::max(scale, std::abs(double(full.local(li, lj))));
            }
          for (std::size_t i = 0; i < a.row_means.size(); ++i)
            means = std::max(means, std::abs(a.row_means[i] - b.row_means[i]));
          // Each entry is rounded once to float after centering in double.
          const std::string what = std::string(Kernel::name(type)) + " grid " + std::to_string(p) +
                                   "x" + std::to_string(q) + " nb " + std::to_string(nb) +
                                   layout_name(packed);
          EXPECT_TRUE(all_ranks(world, above_untouched)) << what << ": wrote above the diagonal";
          EXPECT_TRUE(all_ranks(world, largest <= 2 * 6e-8 * std::max(scale, 1.0) &&
                                           means <= 1e-12 * std::max(1.0, std::abs(b.grand_mean))))
              << what << ": entries off by " << largest << ", means by " << means;
          EXPECT_NEAR(a.frobenius_norm, b.frobenius_norm, 1e-6 * b.frobenius_norm) << what;
        }
  }
}

TEST(LowerStorage, FrobeniusNormOfEntriesThatNeedScaling) {
  // Entries near 1e200 and 1e-200 take the scaled second pass, which must
  // weigh the blocks below the diagonal twice as the first pass does.
  const Comm world = Comm::world();
  const int n = 45, nb = 4;
  const auto values = symmetric(n, 9);
  for (double scale : {1.0, 1e200, 1e-200}) {
    long double squares = 0;
    for (double v : values) squares += (long double)v * v;
    const double reference = scale * std::sqrt(static_cast<double>(squares));
    for (auto [p, q] : grid_shapes(world.size()))
      for (bool packed : kLayouts) {
        BlacsGrid grid(world, p, q);
        const DistMatrix a = lower_matrix<double>(
            grid, n, nb, packed, [&](auto i, auto j) { return scale * values[j * n + i]; });
        EXPECT_NEAR(frobenius_norm(a), reference, 1e-13 * reference)
            << "scale " << scale << " grid " << p << "x" << q << layout_name(packed);
      }
  }
}

TEST(LowerStorage, BlockProductMatchesTheSerialProductOfTheSymmetricMatrix) {
  const Comm world = Comm::world();
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    BlacsGrid line(grid.comm(), grid.comm().size(), 1);
    for (int n : {1, 37, 100})
      for (int nb : {1, 8, 64})
        for (bool packed : kLayouts) {
          const auto full = symmetric(n, 7u + unsigned(n) + unsigned(nb));
          const auto value = [&](std::int64_t i, std::int64_t j) { return full[j * n + i]; };
          const DistMatrix a = lower_matrix<double>(grid, n, nb, packed, value);
          const SingleMatrix af = lower_matrix<float>(grid, n, nb, packed, value);
          BlockProduct product(a), product_float(af);
          for (int w : {1, 5, 24, 40}) {
            std::mt19937 gen(11u * unsigned(w) + unsigned(n));
            std::uniform_real_distribution<double> dist(-1, 1);
            std::vector<double> xfull(std::size_t(n) * w);
            for (double& v : xfull) v = dist(gen);
            DistMatrix x(line, n, w, nb, w), y(line, n, w, nb, w), yf(line, n, w, nb, w);
            ASSERT_EQ(x.local_rows(), product.line_rows());
            x.fill([&](std::int64_t i, std::int64_t j) { return xfull[j * n + i]; });
            product.apply(x.data(), x.ld(), w, y.data(), y.ld());
            product_float.apply(x.data(), x.ld(), w, yf.data(), yf.ld());
            const auto got = y.gather_to_root(), got_float = yf.gather_to_root();
            bool ok = true;
            if (world.is_root())
              for (int j = 0; j < w; ++j)
                for (int i = 0; i < n; ++i) {
                  // Serial loop over the whole symmetric matrix as the reference:
                  // double sums within n eps of sum |a x|; float sums of float
                  // products within (n + 2) u of it (u = 2^-24).
                  double s = 0, size = 0;
                  for (int t = 0; t < n; ++t) {
                    s += full[std::size_t(t) * n + i] * xfull[std::size_t(j) * n + t];
                    size += std::abs(full[std::size_t(t) * n + i] * xfull[std::size_t(j) * n + t]);
                  }
                  const std::size_t at = std::size_t(j) * n + i;
                  ok &= std::abs(got[at] - s) <= 4 * n * 2.2e-16 * std::max(size, 1e-300);
                  ok &= std::abs(got_float[at] - s) <= (n + 4) * 6e-8 * std::max(size, 1e-300);
                }
            EXPECT_TRUE(all_ranks(world, ok)) << "grid " << p << "x" << q << " n " << n << " nb "
                                              << nb << " w " << w << layout_name(packed);
          }
        }
  }
}

TEST(LowerStorage, KrylovMatchesSerialEigenvalues) {
  const Comm world = Comm::world();
  const int n = 150, k = 4;
  // A random symmetric matrix plus a rank-k spike, so the top k stand apart.
  auto values = symmetric(n, 3);
  const auto spike = test::random_data(k, n, 4);  // k rows of n
  for (int t = 0; t < k; ++t)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        values[std::size_t(j) * n + i] +=
            3.0 * (t + 1) * spike[std::size_t(t) * n + i] * spike[std::size_t(t) * n + j];
  test::Dense dense{n, values}, vectors;
  const auto ascending = test::serial_eigh(dense, vectors);
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    for (int nb : {8, 64})
      for (bool packed : kLayouts) {
        const DistMatrix a = lower_matrix<double>(
            grid, n, nb, packed, [&](std::int64_t i, std::int64_t j) { return values[j * n + i]; });
        const KrylovResult result = krylov_top_eigenpairs(a, k, KrylovSettings{});
        bool ok = result.converged;
        for (int t = 0; t < k; ++t)
          ok &= std::abs(result.values[t] - ascending[n - 1 - t]) <= 1e-10 * ascending[n - 1];
        EXPECT_TRUE(all_ranks(world, ok))
            << "grid " << p << "x" << q << " nb " << nb << layout_name(packed);
        KrylovSettings reference;
        reference.product = KrylovProduct::pdgemm;  // reads the whole matrix
        EXPECT_THROW(krylov_top_eigenpairs(a, k, reference), Error);
      }
  }
}

TEST(LowerStorage, KrylovThatDoesNotConvergeFallsBackToEvrOnTheLowerTriangle) {
  // pdsyevr is called with UPLO = 'L': the NaN above the diagonal blocks must
  // not reach the eigenvalues. A packed matrix is unpacked for it.
  const Comm world = Comm::world();
  const int n = 60, k = 2;
  const auto values = symmetric(n, 17);
  test::Dense dense{n, values}, vectors;
  const auto ascending = test::serial_eigh(dense, vectors);
  for (auto [p, q] : grid_shapes(world.size()))
    for (bool packed : kLayouts) {
      BlacsGrid grid(world, p, q);
      DistMatrix a = lower_matrix<double>(
          grid, n, 8, packed, [&](std::int64_t i, std::int64_t j) { return values[j * n + i]; });
      KrylovSettings settings;
      settings.block = 2;
      settings.depth = 2;
      settings.max_cycles = 1;  // cannot converge in one cycle
      const Eigenpairs pairs = top_eigenpairs(a, k, Solver::krylov, settings);
      bool ok = pairs.used == Solver::evr;
      for (int t = 0; t < k; ++t)
        ok &=
            std::abs(pairs.values[t] - ascending[n - 1 - t]) <= 1e-12 * std::abs(ascending[n - 1]);
      ok &= !a.packed();
      EXPECT_TRUE(all_ranks(world, ok))
          << "grid " << p << "x" << q << layout_name(packed) << ": " << pairs.note;

      // The same through the spectral step: evr overwrote the matrix, the
      // rebuild refills its stored blocks in ScaLAPACK's layout, and the
      // residuals come from the block product on that layout.
      const auto value = [&](std::int64_t i, std::int64_t j) { return values[j * n + i]; };
      DistMatrix b = lower_matrix<double>(grid, n, 8, packed, value);
      SpectralRequest request;
      request.k = k;
      request.solver = Solver::krylov;
      request.krylov = settings;
      request.rebuild = [&](DistMatrix& m) { m.fill(value); };
      PhaseTimer timer(world, Verbosity::quiet);
      const SpectralStep step = spectral_step(b, request, timer);
      bool step_ok = step.solver_used == "evr" && !b.packed();
      for (int t = 0; t < k; ++t)
        step_ok &=
            std::abs(step.values[t] - ascending[n - 1 - t]) <= 1e-12 * std::abs(ascending[n - 1]) &&
            step.residuals[t] <= 1e-13;
      for (int lj = 0; lj < b.local_cols(); ++lj)
        for (int li = b.stored_from(lj); li < b.local_rows(); ++li)
          step_ok &=
              b.local(li, lj) == value(b.row_dist().to_global(li), b.col_dist().to_global(lj));
      EXPECT_TRUE(all_ranks(world, step_ok)) << "spectral step, grid " << p << "x" << q
                                             << layout_name(packed) << ": " << step.solver_note;
    }
}

TEST(LowerStorage, MemoryPlanCountsTheStoredBlocks) {
  // The plan's matrix item is what process (0, 0) stores, counted here from
  // its stored rows.
  const Comm world = Comm::world();
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    for (auto [n, nb] : {std::pair{1000, 64}, std::pair{999, 7}, std::pair{5, 64}}) {
      DistMatrix a(grid, n, n, nb, nb);
      a.set_storage(Storage::lower_blocks);
      double stored = 0;
      for (int lj = 0; lj < a.local_cols(); ++lj) stored += a.local_rows() - a.stored_from(lj);
      ProblemShape shape{n, 4, 3, p, q, nb, Solver::krylov};
      shape.lower_storage = true;
      double planned = -1;
      for (const auto& [what, bytes] : plan_memory(shape).items)
        if (what.find("n x n matrix") != std::string::npos) planned = bytes / 8;
      if (grid.myrow() == 0 && grid.mycol() == 0) {
        EXPECT_EQ(planned, stored) << "grid " << p << "x" << q << " n " << n << " nb " << nb;
      }
    }
  }
}

TEST(LowerStorage, MemoryPlanCountsTheProductBuffers) {
  // The plan's "block product buffers" on process (0, 0) against what a
  // BlockProduct there holds after a product of the solver's width, for
  // either storage and precision. With the whole matrix the plan also counts
  // the transient copy of X gathered along the process column.
  const Comm world = Comm::world();
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    for (auto [n, nb] : {std::pair{1000, 64}, std::pair{999, 7}, std::pair{30, 64}})
      for (bool lower : {true, false})
        for (bool single : {false, true}) {
          const int k = 3, b = krylov_block_width(k, KrylovSettings{});
          ProblemShape shape{n, 4, k, p, q, nb, Solver::krylov};
          shape.lower_storage = lower;
          shape.single_precision = single;
          double planned = -1;
          for (const auto& [what, bytes] : plan_memory(shape).items)
            if (what == "block product buffers") planned = bytes;
          const auto held = [&](const auto& a) {
            BlockProduct product(a);
            const int rows = product.line_rows();
            std::vector<double> x(std::size_t(std::max(rows, 1)) * b, 1.0), y(x.size());
            product.apply(x.data(), std::max(rows, 1), b, y.data(), std::max(rows, 1));
            return static_cast<double>(product.held_bytes());
          };
          DistMatrix ad(grid, n, n, nb, nb);
          SingleMatrix af(grid, n, n, nb, nb);
          ad.fill([](std::int64_t, std::int64_t) { return 0.0; });
          af.fill([](std::int64_t, std::int64_t) { return 0.0f; });
          if (lower) ad.set_storage(Storage::lower_blocks), af.set_storage(Storage::lower_blocks);
          const double actual = single ? held(af) : held(ad);
          const double transient =
              lower ? 0 : double(af.local_cols()) * b * (single ? sizeof(float) : sizeof(double));
          if (grid.myrow() == 0 && grid.mycol() == 0) {
            EXPECT_EQ(planned, actual + transient)
                << "grid " << p << "x" << q << " n " << n << " nb " << nb << " lower " << lower
                << " single " << single;
          }
        }
  }
}
