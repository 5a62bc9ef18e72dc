#include "kembed/spectral/residuals.hpp"

#include <cstdio>

#include "kembed/core/error.hpp"
#include "kembed/linalg/reductions.hpp"
#include "kembed/spectral/eigensolver.hpp"
#include "kembed/linalg/scalapack.hpp"

namespace kembed::spectral {

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

void reject_inaccurate_pairs(const Comm& comm, const std::vector<double>& relative,
                             const std::string& solver) {
  std::string error;
  for (std::size_t j = 0; j < relative.size() && error.empty(); ++j)
    if (!(relative[j] <= kResidualLimit)) {
      char text[160];
      std::snprintf(text, sizeof text,
                    "eigensolver %s returned eigenpair %zu with relative residual %.3g (limit "
                    "%.0e); the result would be wrong",
                    solver.c_str(), j + 1, relative[j], kResidualLimit);
      error = text;
    }
  agree(comm, error);
}

}  // namespace kembed::spectral
