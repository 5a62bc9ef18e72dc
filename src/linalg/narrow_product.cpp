#include "kembed/linalg/narrow_product.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "kembed/linalg/lapack.hpp"

namespace kembed {

namespace {

constexpr int kRows = 16;     // rows of C per register tile: two 8-lane vectors
constexpr int kColumns = 12;  // columns of C per register tile: 24 accumulators
// Columns of A per sweep down the rows: each is a stream the prefetcher
// follows, and C's tiles are reloaded once per sweep. Measured: 16-64 within
// 5% at n = 16000 and 32000; fewer streams lose bandwidth, more lose the
// prefetcher.
constexpr int kSweep = 32;
// Distance of the software prefetch down each column of A: 48 doubles, six
// cache lines (3 tiles) ahead. Measured: 32-64 best, 128 and beyond 10-30%
// slower.
constexpr int kPrefetch = 48;

// out[0:m16, 0:12 groups) <- A[0:m16, :] bt, where bt is B transposed and
// padded with zero columns: k rows of `width` = 12 groups entries.
__attribute__((target("avx512f"))) void tiles_avx512(int m16, int k, const double* a,
                                                     std::size_t lda, const double* bt, int groups,
                                                     double* out, std::size_t ldo) {
  const int width = groups * kColumns;
  for (int k0 = 0; k0 < k; k0 += kSweep) {
    const int k1 = std::min(k, k0 + kSweep);
    for (int i0 = 0; i0 < m16; i0 += kRows)
      for (int g = 0; g < groups; ++g) {
        double* c = out + std::size_t(g) * kColumns * ldo + i0;
        __m512d top[kColumns], bottom[kColumns];
        for (int j = 0; j < kColumns; ++j) {
          top[j] = k0 == 0 ? _mm512_setzero_pd() : _mm512_loadu_pd(c + j * ldo);
          bottom[j] = k0 == 0 ? _mm512_setzero_pd() : _mm512_loadu_pd(c + j * ldo + 8);
        }
        const double* column = a + std::size_t(k0) * lda + i0;
        const double* row = bt + std::size_t(k0) * width + g * kColumns;
        for (int kk = k0; kk < k1; ++kk, column += lda, row += width) {
          if (g == 0) {  // the other groups find these lines in cache
            _mm_prefetch(reinterpret_cast<const char*>(column + kPrefetch), _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(column + kPrefetch + 8), _MM_HINT_T0);
          }
          const __m512d x = _mm512_loadu_pd(column), y = _mm512_loadu_pd(column + 8);
#pragma GCC unroll 12
          for (int j = 0; j < kColumns; ++j) {
            const __m512d b = _mm512_set1_pd(row[j]);
            top[j] = _mm512_fmadd_pd(x, b, top[j]);
            bottom[j] = _mm512_fmadd_pd(y, b, bottom[j]);
          }
        }
        for (int j = 0; j < kColumns; ++j) {
          _mm512_storeu_pd(c + j * ldo, top[j]);
          _mm512_storeu_pd(c + j * ldo + 8, bottom[j]);
        }
      }
  }
}

}  // namespace

void narrow_product(int m, int n, int k, const double* a, int lda, const double* b, int ldb,
                    double* c, int ldc, SimdLevel level) {
  if (m <= 0 || n <= 0) return;
  const int m16 = level == SimdLevel::avx512 && k > 0 ? m / kRows * kRows : 0;
  if (m16 > 0) {
    const int groups = (n + kColumns - 1) / kColumns, width = groups * kColumns;
    std::vector<double> bt(std::size_t(k) * width, 0.0);
    for (int j = 0; j < n; ++j)
      for (int kk = 0; kk < k; ++kk) bt[std::size_t(kk) * width + j] = b[std::size_t(j) * ldb + kk];
    if (width == n) {
      tiles_avx512(m16, k, a, std::size_t(lda), bt.data(), groups, c, std::size_t(ldc));
    } else {  // the padding columns land in a scratch block
      std::vector<double> out(std::size_t(m16) * width);
      tiles_avx512(m16, k, a, std::size_t(lda), bt.data(), groups, out.data(), std::size_t(m16));
      for (int j = 0; j < n; ++j)
        std::copy_n(&out[std::size_t(j) * m16], m16, c + std::size_t(j) * ldc);
    }
  }
  if (m16 < m) lapack::gemm('N', 'N', m - m16, n, k, 1.0, a + m16, lda, b, ldb, 0.0, c + m16, ldc);
}

void narrow_product(int m, int n, int k, const double* a, int lda, const double* b, int ldb,
                    double* c, int ldc) {
  narrow_product(m, n, k, a, lda, b, ldb, c, ldc, best_simd_level());
}

}  // namespace kembed
