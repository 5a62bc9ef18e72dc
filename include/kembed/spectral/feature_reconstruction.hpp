#pragma once
/// @file Reconstructions in the feature space of a kernel PCA model.
///
/// With centered features phi~(x) = phi(x) - mean and the unit principal axes
/// u_j = sum_i a_ij phi~(x_i) (a_j = v_j / sqrt(lambda_j), the model's
/// coefficients), coefficients z in R^c (c <= k) stand for
///   phi_hat = mean + sum_{j<c} z_j u_j = sum_i gamma_i phi(x_i),
///   gamma   = 1/n + (I - 11^T/n) A_c z.
/// Everything below is evaluated through kernel values only; the n x m matrix
/// of gamma vectors lives block-cyclically on the grid, and no n x n matrix
/// is formed.
#include <cstdint>
#include <vector>

#include "kembed/io/matrix_file.hpp"
#include "kembed/kernel/kernel.hpp"
#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::spectral {

/// What reconstruction needs from a kernel PCA model besides the training
/// samples X (n x d) and the coefficients A (n x k), which stay in files.
struct KpcaModelStats {
  kernel::Kernel kernel;                    ///< gamma resolved; not precomputed
  std::int64_t n = 0, d = 0;
  int k = 0;
  std::vector<double> eigenvalues;  ///< k, descending
  std::vector<double> col_means;    ///< c_i = (1/n) sum_l k(x_i, x_l)
  double grand_mean = 0;            ///< g = (1/n^2) sum_il k(x_i, x_l)
};

/// Per point q, the weighted sums over the training set that a feature-space
/// distance and a fixed-point step need, with w_i = gamma_iq k(x_i, y_q):
struct WeightedSums {
  std::vector<double> numerator;  ///< m x d row-major: sum_i w_i x_i
  std::vector<double> weight;     ///< m: sum_i w_i = <phi(y_q), phi_hat_q>
  std::vector<double> abs_weight; ///< m: sum_i |w_i|
  std::vector<double> distance;   ///< m: ||phi(y_q) - phi_hat_q||^2, clamped at 0
                                  ///< (empty when the kernel was not applied)
};

/// The reconstructions phi_hat_q of m coefficient vectors. Collective
/// object: every rank constructs it and calls its members together.
class FeatureReconstruction {
 public:
  /// Collective: `z` is m x c row-major and identical on every rank.
  /// Reads this rank's rows of X and A (parallel I/O).
  FeatureReconstruction(const KpcaModelStats& model, io::MatrixFile& training,
                        io::MatrixFile& coefficients, std::vector<double> z, int c,
                        const BlacsGrid& grid, int block_size);

  std::int64_t points() const { return m_; }
  int components() const { return c_; }
  const KpcaModelStats& model() const { return model_; }
  /// ||phi_hat_q||^2 = g + sum_j z_qj (2 s_j + z_qj), s_j = <mean, u_j>.
  const std::vector<double>& norm_squared() const { return norm2_; }

  /// Collective: for each point, the training sample x_j minimizing
  /// ||phi(x_j) - phi_hat||^2 = K~_jj - 2 sum_l lambda_l a_jl z_l + ||z||^2
  /// among those not in excluded[q] (ties: smallest index; -1 when none is
  /// left). Uses K~ a_l = lambda_l a_l, so it costs O(n k m / P).
  std::vector<std::int64_t> nearest_training(
      const std::vector<std::vector<std::int64_t>>& excluded) const;
  /// Collective: the m x d rows x_{index[q]} (row-major, every rank).
  std::vector<double> training_rows(const std::vector<std::int64_t>& index) const;
  /// Collective: the weighted sums at the m x d points `y` (every rank).
  /// With use_kernel false the weights are gamma_iq alone (the linear
  /// kernel's exact pre-image is then the numerator).
  WeightedSums weighted_sums(const std::vector<double>& y, bool use_kernel = true);

 private:
  KpcaModelStats model_;
  std::int64_t m_;
  int c_;
  std::vector<double> z_;
  DistMatrix gamma_;                   ///< n x m
  DistMatrix kxy_;                     ///< n x m work space: k(x_i, y_q)
  std::vector<double> x_panel_;        ///< this rank's rows of X (gamma_'s local rows)
  std::vector<double> a_panel_;        ///< the same rows of A (k columns)
  std::vector<double> centered_self_;  ///< K~_jj of the local rows
  std::vector<double> norm2_;
};

}  // namespace kembed::spectral
