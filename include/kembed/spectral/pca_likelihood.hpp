#pragma once
/// @file The probabilistic PCA (Tipping & Bishop) that a PCA fit defines, as
/// scikit-learn's PCA scores it (score, score_samples, get_covariance,
/// get_precision):
///
///   x ~ N(mean, C),  C = W^T diag(c_j) W + s (I - W^T W),  c_j = max(l_j, s)
///
/// with W the k x d orthonormal axes, l_j the explained variances (never
/// whitened: whitening rescales the embedding, not the data's model) and s
/// the noise variance, the mean of the min(n, d) - k discarded eigenvalues.
/// C is scikit-learn's W^T diag(l - s)_+ W + s I; its inverse (the matrix
/// inversion lemma) is P = W^T diag(1/c_j - 1/s) W + I / s, and
/// log det C = sum_j log c_j + (d - k) log s, from the eigenvalues, never
/// from a d x d determinant.
#include <cstdint>
#include <string>
#include <vector>

namespace kembed::spectral {

/// covariance.npy and precision.npy (d x d) are written with a model only
/// up to this many features (128 MiB each at the limit).
inline constexpr std::int64_t kPcaCovarianceMaxFeatures = 4096;

/// The parameters of the model besides its axes and mean.
struct PpcaParameters {
  std::int64_t d = 0;
  std::vector<double> explained_variance;  ///< l_j, length k, unwhitened
  double noise_variance = 0;               ///< s
};

/// scikit-learn's noise_variance_: (total - sum of the kept) / (min(n, d) - k)
/// when k < min(n, d), else 0; the sum of `spectrum` beyond k replaces
/// total - kept when the whole spectrum is known (non-empty). Never
/// negative.
double ppca_noise_variance(std::int64_t n, std::int64_t d, const std::vector<double>& kept,
                           double total_variance, const std::vector<double>& spectrum);

/// "" when C is positive definite (the density exists), else why not:
/// s = 0 with k < d leaves d - k directions of zero variance.
std::string ppca_undefined_reason(const PpcaParameters& p);

/// log det C. @pre ppca_undefined_reason(p) is empty
double ppca_log_det_covariance(const PpcaParameters& p);

/// The mean log-likelihood of the n training samples the parameters were
/// fitted on (scikit-learn's PCA().fit(X).score(X)), in closed form: the
/// training scatter has trace P S_n = (n-1)/n (sum_j l_j / c_j + (total -
/// sum_j l_j) / s). @pre ppca_undefined_reason(p) is empty
double ppca_training_log_likelihood(const PpcaParameters& p, std::int64_t n, double total_variance);

/// C (get_covariance), d x d row-major (symmetric). `axes`: W, k x d row-major.
std::vector<double> ppca_covariance(const PpcaParameters& p, const std::vector<double>& axes);

/// P = C^-1 (get_precision), d x d row-major (symmetric).
/// @pre ppca_undefined_reason(p) is empty
std::vector<double> ppca_precision(const PpcaParameters& p, const std::vector<double>& axes);

/// Local: the log-likelihood of each of `rows` samples (score_samples),
/// -1/2 (x - mean)^T P (x - mean) - 1/2 (d log 2 pi + log det C), from the
/// centered rows `centered` (rows x d row-major) and their projections
/// `projected` = (x - mean) W^T (rows x k row-major, unwhitened). The
/// quadratic form is sum_j y_j^2 / c_j + ||r - W^T y||^2 / s, the residual
/// formed explicitly (no cancellation of ||r||^2 - ||y||^2). `axes` is W as
/// k x d row-major when `axes_as_rows`, else W^T as d x k row-major.
/// @pre ppca_undefined_reason(p) is empty
std::vector<double> ppca_score_rows(const PpcaParameters& p, const std::vector<double>& axes,
                                    bool axes_as_rows, const std::vector<double>& centered,
                                    const std::vector<double>& projected, std::int64_t rows);

}  // namespace kembed::spectral
