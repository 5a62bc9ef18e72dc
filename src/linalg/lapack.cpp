#include "kembed/linalg/lapack.hpp"

#include <string>

#include "fortran.hpp"
#include "kembed/core/error.hpp"

namespace kembed::lapack {

void gemm(char trans_a, char trans_b, int m, int n, int k, double alpha, const double* a, int lda,
          const double* b, int ldb, double beta, double* c, int ldc) {
  if (m == 0 || n == 0) return;
  dgemm_(&trans_a, &trans_b, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
}

void gemm(char trans_a, char trans_b, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;
  sgemm_(&trans_a, &trans_b, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
}

void syrk_lower_transposed(int n, int k, double alpha, const double* a, int lda, double beta,
                           double* c, int ldc) {
  if (n == 0) return;
  dsyrk_("L", "T", &n, &k, &alpha, a, &lda, &beta, c, &ldc, 1, 1);
}

void syrk_lower(int n, int k, double alpha, const double* a, int lda, double beta, double* c,
                int ldc) {
  if (n == 0) return;
  dsyrk_("L", "N", &n, &k, &alpha, a, &lda, &beta, c, &ldc, 1, 1);
}

std::vector<double> syevd(std::vector<double>& a, int n) {
  std::vector<double> w(n);
  int info = 0, lwork = -1, liwork = -1, iwork_query = 0;
  double work_query = 0;
  dsyevd_("V", "L", &n, a.data(), &n, w.data(), &work_query, &lwork, &iwork_query, &liwork, &info,
          1, 1);
  lwork = static_cast<int>(work_query) + 1;
  liwork = iwork_query + 1;
  std::vector<double> work(lwork);
  std::vector<int> iwork(liwork);
  dsyevd_("V", "L", &n, a.data(), &n, w.data(), work.data(), &lwork, iwork.data(), &liwork, &info,
          1, 1);
  if (info != 0) throw Error("dsyevd failed with INFO = " + std::to_string(info));
  return w;
}

bool potrf_upper(std::vector<double>& a, int n) {
  int info = 0;
  dpotrf_("U", &n, a.data(), &n, &info, 1);
  if (info < 0) throw Error("dpotrf: illegal argument " + std::to_string(-info));
  return info == 0;
}

void solve_right_upper(const std::vector<double>& r, int n, double* b, int m, int ldb) {
  if (m == 0 || n == 0) return;
  const double one = 1;
  dtrsm_("R", "U", "N", "N", &m, &n, &one, r.data(), &n, b, &ldb, 1, 1, 1, 1);
}

}  // namespace kembed::lapack
