#include "kembed/linalg/scalapack.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "fortran.hpp"
#include "kembed/core/error.hpp"

namespace kembed::scalapack {

namespace {

void agree_info(const DistMatrix& a, int info, const char* routine, const char* meaning) {
  std::string message;
  if (info != 0)
    message = std::string(routine) + " failed with INFO = " + std::to_string(info) +
              (info > 0 ? std::string(" (") + meaning + ")" : " (illegal argument)");
  agree(a.grid().comm(), message);
}

// ScaLAPACK leaves W unset on processes that own no part of the matrix (for
// example when one block holds it all); the grid's rank 0 always has it.
void broadcast_values(const DistMatrix& a, std::vector<double>& w) {
  MPI_Bcast(w.data(), static_cast<int>(w.size()), MPI_DOUBLE, 0, a.grid().comm().get());
}

int workspace_size(double query) { return static_cast<int>(query) + 1; }

// Extra workspace for the back-transformation (pdormtr) inside pdsyevd and
// pdsyevr. ScaLAPACK 2.2.1's workspace queries under-count it when a block is
// large relative to the local matrix; pdormtr then rejects LWORK (argument 16),
// prints a message and returns without applying Q, and the eigensolver still
// reports INFO = 0 with wrong eigenvectors. pdormtr needs at most
// max(nb(nb-1)/2, (nq + mp) nb) + nb^2; this bound exceeds it.
int back_transform_workspace(const DistMatrix& a) {
  const long long nb = a.row_dist().block_size();
  const long long local = a.local_rows() + a.local_cols() + 2 * nb;
  const long long extra = std::max(nb * (nb - 1) / 2, local * nb) + nb * nb;
  return static_cast<int>(std::min<long long>(extra, 1LL << 30));
}

// Runs `body` with standard output and error sent to /dev/null. ScaLAPACK
// 2.2.1's pdsyevr workspace query reports a spurious PDORMTR argument error on
// standard error although it returns INFO = 0; the query's result is still correct.
template <class F>
void with_stdout_silenced(F&& body) {
  std::fflush(stdout);
  std::fflush(stderr);
  const int saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO);
  const int devnull = open("/dev/null", O_WRONLY);
  if (devnull >= 0) {
    dup2(devnull, STDOUT_FILENO);
    dup2(devnull, STDERR_FILENO);
  }
  body();
  std::fflush(stdout);
  std::fflush(stderr);
  if (saved_out >= 0) dup2(saved_out, STDOUT_FILENO), close(saved_out);
  if (saved_err >= 0) dup2(saved_err, STDERR_FILENO), close(saved_err);
  if (devnull >= 0) close(devnull);
}

}  // namespace

std::vector<double> syevd(DistMatrix& a, DistMatrix& z) {
  const int n = static_cast<int>(a.rows()), one = 1;
  std::vector<double> w(n);
  double work_query = 0;
  int iwork_query = 0, info = 0, minus1 = -1;
  pdsyevd_("V", "L", &n, a.data(), &one, &one, a.desc(), w.data(), z.data(), &one, &one, z.desc(),
           &work_query, &minus1, &iwork_query, &minus1, &info, 1, 1);
  agree_info(a, info, "pdsyevd (workspace query)", "");
  int lwork = workspace_size(work_query) + back_transform_workspace(a);
  // pdsyevd's own query can under-report the iwork it needs on small grids.
  int liwork = std::max(iwork_query, 7 * n + 8 * a.grid().npcol() + 2);
  std::vector<double> work(lwork);
  std::vector<int> iwork(liwork);
  pdsyevd_("V", "L", &n, a.data(), &one, &one, a.desc(), w.data(), z.data(), &one, &one, z.desc(),
           work.data(), &lwork, iwork.data(), &liwork, &info, 1, 1);
  agree_info(a, info, "pdsyevd", "the eigensolver did not converge");
  broadcast_values(a, w);
  return w;
}

std::vector<double> syevr(DistMatrix& a, int il, int iu, DistMatrix& z) {
  const int n = static_cast<int>(a.rows()), one = 1;
  // pdsyevr hands pdormtr a fixed workspace of max(18n, np*mq + 2nb^2), with
  // mq the local column count of the iu-il+1 wanted vectors; pdormtr needs
  // about (np + mq) nb + nb^2. That fails when mq < nb <= np (few eigenpairs,
  // large blocks): pdormtr refuses, the vectors are not back-transformed and
  // INFO is still 0. Asking for at least nb eigenpairs keeps mq >= nb.
  const int nb = a.row_dist().block_size();
  const int wanted = iu - il + 1;
  const int il_computed = std::max(1, std::min(il, iu - std::min(n, nb) + 1));
  const double vl = 0, vu = 0;
  int m = 0, nz = 0, info = 0, minus1 = -1, iwork_query = 0;
  double work_query = 0;
  std::vector<double> w(n);
  with_stdout_silenced([&] {
    pdsyevr_("V", "I", "L", &n, a.data(), &one, &one, a.desc(), &vl, &vu, &il_computed, &iu, &m,
             &nz, w.data(), z.data(), &one, &one, z.desc(), &work_query, &minus1, &iwork_query,
             &minus1, &info, 1, 1, 1);
  });
  agree_info(a, info, "pdsyevr (workspace query)", "");
  int lwork = workspace_size(work_query) + back_transform_workspace(a);
  int liwork = iwork_query + 1;
  std::vector<double> work(lwork);
  std::vector<int> iwork(liwork);
  pdsyevr_("V", "I", "L", &n, a.data(), &one, &one, a.desc(), &vl, &vu, &il_computed, &iu, &m,
           &nz, w.data(), z.data(), &one, &one, z.desc(), work.data(), &lwork, iwork.data(),
           &liwork, &info, 1, 1, 1);
  agree_info(a, info, "pdsyevr", "the eigensolver did not converge");
  const int computed = iu - il_computed + 1;
  if (m != computed || nz != m)
    agree(a.grid().comm(), "pdsyevr returned " + std::to_string(nz) + " of " +
                               std::to_string(computed) + " requested eigenvectors");
  broadcast_values(a, w);
  // Keep only il..iu; their vectors are the last `wanted` computed columns.
  const int skip = computed - wanted;
  // Column by column, ascending: a target column is never a source still unread.
  if (skip > 0)
    for (int j = 0; j < wanted; ++j) copy(z, 0, skip + j, n, 1, z, 0, j);
  return std::vector<double>(w.begin() + skip, w.begin() + computed);
}

void gemm(char trans_a, char trans_b, double alpha, const DistMatrix& a, const DistMatrix& b,
          double beta, DistMatrix& c) {
  const int m = static_cast<int>(c.rows()), n = static_cast<int>(c.cols());
  const int k = static_cast<int>(trans_a == 'N' ? a.cols() : a.rows());
  const int one = 1;
  pdgemm_(&trans_a, &trans_b, &m, &n, &k, &alpha, a.data(), &one, &one, a.desc(), b.data(), &one,
          &one, b.desc(), &beta, c.data(), &one, &one, c.desc(), 1, 1);
}

void posv(DistMatrix& a, DistMatrix& b) {
  const int n = static_cast<int>(a.rows()), nrhs = static_cast<int>(b.cols()), one = 1;
  int info = 0;
  pdposv_("L", &n, &nrhs, a.data(), &one, &one, a.desc(), b.data(), &one, &one, b.desc(), &info,
          1);
  std::string message;
  if (info > 0)
    message = "pdposv: the leading minor of order " + std::to_string(info) +
              " is not positive definite";
  else if (info < 0)
    message = "pdposv failed with INFO = " + std::to_string(info) + " (illegal argument)";
  agree(a.grid().comm(), message);
}

void transpose(const DistMatrix& a, DistMatrix& c) {
  const int m = static_cast<int>(c.rows()), n = static_cast<int>(c.cols()), one = 1;
  const double alpha = 1, beta = 0;
  pdtran_(&m, &n, &alpha, a.data(), &one, &one, a.desc(), &beta, c.data(), &one, &one, c.desc());
}

}  // namespace kembed::scalapack
