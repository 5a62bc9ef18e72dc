#include "kembed/linalg/narrow_product.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "kembed/linalg/lapack.hpp"

namespace kembed {

namespace {

#define KEMBED_AVX512 __attribute__((target("avx512f"), always_inline)) inline

// One AVX-512 register of T: 8 doubles or 16 floats.
template <class T>
struct Lanes;

template <>
struct Lanes<double> {
  using Vector = __m512d;
  static constexpr int count = 8;
  static KEMBED_AVX512 Vector zero() { return _mm512_setzero_pd(); }
  static KEMBED_AVX512 Vector load(const double* p) { return _mm512_loadu_pd(p); }
  static KEMBED_AVX512 Vector load(const double* p, int count) {
    return _mm512_maskz_loadu_pd(static_cast<__mmask8>((1u << count) - 1), p);
  }
  static KEMBED_AVX512 void store(double* p, Vector v, int count) {
    _mm512_mask_storeu_pd(p, static_cast<__mmask8>((1u << count) - 1), v);
  }
  static KEMBED_AVX512 Vector broadcast(double v) { return _mm512_set1_pd(v); }
  static KEMBED_AVX512 Vector fma(Vector a, Vector b, Vector c) { return _mm512_fmadd_pd(a, b, c); }
  static KEMBED_AVX512 Vector add(Vector a, Vector b) { return _mm512_add_pd(a, b); }
  static KEMBED_AVX512 void store(double* p, Vector v) { _mm512_storeu_pd(p, v); }
};

template <>
struct Lanes<float> {
  using Vector = __m512;
  static constexpr int count = 16;
  static KEMBED_AVX512 Vector zero() { return _mm512_setzero_ps(); }
  static KEMBED_AVX512 Vector load(const float* p) { return _mm512_loadu_ps(p); }
  static KEMBED_AVX512 Vector load(const float* p, int count) {
    return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << count) - 1), p);
  }
  static KEMBED_AVX512 void store(float* p, Vector v, int count) {
    _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << count) - 1), v);
  }
  static KEMBED_AVX512 Vector broadcast(float v) { return _mm512_set1_ps(v); }
  static KEMBED_AVX512 Vector fma(Vector a, Vector b, Vector c) { return _mm512_fmadd_ps(a, b, c); }
  static KEMBED_AVX512 Vector add(Vector a, Vector b) { return _mm512_add_ps(a, b); }
  static KEMBED_AVX512 void store(float* p, Vector v) { _mm512_storeu_ps(p, v); }
};

constexpr int kColumns = 12;  // columns of C per register tile: 24 accumulators
// Columns of A per sweep down the rows (narrow_product_sweep): each is a
// stream the prefetcher follows, and C's tiles are reloaded once per sweep.
// Each sweep's sum starts from zero and is then added to C (blocked
// summation): with one chain over all of k instead, single precision's
// eigenvalues moved 1.7e-8 from double's at n = 16000, against 1.3e-9 with
// sgemm.
// Distance of the software prefetch down each column of A: six cache lines
// (384 bytes, three tiles of double rows) ahead. Measured in double: 256-512
// bytes best; 1 KB and beyond 10-30% slower.
constexpr int kPrefetchBytes = 384;

// Rows of C per register tile: two vectors.
template <class T>
constexpr int tile_rows() {
  return 2 * Lanes<T>::count;
}

// out[0:rows, 0:12 groups) <- A[0:rows, :] bt, rows a multiple of
// tile_rows<T>(), where bt is B transposed and padded with zero columns: k
// rows of `width` = 12 groups entries.
template <class T>
__attribute__((target("avx512f"))) void tiles_avx512(int rows, int k, const T* a, std::size_t lda,
                                                     const T* bt, int groups, T* out,
                                                     std::size_t ldo, bool add) {
  using L = Lanes<T>;
  constexpr int lanes = L::count, prefetch = kPrefetchBytes / int(sizeof(T));
  constexpr int sweep = narrow_product_sweep<T>;
  const int width = groups * kColumns;
  for (int k0 = 0; k0 < k; k0 += sweep) {
    const int k1 = std::min(k, k0 + sweep);
    for (int i0 = 0; i0 < rows; i0 += tile_rows<T>())
      for (int g = 0; g < groups; ++g) {
        T* c = out + std::size_t(g) * kColumns * ldo + i0;
        typename L::Vector top[kColumns], bottom[kColumns];
        for (int j = 0; j < kColumns; ++j) top[j] = bottom[j] = L::zero();
        const T* column = a + std::size_t(k0) * lda + i0;
        const T* row = bt + std::size_t(k0) * width + g * kColumns;
        for (int kk = k0; kk < k1; ++kk, column += lda, row += width) {
          if (g == 0) {  // the other groups find these lines in cache
            _mm_prefetch(reinterpret_cast<const char*>(column + prefetch), _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(column + prefetch + lanes), _MM_HINT_T0);
          }
          const auto x = L::load(column), y = L::load(column + lanes);
#pragma GCC unroll 12
          for (int j = 0; j < kColumns; ++j) {
            const auto b = L::broadcast(row[j]);
            top[j] = L::fma(x, b, top[j]);
            bottom[j] = L::fma(y, b, bottom[j]);
          }
        }
        for (int j = 0; j < kColumns; ++j) {
          if (k0 > 0 || add) {
            top[j] = L::add(L::load(c + j * ldo), top[j]);
            bottom[j] = L::add(L::load(c + j * ldo + lanes), bottom[j]);
          }
          L::store(c + j * ldo, top[j]);
          L::store(c + j * ldo + lanes, bottom[j]);
        }
      }
  }
}

template <class T>
void product(int m, int n, int k, const T* a, int lda, const T* b, int ldb, T* c, int ldc,
             SimdLevel level, bool add) {
  if (m <= 0 || n <= 0) return;
  const int tiled = level == SimdLevel::avx512 && k > 0 ? m / tile_rows<T>() * tile_rows<T>() : 0;
  if (tiled > 0) {
    const int groups = (n + kColumns - 1) / kColumns, width = groups * kColumns;
    std::vector<T> bt(std::size_t(k) * width, T(0));
    for (int j = 0; j < n; ++j)
      for (int kk = 0; kk < k; ++kk) bt[std::size_t(kk) * width + j] = b[std::size_t(j) * ldb + kk];
    if (width == n) {
      tiles_avx512(tiled, k, a, std::size_t(lda), bt.data(), groups, c, std::size_t(ldc), add);
    } else {  // the padding columns land in a scratch block
      std::vector<T> out(std::size_t(tiled) * width);
      if (add)
        for (int j = 0; j < n; ++j)
          std::copy_n(c + std::size_t(j) * ldc, tiled, &out[std::size_t(j) * tiled]);
      tiles_avx512(tiled, k, a, std::size_t(lda), bt.data(), groups, out.data(), std::size_t(tiled),
                   add);
      for (int j = 0; j < n; ++j)
        std::copy_n(&out[std::size_t(j) * tiled], tiled, c + std::size_t(j) * ldc);
    }
  }
  if (tiled < m)
    lapack::gemm('N', 'N', m - tiled, n, k, T(1), a + tiled, lda, b, ldb, T(add ? 1 : 0), c + tiled,
                 ldc);
}

// The transposed product's register tile: C columns of A (rows of C^T) by
// V vectors of lanes across the n columns of B. Each row r of A and B adds
// a_rc b_r to row c of C^T: one broadcast of a_rc, V fused multiply-adds.
template <class T, int C, int V>
__attribute__((target("avx512f"))) void transposed_tile(int m, const T* a, std::size_t lda,
                                                        const T* bt, std::size_t ldbt, T* ct,
                                                        std::size_t ldct, int last) {
  using L = Lanes<T>;
  constexpr int lanes = L::count;
  // Every loop over c and v unrolled: the sums stay in registers (with a
  // loop left, GCC keeps them in memory and stores them every row).
  typename L::Vector sum[C][V];
#pragma GCC unroll 8
  for (int c = 0; c < C; ++c)
#pragma GCC unroll 3
    for (int v = 0; v < V; ++v) sum[c][v] = L::zero();
  for (int r = 0; r < m; ++r) {
    const T* row = bt + std::size_t(r) * ldbt;
    typename L::Vector x[V];
#pragma GCC unroll 3
    for (int v = 0; v < V; ++v)
      x[v] = v + 1 < V ? L::load(row + v * lanes) : L::load(row + v * lanes, last);
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) {
      const auto s = L::broadcast(a[std::size_t(c) * lda + r]);
#pragma GCC unroll 3
      for (int v = 0; v < V; ++v) sum[c][v] = L::fma(x[v], s, sum[c][v]);
    }
  }
#pragma GCC unroll 8
  for (int c = 0; c < C; ++c)
#pragma GCC unroll 3
    for (int v = 0; v < V; ++v) {
      T* to = ct + std::size_t(c) * ldct + v * lanes;
      const int count = v + 1 < V ? lanes : last;
      L::store(to, L::add(L::load(to, count), sum[c][v]), count);
    }
}

// Columns of A in groups of 8, 4, 2, 1 for one band of V vectors of C^T.
template <class T, int V>
void transposed_band(int m, int k, const T* a, std::size_t lda, const T* bt, std::size_t ldbt,
                     T* ct, std::size_t ldct, int last) {
  int c = 0;
  const auto group = [&](auto columns) {
    constexpr int C = decltype(columns)::value;
    for (; c + C <= k; c += C)
      transposed_tile<T, C, V>(m, a + std::size_t(c) * lda, lda, bt, ldbt,
                               ct + std::size_t(c) * ldct, ldct, last);
  };
  group(std::integral_constant<int, 8>{});
  group(std::integral_constant<int, 4>{});
  group(std::integral_constant<int, 2>{});
  group(std::integral_constant<int, 1>{});
}

template <class T>
void transposed_product(int m, int n, int k, const T* a, int lda, const T* bt, int ldbt, T* ct,
                        int ldct, SimdLevel level) {
  if (k <= 0 || n <= 0 || m <= 0) return;
  if (level != SimdLevel::avx512) {
    // C^T (n x k, column-major with ldct) += B^T (bt, n x m) A.
    lapack::gemm('N', 'N', n, k, m, T(1), bt, ldbt, a, lda, T(1), ct, ldct);
    return;
  }
  constexpr int lanes = Lanes<T>::count, band = 3 * lanes;
  for (int j = 0; j < n; j += band) {
    const int width = std::min(band, n - j), vectors = (width + lanes - 1) / lanes;
    const int last = width - (vectors - 1) * lanes;
    const T* b = bt + j;
    T* c = ct + j;
    if (vectors == 3) transposed_band<T, 3>(m, k, a, lda, b, ldbt, c, ldct, last);
    if (vectors == 2) transposed_band<T, 2>(m, k, a, lda, b, ldbt, c, ldct, last);
    if (vectors == 1) transposed_band<T, 1>(m, k, a, lda, b, ldbt, c, ldct, last);
  }
}

}  // namespace

void narrow_product_transposed_add(int m, int n, int k, const double* a, int lda, const double* bt,
                                   int ldbt, double* ct, int ldct, SimdLevel level) {
  transposed_product(m, n, k, a, lda, bt, ldbt, ct, ldct, level);
}

void narrow_product_transposed_add(int m, int n, int k, const float* a, int lda, const float* bt,
                                   int ldbt, float* ct, int ldct, SimdLevel level) {
  transposed_product(m, n, k, a, lda, bt, ldbt, ct, ldct, level);
}

void narrow_product_transposed_add(int m, int n, int k, const double* a, int lda, const double* bt,
                                   int ldbt, double* ct, int ldct) {
  transposed_product(m, n, k, a, lda, bt, ldbt, ct, ldct, best_simd_level());
}

void narrow_product_transposed_add(int m, int n, int k, const float* a, int lda, const float* bt,
                                   int ldbt, float* ct, int ldct) {
  transposed_product(m, n, k, a, lda, bt, ldbt, ct, ldct, best_simd_level());
}

void narrow_product(int m, int n, int k, const double* a, int lda, const double* b, int ldb,
                    double* c, int ldc, SimdLevel level, bool add) {
  product(m, n, k, a, lda, b, ldb, c, ldc, level, add);
}

void narrow_product(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                    int ldc, SimdLevel level, bool add) {
  product(m, n, k, a, lda, b, ldb, c, ldc, level, add);
}

void narrow_product(int m, int n, int k, const double* a, int lda, const double* b, int ldb,
                    double* c, int ldc) {
  product(m, n, k, a, lda, b, ldb, c, ldc, best_simd_level(), false);
}

void narrow_product(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                    int ldc) {
  product(m, n, k, a, lda, b, ldb, c, ldc, best_simd_level(), false);
}

void narrow_product_add(int m, int n, int k, const double* a, int lda, const double* b, int ldb,
                        double* c, int ldc) {
  product(m, n, k, a, lda, b, ldb, c, ldc, best_simd_level(), true);
}

void narrow_product_add(int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                        float* c, int ldc) {
  product(m, n, k, a, lda, b, ldb, c, ldc, best_simd_level(), true);
}

}  // namespace kembed
