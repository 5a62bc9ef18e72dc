#include "kembed/linalg/nonsymmetric_eigenvalues.hpp"

#include <mpi.h>

#include <algorithm>
#include <string>

#include "fortran.hpp"
#include "kembed/core/error.hpp"

namespace kembed::scalapack {

namespace {

void agree_hessenberg_info(const DistMatrix& a, int info, const char* routine,
                           const char* meaning) {
  std::string message;
  if (info != 0)
    message = std::string(routine) + " failed with INFO = " + std::to_string(info) +
              (info > 0 ? std::string(" (") + meaning + ")" : " (illegal argument)");
  agree(a.grid().comm(), message);
}

int hessenberg_workspace(double query) { return static_cast<int>(query) + 1; }

// pdgehrd leaves its reflectors below the first subdiagonal; the QR
// iteration is given a clean upper Hessenberg matrix.
void clear_below_subdiagonal(DistMatrix& a) {
  for (int lj = 0; lj < a.local_cols(); ++lj) {
    const std::int64_t j = a.col_dist().to_global(lj);
    for (int li = 0; li < a.local_rows(); ++li)
      if (a.row_dist().to_global(li) > j + 1) a.local(li, lj) = 0;
  }
}

}  // namespace

Eigenvalues nonsymmetric_eigenvalues(DistMatrix& a) {
  const int n = static_cast<int>(a.rows()), one = 1, minus1 = -1;
  int info = 0;
  {  // Hessenberg reduction A = Q H Q^T.
    std::vector<double> tau(std::max(1, a.local_cols()));
    double query = 0;
    pdgehrd_(&n, &one, &n, a.data(), &one, &one, a.desc(), tau.data(), &query, &minus1, &info);
    agree_hessenberg_info(a, info, "pdgehrd (workspace query)", "");
    int lwork = hessenberg_workspace(query);
    std::vector<double> work(lwork);
    pdgehrd_(&n, &one, &n, a.data(), &one, &one, a.desc(), tau.data(), work.data(), &lwork, &info);
    agree_hessenberg_info(a, info, "pdgehrd", "");
  }
  clear_below_subdiagonal(a);
  Eigenvalues w{std::vector<double>(n), std::vector<double>(n)};
  // Eigenvalues only: no Schur form (WANTT false), no vectors (WANTZ false,
  // Z not referenced). pdlahqr needs 3n + max(2 max(lld) + 2 LOCc(n),
  // 7 ceil(n / nb) / lcm(P, Q)) of workspace; it has no workspace query.
  const int no = 0;
  const int nb = a.row_dist().block_size();
  const int lwork = 3 * n + std::max(4 * a.ld() + 2 * a.local_cols(), 7 * (n / nb + 1)) + 64;
  std::vector<double> work(lwork);
  int unused_iwork = 0;
  double unused_z = 0;
  pdlahqr_(&no, &no, &n, &one, &n, a.data(), a.desc(), w.real.data(), w.imag.data(), &one, &n,
           &unused_z, a.desc(), work.data(), &lwork, &unused_iwork, &one, &info);
  agree_hessenberg_info(a, info, "pdlahqr", "the QR iteration did not converge");
  // The eigenvalues are global output; rank 0 of the grid's copy is the one
  // every rank keeps, so all ranks hold the same bits.
  MPI_Bcast(w.real.data(), n, MPI_DOUBLE, 0, a.grid().comm().get());
  MPI_Bcast(w.imag.data(), n, MPI_DOUBLE, 0, a.grid().comm().get());
  return w;
}

}  // namespace kembed::scalapack
