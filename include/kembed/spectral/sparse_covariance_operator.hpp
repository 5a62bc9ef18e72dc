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
/// The product is SparseNormalOperator's (sparse_normal_operator.hpp) with
/// B = (X - 1 mu^T) S^{-1} / sqrt(n-1): D_a = I / sqrt(n-1), D_b = S^{-1},
/// a = 1 / sqrt(n-1), b = S^{-1} mu (a = 0 without centering). Memory: the
/// CSR arrays are referenced, not copied; a product holds a few d x w
/// blocks, nothing of the size of the rows.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kembed/io/csr_rows.hpp"
#include "kembed/spectral/sparse_normal_operator.hpp"
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

  std::int64_t order() const override { return core_.order(); }
  const BlacsGrid& grid() const override { return core_.grid(); }
  int block_size() const override { return core_.block_size(); }
  const BlockCyclic1D& rows() const override { return core_.rows(); }
  /// Collective: y = C x (SparseNormalOperator::apply).
  void apply(const double* x, int ldx, int width, double* y, int ldy) override {
    core_.apply(x, ldx, width, y, ldy);
  }
  /// SparseNormalOperator::cost: flops = 4 nnz w (two sparse products) + 6 d w.
  OperatorCost cost(int width) const override { return core_.cost(width); }

  /// Local: T = (X_r - 1 mu^T) S^{-1} V for this rank's rows, mu taken as 0
  /// without centering: `v` is d x width row-major (replicated), `t`
  /// receives local_rows x width row-major. PCA's scores are this product
  /// with the principal axes.
  void centered_product(const double* v, int width, double* t) const;

  /// The column means mu (length d, every rank), whether or not C centers.
  const std::vector<double>& mean() const { return stats_.mean; }
  /// The column standard deviations (n-1) with standardize, else all 1.
  const std::vector<double>& scale() const { return stats_.scale; }
  /// trace(C), exact from the stored entries: per column, the squares of the
  /// stored entries (minus mu_j when centering) plus the unstored zeros'
  /// (n - stored) mu_j^2, over s_j^2 (n-1).
  double trace() const { return stats_.trace; }
  /// Sum of the (scaled) columns' sample variances (n-1 denominator): the
  /// trace of the centered covariance, also without centering.
  double total_variance() const { return stats_.total_variance; }
  /// Products applied so far.
  long long products() const { return core_.products(); }

 private:
  struct Statistics {
    std::vector<double> mean, scale;
    double trace = 0, total_variance = 0;
  };
  // Checks the rows, then takes the column statistics (agreed errors).
  static Statistics take_statistics(const io::CsrRows& x, const Comm& comm, bool center,
                                    bool standardize, const std::string& source);
  static NormalFactors factors(const io::CsrRows& x, const Statistics& stats, bool center);

  double root_n1_;  // sqrt(n-1): T = sqrt(n-1) B V
  Statistics stats_;
  SparseNormalOperator core_;
};

}  // namespace kembed::spectral
