#pragma once
/// @file PCA of sparse data (CSR rows, io::CsrRows) with implicit centering
/// (and scaling), or truncated SVD without centering: the top k eigenpairs
/// of SparseCovarianceOperator by the block Krylov solver, then the scores
/// Z = Xc S^{-1} U_k formed where the rows are. Never an n x d dense matrix.
/// With centering the results are the dense fit_pca's (covariance route):
/// the same explained variances, axes, embedding and sign convention.
#include <cstdint>
#include <string>
#include <vector>

#include "kembed/core/phase_timer.hpp"
#include "kembed/io/csr_rows.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/spectral/eigensolver.hpp"

namespace kembed::spectral {

struct SparsePcaSettings {
  int components = 2;
  /// Subtract the column means (implicitly). false: truncated SVD of X (LSA).
  bool center = true;
  bool standardize = false;  ///< divide the columns by their sample std (n-1)
  bool whiten = false;       ///< divide each score column by sqrt(its eigenvalue)
  int block_size = 64;       ///< row block of the solver's d-row blocks
  KrylovSettings krylov;
};

/// What a sparse PCA fit produced; the same on every rank except the rank-0
/// arrays. Fields named as PcaResult's mean the same.
struct SparsePcaResult {
  std::int64_t n = 0, d = 0;
  int k = 0;
  bool centered = true;
  std::vector<double> mean;   ///< column means (length d; computed also without centering)
  std::vector<double> scale;  ///< column std (n-1) with standardize, else 1
  /// Top k eigenvalues of C (sparse_covariance_operator.hpp), descending.
  std::vector<double> eigenvalues;
  /// Centered: the eigenvalues (PCA's explained_variance_). Not centered:
  /// the variance (n denominator) of each score column, as scikit-learn's
  /// TruncatedSVD reports it.
  std::vector<double> explained_variance;
  /// Centered: explained_variance / total_variance. Not centered: the score
  /// variances over the columns' variances, both with n denominators
  /// (TruncatedSVD's explained_variance_ratio_).
  std::vector<double> explained_ratio;
  /// sqrt((n-1) eigenvalue): the singular values of Xc S^{-1} (centered) or
  /// X S^{-1} (TruncatedSVD's singular_values_).
  std::vector<double> singular_values;
  double total_variance = 0;  ///< sum of the columns' sample variances (n-1), exact
  /// Centered: mean of the min(n, d) - k discarded eigenvalues (scikit-
  /// learn's noise_variance_; 0 when k = min(n, d)). Not centered: 0.
  double noise_variance = 0;
  std::vector<double> residuals;  ///< ||C v - lambda v|| / trace(C) per pair
  std::string solver_used, solver_note;
  int iterations = 0, matvecs = 0;
  /// This rank's rows of the n x k scores, row-major (whitened if asked):
  /// gathered by the caller, which can free the sparse rows first.
  std::vector<double> scores;
  std::vector<double> components;  ///< rank 0 only: d x k row-major principal axes
};

/// Collective over grid.comm(): PCA (or truncated SVD) of the n x d matrix
/// whose rows `x` holds, each rank one contiguous range in rank order (the
/// sparse readers' layout). Errors (k outside [1, min(n, d)], bad rows, a
/// constant column under standardize, a Krylov run that does not converge,
/// zero variance under whiten) are agreed and name `source`. The residuals
/// are relative to trace(C), which bounds ||C||_F for the positive
/// semi-definite C (the d x d matrix is never formed to take its norm).
/// The scores follow the sign convention (largest |entry| of each column
/// positive; the axes flipped with them). Phases go to `timer`.
SparsePcaResult fit_sparse_pca(const io::CsrRows& x, const BlacsGrid& grid,
                               const SparsePcaSettings& settings, const std::string& source,
                               PhaseTimer& timer);

}  // namespace kembed::spectral
