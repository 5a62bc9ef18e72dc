#include "kembed/spectral/centering.hpp"

namespace kembed {

namespace {

// Global index of every local index, computed once (the index maps divide).
std::vector<std::int64_t> globals(const BlockCyclic1D& dist) {
  std::vector<std::int64_t> g(dist.local_size());
  for (int l = 0; l < dist.local_size(); ++l) g[l] = dist.to_global(l);
  return g;
}

}  // namespace

CenteringStats kernel_means(const DistMatrix& k) {
  CenteringStats stats;
  stats.row_means.assign(k.rows(), 0.0);
  stats.col_means.assign(k.cols(), 0.0);
  const auto row_index = globals(k.row_dist());
  const auto col_index = globals(k.col_dist());
  // Local row sums accumulate in local order, then scatter to global slots.
  std::vector<double> local_row_sums(k.local_rows(), 0.0);
  for (int lj = 0; lj < k.local_cols(); ++lj) {
    const double* column = k.data() + std::size_t(lj) * k.ld();
    double column_sum = 0;
    for (int li = 0; li < k.local_rows(); ++li) {
      column_sum += column[li];
      local_row_sums[li] += column[li];
    }
    stats.col_means[col_index[lj]] = column_sum;
  }
  for (int li = 0; li < k.local_rows(); ++li) stats.row_means[row_index[li]] = local_row_sums[li];
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
  const auto row_index = globals(k.row_dist());
  const auto col_index = globals(k.col_dist());
  std::vector<double> local_row_means(k.local_rows());
  for (int li = 0; li < k.local_rows(); ++li) local_row_means[li] = stats.row_means[row_index[li]];
  for (int lj = 0; lj < k.local_cols(); ++lj) {
    const double shift = stats.grand_mean - stats.col_means[col_index[lj]];
    double* column = k.data() + std::size_t(lj) * k.ld();
    for (int li = 0; li < k.local_rows(); ++li) column[li] += shift - local_row_means[li];
  }
  return stats;
}

}  // namespace kembed
