#include "kembed/spectral/sign_convention.hpp"

#include <cmath>
#include <limits>
#include <vector>

namespace kembed::spectral {

std::vector<double> fix_signs(DistMatrix& v) {
  const Comm& comm = v.grid().comm();
  const auto cols = static_cast<std::size_t>(v.cols());
  std::vector<double> largest(cols, 0.0);
  for (int lj = 0; lj < v.local_cols(); ++lj)
    for (int li = 0; li < v.local_rows(); ++li) {
      double& m = largest[v.col_dist().to_global(lj)];
      m = std::max(m, std::abs(v.local(li, lj)));
    }
  comm.max_in_place(largest);
  // The first row index whose magnitude ties with the largest.
  std::vector<long long> first(cols, std::numeric_limits<long long>::max());
  for (int lj = 0; lj < v.local_cols(); ++lj) {
    const auto j = v.col_dist().to_global(lj);
    for (int li = 0; li < v.local_rows(); ++li)
      if (std::abs(v.local(li, lj)) >= largest[j] * (1 - kSignTieTolerance))
        first[j] = std::min<long long>(first[j], v.row_dist().to_global(li));
  }
  comm.min_in_place(first);
  // The owner of that entry knows its sign.
  std::vector<double> sign(cols, 0.0);
  for (int lj = 0; lj < v.local_cols(); ++lj) {
    const auto j = v.col_dist().to_global(lj);
    if (v.row_dist().is_local(first[j]))
      sign[j] = v.local(v.row_dist().to_local(first[j]), lj) < 0 ? -1.0 : 1.0;
  }
  comm.sum_in_place(sign);  // exactly one owner contributes per column
  for (int lj = 0; lj < v.local_cols(); ++lj) {
    const double s = sign[v.col_dist().to_global(lj)];
    if (s < 0)
      for (int li = 0; li < v.local_rows(); ++li) v.local(li, lj) = -v.local(li, lj);
  }
  return sign;
}

}  // namespace kembed::spectral
