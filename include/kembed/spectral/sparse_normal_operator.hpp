#pragma once
/// @file The normal matrix C = B^T B of a scaled, rank-one-corrected sparse
/// matrix, as a SymmetricOperator: the one sparse product that PCA of CSR
/// data and correspondence analysis of a sparse table share.
///
///   B = D_a X D_b - a b^T     (X the n x d CSR rows, D_a = diag(row_scale),
///                              D_b = diag(col_scale), a = row_shift,
///                              b = col_shift)
///
///   PCA (sparse_covariance_operator.hpp): D_a = I / sqrt(n-1), D_b = S^{-1},
///     a = 1 / sqrt(n-1), b = S^{-1} mu (a = 0 without centering), so that
///     B = (X - 1 mu^T) S^{-1} / sqrt(n-1) and C is the covariance.
///   CA (sparse_ca.hpp): P = X / t, r = P 1, c = P^T 1; D_a = diag(1 / (t
///     sqrt(r_i))), D_b = diag(1 / sqrt(c_j)), a = sqrt(r), b = sqrt(c), so
///     that B = D_r^{-1/2} (P - r c^T) D_c^{-1/2}, the standardized residuals.
///
/// A product Y = C V (V d x w) on the solver's block-cyclic rows of d:
///   1. allgather V to every rank (d x w, row-major), beta = b^T V;
///   2. row i of T = B_r V: t_i = (D_a)_i sum_e x_e (D_b)_j v_j - a_i beta
///      (CSR, 2 nnz w), used at once (normal_sweep, hand-vectorized at the
///      CPU's best SimdLevel for blocks of kSweepVectorWidth): U_r += X_r^T (D_a)_i t_i (CSR
///      transposed, 2 nnz w) and gamma += a_i t_i, so T is never stored;
///   3. U_r = D_b U_r - b gamma^T, then U = sum_r U_r, each rank receiving
///      only its own rows (an all-to-all of the d x w sums, added in rank
///      order).
/// Memory: the CSR arrays are referenced, not copied; the factors hold two
/// values per local row and two per column; a product holds a few d x w
/// blocks, nothing of the size of the rows.
#include <cstdint>
#include <string>
#include <vector>

#include "kembed/core/cache_aligned.hpp"
#include "kembed/io/csr_rows.hpp"
#include "kembed/spectral/krylov.hpp"
#include "kembed/spectral/sparse_normal_sweep.hpp"
#include "kembed/spectral/symmetric_operator.hpp"

namespace kembed::spectral {

/// Collective over `comm`: checks that `x` holds, on each rank, one
/// contiguous range of rows (in rank order) of the same n x d matrix, with
/// valid offsets, column indices in [0, d), strictly ascending within each
/// row, and finite values. Agreed errors name `source` and the first bad row.
void check_csr_rows(const io::CsrRows& x, const Comm& comm, const std::string& source);

class SparseNormalOperator final : public SymmetricOperator {
 public:
  /// Collective over grid.comm(): C = B^T B of order d = x.cols, blocks in
  /// the 1-D block-cyclic distribution of d in blocks of `block_size` over
  /// the ranks. Factors of the wrong lengths are an agreed error.
  /// @pre check_csr_rows(x) passed; `x` and `grid` outlive the operator;
  /// block_size >= 1
  SparseNormalOperator(const io::CsrRows& x, const BlacsGrid& grid, int block_size,
                       NormalFactors factors);

  std::int64_t order() const override { return x_.cols; }
  const BlacsGrid& grid() const override { return grid_; }
  int block_size() const override { return rows_.block_size(); }
  const BlockCyclic1D& rows() const override { return rows_; }
  /// Collective: y = C x (steps 1-3 above).
  void apply(const double* x, int ldx, int width, double* y, int ldy) override;
  /// held = the CSR arrays and the factors; work = the replicated d x w
  /// blocks, this rank's rows of V and the received sums; flops = 4 nnz w
  /// (two sparse products) + 6 d w (the per-row scalings, a few w per local
  /// row, are left out: rows usually hold many entries).
  OperatorCost cost(int width) const override;

  /// Local: T = B_r V for this rank's rows: `v` is d x width row-major
  /// (replicated), `t` receives local_rows x width row-major. The fits'
  /// scores and the other side's singular vectors are this product.
  void left_product(const double* v, int width, double* t) const;

  const NormalFactors& factors() const { return factors_; }
  /// Products applied so far.
  long long products() const { return products_; }

 private:
  // b^T V for the d x w row-major V.
  std::vector<double> shift(const double* v, std::size_t w) const;
  const io::CsrRows& x_;
  const BlacsGrid& grid_;
  BlockCyclic1D rows_;
  NormalFactors factors_;
  SimdLevel simd_ = best_simd_level();  // normal_sweep's instruction set
  // For global row g of d: its owner's rank, and its local index there.
  std::vector<int> owner_, owner_local_;
  // Rows of d each rank owns, and where its piece starts in a gathered block
  // (in rows; times the width for values).
  std::vector<std::int64_t> owned_, owned_before_;
  std::vector<double> gathered_, received_;
  // V and U, d x w row-major: a row of 8 is one cache line (normal_sweep).
  CacheAlignedVector<double> v_, u_;
  long long products_ = 0;
};

/// The Krylov shape of the sparse fits. A product costs 4 nnz b flops and
/// its cost per column hardly falls with the block's width b (the CSR
/// entries are read once per block), while a block method needs more
/// columns of products the wider its blocks. So the sparse fits extend a
/// thick restart of keep = k + max(4, k/4) Ritz vectors (krylov_shape rounds it up to a
/// multiple of the block) by narrow blocks of
/// kSparseKrylovBlock columns, into a basis of max(kSparseKrylovBasis,
/// 6 keep) columns (at most half the operator's order). Measured on a
/// 100,000 x 5,000 CSR (1% stored, 1 rank, solve time): k = 20, 20.3 s with
/// blocks of 25 and a 800-column basis, 10.7 s with blocks of 8 and 480;
/// k = 50, 49.9 s (blocks of 62, 1,984 columns) and 9.8 s (8 and 480).
inline constexpr int kSparseKrylovBlock = static_cast<int>(kSweepVectorWidth);
inline constexpr int kSparseKrylovBasis = 480;
/// Depth of the wide-block shape small operators fall back to.
inline constexpr int kSparseKrylovDepth = 32;

/// `asked` with the sparse fits' shape (above) when no depth was asked for.
/// Where keep + 2 blocks do not fit half the operator's order, the usual
/// blocks of at least k columns, between 8 and kSparseKrylovDepth deep.
KrylovSettings sparse_krylov(KrylovSettings asked, int k, std::int64_t order);

}  // namespace kembed::spectral
