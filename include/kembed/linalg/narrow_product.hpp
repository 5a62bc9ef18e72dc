#pragma once
/// @file C = A B for a tall column-major A and a narrow B (a few dozen
/// columns): the local product of the Krylov solver's block product, which
/// reads a rank's whole block of the kernel matrix once per pass.
#include "kembed/core/simd_level.hpp"

namespace kembed {

/// Columns of A in one block of the AVX-512 kernel's sums (see below): 64
/// in double, 32 in float. Measured (two processes at once, A 16000 x 8000
/// and n = 24): 0.130 s in double with 64 against 0.135 s with 32; in float
/// 0.068 s with 32 against 0.10 s with 40, 48 or 64 at this size (not at
/// 16384 or 16512 rows, where 64 is as fast: an alignment of the columns in
/// the cache).
template <class T>
inline constexpr int narrow_product_sweep = sizeof(T) == sizeof(double) ? 64 : 32;

/// C <- A B with A m x k (column-major, leading dimension lda), B k x n (ldb),
/// C m x n (ldc); C is only written.
///
/// With AVX-512 a kernel of kembed's own streams A as it is stored: 16 rows x
/// 12 columns of C in registers (32 x 12 in float), A swept down its rows
/// narrow_product_sweep columns at a time, the next lines of those columns
/// prefetched. The rows below the last multiple of 16 (32), and CPUs without
/// AVX-512, take dgemm (sgemm). The library's dgemm packs A into panels on
/// every call, a copy that costs more than the 2n flops per entry of A when n
/// is small. Measured on the 2-core development VM (two processes at once,
/// A 16000 x 8000, n = 24): 0.13 s against dgemm's 0.16 s; at 32000 x 16000,
/// 0.54 s against 0.65 s.
///
/// The kernel's order of summation is fixed: entry (i, j) is the sum over the
/// blocks of narrow_product_sweep consecutive t, in order, of each block's
/// chain of fused multiply-adds a_it b_tj from zero. So a row's result does
/// not depend on n or on where the row falls, and round-off grows with the
/// block length plus the number of blocks, not with k.
void narrow_product(int m, int n, int k, const double* a, int lda, const double* b, int ldb,
                    double* c, int ldc);

/// The same in single precision.
void narrow_product(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                    int ldc);

/// C <- C + A B, with the same kernel: each block's chain of sums is added to
/// C in order, the first block's too.
void narrow_product_add(int m, int n, int k, const double* a, int lda, const double* b, int ldb,
                        double* c, int ldc);
void narrow_product_add(int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                        float* c, int ldc);

/// C^T <- C^T + A^T B for the same tall A (m x k, column-major, lda) and an
/// m x n block B given by rows: bt row-major (row r at bt + r ldbt), and the
/// k x n result C by rows too (ct row-major, ldct): the product with A's
/// mirror image that lower-block storage needs (BlockProduct). With AVX-512
/// a kernel of kembed's own: 8 columns of A by 24 (48 in float) columns of
/// B in registers, each row of A and B one broadcast and three fused
/// multiply-adds per column, the sum over all m rows in one chain; else
/// dgemm (sgemm) on the transposed views.
void narrow_product_transposed_add(int m, int n, int k, const double* a, int lda,
                                   const double* bt, int ldbt, double* ct, int ldct);
void narrow_product_transposed_add(int m, int n, int k, const float* a, int lda, const float* bt,
                                   int ldbt, float* ct, int ldct);
void narrow_product_transposed_add(int m, int n, int k, const double* a, int lda,
                                   const double* bt, int ldbt, double* ct, int ldct,
                                   SimdLevel level);
void narrow_product_transposed_add(int m, int n, int k, const float* a, int lda, const float* bt,
                                   int ldbt, float* ct, int ldct, SimdLevel level);

/// All of them with the instruction set given: dgemm (sgemm) below
/// SimdLevel::avx512; `add` selects C + A B.
/// @pre level <= best_simd_level()
void narrow_product(int m, int n, int k, const double* a, int lda, const double* b, int ldb,
                    double* c, int ldc, SimdLevel level, bool add = false);
void narrow_product(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                    int ldc, SimdLevel level, bool add = false);

}  // namespace kembed
