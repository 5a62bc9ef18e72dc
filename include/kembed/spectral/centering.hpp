#pragma once
/// @file Centering in feature space with distributed reductions.
#include <vector>

#include "kembed/kernel/assemble.hpp"
#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::spectral {

/// What centering removed: needed again to center test kernels.
struct CenteringStats {
  std::vector<double> row_means;  ///< (1/n) K 1, length n, on every rank
  std::vector<double> col_means;  ///< (1/n) 1^T K, length n, on every rank
  double grand_mean = 0;          ///< (1/n^2) 1^T K 1
  /// ||J K J||_F of the centered matrix as stored, taken while it was
  /// written (frobenius_norm's bits; 0 from kernel_means, which centers nothing)
  double frobenius_norm = 0;
};

/// Collective: the row and column means of `k` (two reductions of n values).
CenteringStats kernel_means(const DistMatrix& k);

/// Collective: K <- K - 1K/n - K1/n + 1K1/n^2 = J K J with J = I - 11^T/n,
/// the Gram matrix of the features centered at their mean. Returns the means.
CenteringStats center_kernel(DistMatrix& k);

/// Collective: the same centering in one pass over k, from the local sums
/// assembly took as it wrote k (kernel::assemble_kernel's `sums`). Gives the
/// same bits as center_kernel(k), which first reads k to sum it.
/// @pre sums are of k's current local block
CenteringStats center_kernel(DistMatrix& k, const kernel::LocalSums& sums);
/// The same on single-precision storage: means in double, each centered
/// entry formed in double and rounded once to float.
CenteringStats center_kernel(SingleMatrix& k, const kernel::LocalSums& sums);

}  // namespace kembed::spectral
