#include "kembed/kernel/local_blocks.hpp"

#include "linalg/fortran.hpp"

namespace kembed {

std::vector<double> row_norms_squared(const std::vector<double>& panel, int rows, int d) {
  std::vector<double> norms(rows);
  for (int i = 0; i < rows; ++i) {
    const double* x = &panel[std::size_t(i) * d];
    double s = 0;
    for (int t = 0; t < d; ++t) s += x[t] * x[t];
    norms[i] = s;
  }
  return norms;
}

void local_gram(const std::vector<double>& row_panel, const std::vector<double>& col_panel, int d,
                DistMatrix& out) {
  const int m = out.local_rows(), n = out.local_cols(), ld = out.ld();
  if (m == 0 || n == 0) return;
  const double one = 1, zero = 0;
  dgemm_("T", "N", &m, &n, &d, &one, row_panel.data(), &d, col_panel.data(), &d, &zero, out.data(),
         &ld, 1, 1);
}

}  // namespace kembed
