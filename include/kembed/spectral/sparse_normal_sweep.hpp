#pragma once
/// @file The inner loop of the sparse normal product (sparse_normal_operator.hpp):
/// one pass over a rank's CSR rows that multiplies each row by V and, while
/// the row is still in cache, adds its transposed contribution to U.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kembed/core/simd_level.hpp"
#include "kembed/io/csr_rows.hpp"

namespace kembed::spectral {

/// The diagonal scalings and the rank-one correction of B = D_a X D_b - a b^T.
struct NormalFactors {
  std::vector<double> row_scale;  ///< D_a: one per local row of X
  std::vector<double> row_shift;  ///< a: one per local row of X
  std::vector<double> col_scale;  ///< D_b: one per column (every rank)
  std::vector<double> col_shift;  ///< b: one per column (every rank)
};

/// Width of the blocks with hand-vectorized sweeps: one AVX-512 register, or
/// two AVX2 ones, per row of V and U (the sparse fits' Krylov blocks,
/// kSparseKrylovBlock, are this wide).
inline constexpr std::size_t kSweepVectorWidth = 8;

/// Local: row i (local) of B_r V into `row` (w values), the portable loop.
void normal_row(const io::CsrRows& x, const NormalFactors& f, std::int64_t i, const double* v,
                std::size_t w, const double* beta, double* row);

/// Local, every local row i of `x` in order:
///   t_i = (D_a)_i sum_e x_e (D_b)_j v_j - a_i beta   (row i of B_r V),
///   gamma += a_i t_i,   U += x_i^T (D_a)_i t_i,
/// where `v` (d x w, row-major) is V, `beta` = b^T V (w values), and `u`
/// (d x w, row-major) and `gamma` (w) are added to, not overwritten; T is
/// never stored. Width kSweepVectorWidth at `level` avx2 or avx512 runs the
/// hand-vectorized loop (fused multiply-adds, two partial sums per row of
/// V X, V's and U's rows prefetched 32 entries ahead: about 2.8 times the
/// compiled loop's speed on a 10^5 x 20,000 CSR with 1% stored); other widths
/// and levels the portable loop. The order of summation, so the last bits,
/// depends on the level. @pre check_simd_level(level) passes
void normal_sweep(const io::CsrRows& x, const NormalFactors& f, const double* v, std::size_t w,
                  const double* beta, double* u, double* gamma, SimdLevel level);

}  // namespace kembed::spectral
