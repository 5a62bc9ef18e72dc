#pragma once
/// @file The covariance of a sparse data matrix as a SymmetricOperator, with
/// the centering (and scaling) applied implicitly: PCA of CSR data through
/// the block Krylov solver without ever forming the dense centered matrix.
///
///   C = S^{-1} Xc^T Xc S^{-1} / (n-1),  Xc = X - 1 mu^T      (center)
///   C = S^{-1} X^T X S^{-1} / (n-1)                           (no center)
///
/// mu the column means, S = diag(column standard deviations, n-1
/// denominator) when standardizing, else I. Without centering C's
/// eigenvalues are sigma_j^2 / (n-1) for the singular values sigma_j of X
/// S^{-1} (scikit-learn's TruncatedSVD singular_values_ are those sigma_j).
///
/// A product Y = C V (V d x w) on the solver's block-cyclic rows of d:
///   1. allgather V to every rank (d x w), V' = S^{-1} V;
///   2. T = X_r V' - 1 (mu^T V') for this rank's rows X_r (CSR, 2 nnz w);
///   3. U_r = X_r^T T - mu (1^T T) (CSR transposed, 2 nnz w), each row of
///      T used as soon as it is formed, so T is never stored;
///   4. U = sum_r U_r, each rank receiving only its own rows (an all-to-all
///      of the d x w sums, added in rank order), Y = S^{-1} U / (n-1).
/// Memory: the CSR arrays are referenced, not copied; a product holds a few
/// d x w blocks, nothing of the size of the rows.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kembed/io/csr_rows.hpp"
#include "kembed/spectral/symmetric_operator.hpp"

namespace kembed::spectral {

class SparseCovarianceOperator final : public SymmetricOperator {
 public:
  /// Collective over grid.comm(): checks `x` (every rank's rows one
  /// contiguous range, in rank order, of the same n x d matrix with n >= 2;
  /// offsets, column indices and values valid: agreed errors naming
  /// `source`), then takes the column means (one allreduce) and, with
  /// `standardize`, the column standard deviations (a constant column is the
  /// agreed error of finish_scales). The blocks' rows are the 1-D
  /// block-cyclic distribution of d in blocks of `block_size` over the ranks.
  /// @pre `x` and `grid` outlive the operator; block_size >= 1
  SparseCovarianceOperator(const io::CsrRows& x, const BlacsGrid& grid, int block_size, bool center,
                           bool standardize, const std::string& source);

  std::int64_t order() const override { return x_.cols; }
  const BlacsGrid& grid() const override { return grid_; }
  int block_size() const override { return rows_.block_size(); }
  const BlockCyclic1D& rows() const override { return rows_; }
  /// Collective: y = C x (steps 1-4 above).
  void apply(const double* x, int ldx, int width, double* y, int ldy) override;
  /// held = the CSR arrays and the column statistics; work = the replicated
  /// d x w blocks, this rank's rows of V and the received sums;
  /// flops = 4 nnz w (two sparse products) + 6 d w.
  OperatorCost cost(int width) const override;

  /// Local: T = (X_r - 1 mu^T) S^{-1} V for this rank's rows, mu taken as 0
  /// without centering: `v` is d x width row-major (replicated), `t`
  /// receives local_rows x width row-major. PCA's scores are this product
  /// with the principal axes.
  void centered_product(const double* v, int width, double* t) const;

  /// The column means mu (length d, every rank), whether or not C centers.
  const std::vector<double>& mean() const { return mean_; }
  /// The column standard deviations (n-1) with standardize, else all 1.
  const std::vector<double>& scale() const { return scale_; }
  /// trace(C), exact from the stored entries: per column, the squares of the
  /// stored entries (minus mu_j when centering) plus the unstored zeros'
  /// (n - stored) mu_j^2, over s_j^2 (n-1).
  double trace() const { return trace_; }
  /// Sum of the (scaled) columns' sample variances (n-1 denominator): the
  /// trace of the centered covariance, also without centering.
  double total_variance() const { return total_variance_; }
  /// Products applied so far.
  long long products() const { return products_; }

 private:
  void check_rows(const std::string& source) const;
  // mu^T S^{-1} V for the d x w row-major V (zeros without centering).
  std::vector<double> mean_shift(const double* v, std::size_t w) const;
  // Row i of (X_r - 1 mu^T) S^{-1} V into `row` (w values), given mean_shift.
  void row_product(std::int64_t i, const double* v, std::size_t w, const double* shift,
                   double* row) const;
  void take_statistics(bool standardize, const std::string& source);

  const io::CsrRows& x_;
  const BlacsGrid& grid_;
  BlockCyclic1D rows_;
  bool center_;
  std::vector<double> mean_, scale_;
  double trace_ = 0, total_variance_ = 0;
  // For global row g of d: its owner's rank, and its local index there.
  std::vector<int> owner_, owner_local_;
  // Rows of d each rank owns, and where its piece starts in a gathered block
  // (in rows; times the width for values).
  std::vector<std::int64_t> owned_, owned_before_;
  std::vector<double> gathered_, v_, u_, received_;
  long long products_ = 0;
};

}  // namespace kembed::spectral
