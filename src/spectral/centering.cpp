#include "kembed/spectral/centering.hpp"

namespace kembed {

CenteringStats kernel_means(const DistMatrix& k) {
  CenteringStats stats;
  stats.row_means.assign(k.rows(), 0.0);
  stats.col_means.assign(k.cols(), 0.0);
  for (int lj = 0; lj < k.local_cols(); ++lj) {
    const std::int64_t j = k.col_dist().to_global(lj);
    const double* column = k.data() + std::size_t(lj) * k.ld();
    double column_sum = 0;
    for (int li = 0; li < k.local_rows(); ++li) {
      column_sum += column[li];
      stats.row_means[k.row_dist().to_global(li)] += column[li];
    }
    stats.col_means[j] = column_sum;
  }
  const Comm& comm = k.grid().comm();
  comm.sum_in_place(stats.row_means);
  comm.sum_in_place(stats.col_means);
  double total = 0;
  for (double& s : stats.col_means) {
    total += s;
    s /= static_cast<double>(k.rows());
  }
  for (double& s : stats.row_means) s /= static_cast<double>(k.cols());
  stats.grand_mean = total / (static_cast<double>(k.rows()) * static_cast<double>(k.cols()));
  return stats;
}

CenteringStats center_kernel(DistMatrix& k) {
  CenteringStats stats = kernel_means(k);
  for (int lj = 0; lj < k.local_cols(); ++lj) {
    const double shift = stats.grand_mean - stats.col_means[k.col_dist().to_global(lj)];
    double* column = k.data() + std::size_t(lj) * k.ld();
    for (int li = 0; li < k.local_rows(); ++li)
      column[li] += shift - stats.row_means[k.row_dist().to_global(li)];
  }
  return stats;
}

}  // namespace kembed
