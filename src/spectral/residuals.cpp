#include "kembed/spectral/residuals.hpp"

#include <algorithm>
#include <cstdio>

#include "kembed/core/error.hpp"
#include "kembed/linalg/reductions.hpp"
#include "kembed/linalg/scalapack.hpp"
#include "kembed/spectral/eigensolver.hpp"
#include "kembed/spectral/stored_operator.hpp"

namespace kembed::spectral {

std::vector<double> residual_norms(SymmetricOperator& a, const DistMatrix& v,
                                   const std::vector<double>& values) {
  // v in the operator's row layout, multiplied there.
  const Comm& comm = a.grid().comm();
  const BlacsGrid line(comm, comm.size(), 1);
  const std::int64_t n = v.rows();
  const int k = static_cast<int>(v.cols()), nb = a.block_size();
  DistMatrix x(line, n, k, nb, std::max(k, 1)), y(line, n, k, nb, std::max(k, 1));
  copy(v, 0, 0, n, k, x, 0, 0);
  a.apply(x.data(), x.ld(), k, y.data(), y.ld());
  for (int j = 0; j < k; ++j)
    for (int li = 0; li < y.local_rows(); ++li) y.local(li, j) -= values[j] * x.local(li, j);
  return column_norms(y);
}

std::vector<double> residual_norms(const DistMatrix& a, const DistMatrix& v,
                                   const std::vector<double>& values) {
  if (a.storage() == Storage::lower_blocks) {
    // The product the krylov solver uses: the one that reads lower-block storage.
    StoredOperator op(a, KrylovProduct::local);
    return residual_norms(op, v, values);
  }
  DistMatrix r(v.grid(), v.rows(), v.cols(), v.row_dist().block_size(), v.col_dist().block_size());
  scalapack::gemm('N', 'N', 1.0, a, v, 0.0, r);
  for (int lj = 0; lj < r.local_cols(); ++lj) {
    const double lambda = values[v.col_dist().to_global(lj)];
    for (int li = 0; li < r.local_rows(); ++li) r.local(li, lj) -= lambda * v.local(li, lj);
  }
  return column_norms(r);
}

std::vector<double> residual_norms(const SingleMatrix& a, const DistMatrix& v,
                                   const std::vector<double>& values) {
  StoredOperator op(a, KrylovProduct::local);
  return residual_norms(op, v, values);
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
