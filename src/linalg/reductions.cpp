#include "kembed/linalg/reductions.hpp"

#include <algorithm>
#include <cmath>

namespace kembed {

double trace(const DistMatrix& a) {
  double local_sum = 0;
  for (int lj = 0; lj < a.local_cols(); ++lj) {
    const std::int64_t j = a.col_dist().to_global(lj);
    if (a.row_dist().is_local(j)) local_sum += a.local(a.row_dist().to_local(j), lj);
  }
  return a.grid().comm().sum(local_sum);
}

std::vector<double> column_norms(const DistMatrix& a) {
  // Sum of squares per column after scaling by the column's largest entry.
  std::vector<double> scale(a.cols(), 0.0);
  for (int lj = 0; lj < a.local_cols(); ++lj) {
    const double* column = a.data() + std::size_t(lj) * a.ld();
    double largest = 0;
    for (int li = 0; li < a.local_rows(); ++li) largest = std::max(largest, std::abs(column[li]));
    scale[a.col_dist().to_global(lj)] = largest;
  }
  const Comm& comm = a.grid().comm();
  MPI_Allreduce(MPI_IN_PLACE, scale.data(), static_cast<int>(scale.size()), MPI_DOUBLE, MPI_MAX,
                comm.get());
  std::vector<double> sums(a.cols(), 0.0);
  for (int lj = 0; lj < a.local_cols(); ++lj) {
    const std::int64_t j = a.col_dist().to_global(lj);
    if (scale[j] == 0) continue;
    const double inverse = 1 / scale[j];
    const double* column = a.data() + std::size_t(lj) * a.ld();
    double sum = 0;
    for (int li = 0; li < a.local_rows(); ++li) sum += (column[li] * inverse) * (column[li] * inverse);
    sums[j] = sum;
  }
  comm.sum_in_place(sums);
  for (std::size_t j = 0; j < sums.size(); ++j) sums[j] = scale[j] * std::sqrt(sums[j]);
  return sums;
}

double frobenius_norm(const DistMatrix& a) {
  // Scaled by the largest column norm, so entries beyond 1e154 do not overflow the squares.
  const auto norms = column_norms(a);
  double largest = 0, sum = 0;
  for (double c : norms) largest = std::max(largest, c);
  if (!(largest > 0) || !std::isfinite(largest)) return largest;
  for (double c : norms) sum += (c / largest) * (c / largest);
  return largest * std::sqrt(sum);
}

}  // namespace kembed
