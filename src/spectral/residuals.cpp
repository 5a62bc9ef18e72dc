#include "kembed/spectral/residuals.hpp"

#include "kembed/linalg/reductions.hpp"
#include "kembed/linalg/scalapack.hpp"

namespace kembed {

std::vector<double> residual_norms(const DistMatrix& a, const DistMatrix& v,
                                   const std::vector<double>& values) {
  DistMatrix r(v.grid(), v.rows(), v.cols(), v.row_dist().block_size(),
               v.col_dist().block_size());
  scalapack::gemm('N', 'N', 1.0, a, v, 0.0, r);
  for (int lj = 0; lj < r.local_cols(); ++lj) {
    const double lambda = values[v.col_dist().to_global(lj)];
    for (int li = 0; li < r.local_rows(); ++li) r.local(li, lj) -= lambda * v.local(li, lj);
  }
  return column_norms(r);
}

}  // namespace kembed
