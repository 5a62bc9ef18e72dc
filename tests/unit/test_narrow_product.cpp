// The narrow product C = A B against a long double evaluation of each entry,
// within the bound of any order of summation, at every instruction set this
// CPU has: tall and short A, widths below, at and between multiples of the
// 12-column tiles, row counts around multiples of the 16-row tiles, k around
// the sweeps (32 and 64 columns), and leading dimensions larger than the rows; in
// double and in float. And the AVX-512 kernel's order of summation, bit for
// bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kembed/linalg/narrow_product.hpp"
#include "test_support.hpp"

using namespace kembed;

namespace {

template <class T>
void check_summation_bound() {
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> value(-1, 1);
  const T sentinel = 12345;  // in the rows of C beyond m: must stay
  const long double eps = std::numeric_limits<T>::epsilon();
  for (SimdLevel level : kembed::test::supported_simd_levels())
    for (int m : {1, 15, 16, 17, 33, 47, 200})
      for (int n : {1, 5, 12, 13, 24, 25, 40})
        for (int k : {0, 1, 31, 32, 33, 64, 65, 70}) {
          const int lda = m + 3, ldb = k + 2, ldc = m + 5;
          std::vector<T> a(std::size_t(lda) * std::max(k, 1)), b(std::size_t(ldb) * n);
          for (T& v : a) v = T(value(gen));
          for (T& v : b) v = T(value(gen));
          std::vector<T> c(std::size_t(ldc) * n, sentinel);
          for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j)
              c[std::size_t(j) * ldc + i] = std::numeric_limits<T>::quiet_NaN();
          narrow_product(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc, level);
          long double worst = 0;  // |error| / bound, over C
          bool padding_kept = true;
          for (int j = 0; j < n; ++j) {
            for (int i = 0; i < m; ++i) {
              long double exact = 0, magnitude = 0;
              for (int t = 0; t < k; ++t) {
                const long double p =
                    (long double)a[std::size_t(t) * lda + i] * b[std::size_t(j) * ldb + t];
                exact += p;
                magnitude += std::fabs(p);
              }
              // Any order of k products summed in T (with or without fused
              // multiply-adds): |error| <= k eps sum |a||b| to first order.
              const long double bound = (k + 1) * eps * magnitude + std::numeric_limits<T>::min();
              const long double error = std::fabs(c[std::size_t(j) * ldc + i] - exact);
              worst = std::max(worst, std::isnan(error) ? INFINITY : error / bound);
            }
            for (int i = m; i < ldc; ++i) padding_kept &= c[std::size_t(j) * ldc + i] == sentinel;
          }
          EXPECT_LE(worst, 1.0L) << simd_level_name(level) << " bytes " << sizeof(T) << " m " << m
                                 << " n " << n << " k " << k;
          EXPECT_TRUE(padding_kept) << simd_level_name(level) << " bytes " << sizeof(T) << " m "
                                    << m << " n " << n << " k " << k;
        }
}

}  // namespace

// C^T += A^T B with B and C^T by rows (lower-block storage's mirror
// product) and C += A B (narrow_product_add), against long double sums
// added to the values C held, at every instruction set; the padding past
// each row of C^T (and past the rows of C) stays as it was.
template <class T>
void check_products_that_add() {
  std::mt19937_64 gen(11);
  std::uniform_real_distribution<double> value(-1, 1);
  const T sentinel = 12345;
  const long double eps = std::numeric_limits<T>::epsilon();
  for (SimdLevel level : kembed::test::supported_simd_levels())
    for (int m : {0, 1, 7, 64, 200})
      for (int n : {1, 5, 8, 16, 23, 24, 25, 40, 49})
        for (int k : {1, 3, 8, 15, 64}) {
          const int lda = m + 3, ldbt = n + 2, ldct = n + 5;
          std::vector<T> a(std::size_t(lda) * k), bt(std::size_t(ldbt) * std::max(m, 1));
          for (T& v : a) v = T(value(gen));
          for (T& v : bt) v = T(value(gen));
          std::vector<T> ct(std::size_t(ldct) * k, sentinel), before(ct.size());
          for (int c = 0; c < k; ++c)
            for (int j = 0; j < n; ++j) ct[std::size_t(c) * ldct + j] = T(value(gen));
          before = ct;
          narrow_product_transposed_add(m, n, k, a.data(), lda, bt.data(), ldbt, ct.data(), ldct,
                                        level);
          long double worst = 0;
          bool padding_kept = true;
          for (int c = 0; c < k; ++c) {
            for (int j = 0; j < n; ++j) {
              const long double start = before[std::size_t(c) * ldct + j];
              long double exact = start, magnitude = std::fabs(start);
              for (int r = 0; r < m; ++r) {
                const long double p =
                    (long double)a[std::size_t(c) * lda + r] * bt[std::size_t(r) * ldbt + j];
                exact += p;
                magnitude += std::fabs(p);
              }
              const long double bound = (m + 2) * eps * magnitude + std::numeric_limits<T>::min();
              const long double error = std::fabs(ct[std::size_t(c) * ldct + j] - exact);
              worst = std::max(worst, std::isnan(error) ? INFINITY : error / bound);
            }
            for (int j = n; j < ldct; ++j) padding_kept &= ct[std::size_t(c) * ldct + j] == sentinel;
          }
          EXPECT_LE(worst, 1.0L) << "transposed " << simd_level_name(level) << " bytes "
                                 << sizeof(T) << " m " << m << " n " << n << " k " << k;
          EXPECT_TRUE(padding_kept) << "transposed " << simd_level_name(level) << " m " << m
                                    << " n " << n << " k " << k;
        }
  for (SimdLevel level : kembed::test::supported_simd_levels())
    for (int m : {1, 16, 17, 47})
      for (int n : {1, 12, 13, 24})
        for (int k : {1, 64, 70}) {
          const int lda = m + 1, ldb = k, ldc = m + 2;
          std::vector<T> a(std::size_t(lda) * k), b(std::size_t(ldb) * n);
          for (T& v : a) v = T(value(gen));
          for (T& v : b) v = T(value(gen));
          std::vector<T> c(std::size_t(ldc) * n, sentinel);
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) c[std::size_t(j) * ldc + i] = T(value(gen));
          const std::vector<T> before = c;
          narrow_product(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc, level, true);
          long double worst = 0;
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) {
              long double exact = before[std::size_t(j) * ldc + i], magnitude = std::fabs(exact);
              for (int t = 0; t < k; ++t) {
                const long double p =
                    (long double)a[std::size_t(t) * lda + i] * b[std::size_t(j) * ldb + t];
                exact += p;
                magnitude += std::fabs(p);
              }
              const long double bound = (k + 2) * eps * magnitude;
              worst = std::max(worst, std::fabs(c[std::size_t(j) * ldc + i] - exact) / bound);
            }
          EXPECT_LE(worst, 1.0L) << "add " << simd_level_name(level) << " bytes " << sizeof(T)
                                 << " m " << m << " n " << n << " k " << k;
        }
}

TEST(NarrowProduct, ProductsThatAddWithinTheSummationBound) {
  check_products_that_add<double>();
  check_products_that_add<float>();
}

TEST(NarrowProduct, EveryEntryWithinTheSummationBound) {
  check_summation_bound<double>();
  check_summation_bound<float>();
}

template <class T>
void check_order_of_summation() {
  // The documented order, emulated one entry at a time with std::fma: blocks
  // of narrow_product_sweep<T> terms, each a chain from zero, added in order. The
  // tiled rows must match it bit for bit (so they depend neither on the
  // width nor on the row's position); the rows below the last full tile are
  // dgemm's and only within the bound of the test above.
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<double> value(-1, 1);
  const int m = 3 * 32 + 5, n = 13, k = 2 * narrow_product_sweep<T> + 6;
  const int tiled = m / (sizeof(T) == 8 ? 16 : 32) * (sizeof(T) == 8 ? 16 : 32);
  std::vector<T> a(std::size_t(m) * k), b(std::size_t(k) * n), c(std::size_t(m) * n);
  for (T& v : a) v = T(value(gen));
  for (T& v : b) v = T(value(gen));
  narrow_product(m, n, k, a.data(), m, b.data(), k, c.data(), m, SimdLevel::avx512);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < tiled; ++i) {
      T total = 0;
      for (int t0 = 0; t0 < k; t0 += narrow_product_sweep<T>) {
        T block = 0;
        for (int t = t0; t < std::min(k, t0 + narrow_product_sweep<T>); ++t)
          block = std::fma(a[std::size_t(t) * m + i], b[std::size_t(j) * k + t], block);
        total = t0 == 0 ? block : total + block;
      }
      ASSERT_EQ(c[std::size_t(j) * m + i], total)
          << "bytes " << sizeof(T) << " row " << i << " column " << j;
    }
}

TEST(NarrowProduct, TiledEntriesAreTheDocumentedBlockedSums) {
  if (best_simd_level() != SimdLevel::avx512) GTEST_SKIP() << "no AVX-512 on this CPU";
  check_order_of_summation<double>();
  check_order_of_summation<float>();
}
