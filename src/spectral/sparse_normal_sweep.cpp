#include "kembed/spectral/sparse_normal_sweep.hpp"

#include <algorithm>
#include <array>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define KEMBED_X86_DISPATCH 1
#endif

namespace kembed::spectral {

namespace {

// Row i of B_r V = D_a X_r D_b V - a (b^T V) into `row`, for the d x w
// row-major V and beta = b^T V. W is w when it is known at compile time
// (the row stays in registers and the loops vectorize), else 0.
template <std::size_t W>
void csr_row_times(const io::CsrRows& x, const NormalFactors& f, std::int64_t i, const double* v,
                   std::size_t w, const double* beta, double* row) {
  const std::size_t n = W ? W : w;
  std::fill_n(row, n, 0.0);
  for (std::int64_t e = x.offsets[i]; e < x.offsets[i + 1]; ++e) {
    const std::size_t j = static_cast<std::size_t>(x.columns[e]);
    const double a = x.values[e] * f.col_scale[j];
    const double* vj = v + j * n;
    for (std::size_t c = 0; c < n; ++c) row[c] += a * vj[c];
  }
  const double scale = f.row_scale[std::size_t(i)];
  const double a = f.row_shift[std::size_t(i)];
  for (std::size_t c = 0; c < n; ++c) row[c] = scale * row[c] - a * beta[c];
}

// The portable sweep (normal_sweep's contract).
template <std::size_t W>
void portable_sweep(const io::CsrRows& x, const NormalFactors& f, const double* v, std::size_t w,
                    const double* beta, double* u, double* gamma) {
  const std::size_t n = W ? W : w;
  std::array<double, W ? W : 1> fixed{};
  std::vector<double> sized(W ? 0 : w);
  double* t = W ? fixed.data() : sized.data();
  for (std::int64_t i = 0; i < x.local_rows(); ++i) {
    csr_row_times<W>(x, f, i, v, w, beta, t);
    const double a = f.row_shift[std::size_t(i)];
    const double scale = f.row_scale[std::size_t(i)];
    for (std::size_t c = 0; c < n; ++c) {
      gamma[c] += a * t[c];
      t[c] *= scale;
    }
    for (std::int64_t e = x.offsets[i]; e < x.offsets[i + 1]; ++e) {
      const double value = x.values[e];
      double* uj = u + std::size_t(x.columns[e]) * n;
      for (std::size_t c = 0; c < n; ++c) uj[c] += value * t[c];
    }
  }
}

#ifdef KEMBED_X86_DISPATCH

// Entries ahead whose rows of V (or U) are prefetched: the rows are
// scattered over d, so the hardware cannot predict them; measured on a
// 10^5 x 20,000 CSR with 1% stored, 16 and 32 gave the same time.
constexpr std::int64_t kPrefetchAhead = 32;

// The row of V (or U) entry e + kPrefetchAhead will touch, while there is one.
inline void prefetch_ahead(const std::int32_t* columns, std::int64_t e, std::int64_t end,
                           const double* rows, bool for_write) {
  if (e + kPrefetchAhead >= end) return;
  const double* p = rows + std::size_t(columns[e + kPrefetchAhead]) * kSweepVectorWidth;
  if (for_write)
    __builtin_prefetch(p, 1);
  else
    __builtin_prefetch(p, 0);
}

// One row of 8 lanes: a whole __m512d, or two __m256d (lo, hi).
__attribute__((target("avx512f"))) void sweep_avx512(const io::CsrRows& x, const NormalFactors& f,
                                                     const double* v, const double* beta,
                                                     double* u, double* gamma) {
  const std::int32_t* col = x.columns.data();
  const double* val = x.values.data();
  const double* cs = f.col_scale.data();
  const std::int64_t end = x.nonzeros();
  const __m512d b = _mm512_loadu_pd(beta);
  __m512d g = _mm512_loadu_pd(gamma);
  for (std::int64_t i = 0; i < x.local_rows(); ++i) {
    const std::int64_t from = x.offsets[i], to = x.offsets[i + 1];
    // Two partial sums, so that consecutive entries' multiply-adds overlap.
    __m512d t0 = _mm512_setzero_pd(), t1 = _mm512_setzero_pd();
    std::int64_t e = from;
    for (; e + 1 < to; e += 2) {
      prefetch_ahead(col, e, end, v, false);
      prefetch_ahead(col, e + 1, end, v, false);
      const std::size_t j0 = std::size_t(col[e]), j1 = std::size_t(col[e + 1]);
      t0 = _mm512_fmadd_pd(_mm512_set1_pd(val[e] * cs[j0]),
                           _mm512_loadu_pd(v + j0 * kSweepVectorWidth), t0);
      t1 = _mm512_fmadd_pd(_mm512_set1_pd(val[e + 1] * cs[j1]),
                           _mm512_loadu_pd(v + j1 * kSweepVectorWidth), t1);
    }
    if (e < to) {
      const std::size_t j = std::size_t(col[e]);
      t0 = _mm512_fmadd_pd(_mm512_set1_pd(val[e] * cs[j]),
                           _mm512_loadu_pd(v + j * kSweepVectorWidth), t0);
    }
    const __m512d scale = _mm512_set1_pd(f.row_scale[std::size_t(i)]);
    const __m512d a = _mm512_set1_pd(f.row_shift[std::size_t(i)]);
    __m512d t = _mm512_sub_pd(_mm512_mul_pd(scale, _mm512_add_pd(t0, t1)), _mm512_mul_pd(a, b));
    g = _mm512_fmadd_pd(a, t, g);
    t = _mm512_mul_pd(t, scale);
    for (e = from; e < to; ++e) {
      prefetch_ahead(col, e, end, u, true);
      double* uj = u + std::size_t(col[e]) * kSweepVectorWidth;
      _mm512_storeu_pd(uj, _mm512_fmadd_pd(_mm512_set1_pd(val[e]), t, _mm512_loadu_pd(uj)));
    }
  }
  _mm512_storeu_pd(gamma, g);
}

__attribute__((target("avx2,fma"))) void sweep_avx2(const io::CsrRows& x, const NormalFactors& f,
                                                    const double* v, const double* beta, double* u,
                                                    double* gamma) {
  const std::int32_t* col = x.columns.data();
  const double* val = x.values.data();
  const double* cs = f.col_scale.data();
  const std::int64_t end = x.nonzeros();
  const __m256d b_lo = _mm256_loadu_pd(beta), b_hi = _mm256_loadu_pd(beta + 4);
  __m256d g_lo = _mm256_loadu_pd(gamma), g_hi = _mm256_loadu_pd(gamma + 4);
  for (std::int64_t i = 0; i < x.local_rows(); ++i) {
    const std::int64_t from = x.offsets[i], to = x.offsets[i + 1];
    __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
    for (std::int64_t e = from; e < to; ++e) {
      prefetch_ahead(col, e, end, v, false);
      const std::size_t j = std::size_t(col[e]);
      const double* vj = v + j * kSweepVectorWidth;
      const __m256d a = _mm256_set1_pd(val[e] * cs[j]);
      lo = _mm256_fmadd_pd(a, _mm256_loadu_pd(vj), lo);
      hi = _mm256_fmadd_pd(a, _mm256_loadu_pd(vj + 4), hi);
    }
    const __m256d scale = _mm256_set1_pd(f.row_scale[std::size_t(i)]);
    const __m256d a = _mm256_set1_pd(f.row_shift[std::size_t(i)]);
    lo = _mm256_sub_pd(_mm256_mul_pd(scale, lo), _mm256_mul_pd(a, b_lo));
    hi = _mm256_sub_pd(_mm256_mul_pd(scale, hi), _mm256_mul_pd(a, b_hi));
    g_lo = _mm256_fmadd_pd(a, lo, g_lo);
    g_hi = _mm256_fmadd_pd(a, hi, g_hi);
    lo = _mm256_mul_pd(lo, scale);
    hi = _mm256_mul_pd(hi, scale);
    for (std::int64_t e = from; e < to; ++e) {
      prefetch_ahead(col, e, end, u, true);
      double* uj = u + std::size_t(col[e]) * kSweepVectorWidth;
      const __m256d value = _mm256_set1_pd(val[e]);
      _mm256_storeu_pd(uj, _mm256_fmadd_pd(value, lo, _mm256_loadu_pd(uj)));
      _mm256_storeu_pd(uj + 4, _mm256_fmadd_pd(value, hi, _mm256_loadu_pd(uj + 4)));
    }
  }
  _mm256_storeu_pd(gamma, g_lo);
  _mm256_storeu_pd(gamma + 4, g_hi);
}

#endif

}  // namespace

void normal_row(const io::CsrRows& x, const NormalFactors& f, std::int64_t i, const double* v,
                std::size_t w, const double* beta, double* row) {
  csr_row_times<0>(x, f, i, v, w, beta, row);
}

void normal_sweep(const io::CsrRows& x, const NormalFactors& f, const double* v, std::size_t w,
                  const double* beta, double* u, double* gamma, SimdLevel level) {
  check_simd_level(level, "sparse normal sweep");
  if (w == kSweepVectorWidth) {
#ifdef KEMBED_X86_DISPATCH
    if (level == SimdLevel::avx512) return sweep_avx512(x, f, v, beta, u, gamma);
    if (level == SimdLevel::avx2) return sweep_avx2(x, f, v, beta, u, gamma);
#endif
    return portable_sweep<kSweepVectorWidth>(x, f, v, w, beta, u, gamma);
  }
  portable_sweep<0>(x, f, v, w, beta, u, gamma);
}

}  // namespace kembed::spectral
