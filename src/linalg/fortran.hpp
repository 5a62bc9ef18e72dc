#pragma once
// Private: every Fortran and BLACS prototype kembed calls, in one place.
// Fortran CHARACTER arguments carry hidden length arguments after all others;
// they are declared here (std::size_t) and always passed as 1.
#include <mpi.h>

#include <cstddef>

extern "C" {

// BLACS (C interface shipped with ScaLAPACK)
int Csys2blacs_handle(MPI_Comm comm);
void Cfree_blacs_system_handle(int handle);
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int context);

// ScaLAPACK tools
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb,
               const int* irsrc, const int* icsrc, const int* ictxt, const int* lld, int* info);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);

// ScaLAPACK / PBLAS
void pdsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* ia,
              const int* ja, const int* desca, double* w, double* z, const int* iz, const int* jz,
              const int* descz, double* work, const int* lwork, int* iwork, const int* liwork,
              int* info, std::size_t jobz_len, std::size_t uplo_len);
void pdsyevr_(const char* jobz, const char* range, const char* uplo, const int* n, double* a,
              const int* ia, const int* ja, const int* desca, const double* vl, const double* vu,
              const int* il, const int* iu, int* m, int* nz, double* w, double* z, const int* iz,
              const int* jz, const int* descz, double* work, const int* lwork, int* iwork,
              const int* liwork, int* info, std::size_t jobz_len, std::size_t range_len,
              std::size_t uplo_len);
void pdgemr2d_(const int* m, const int* n, const double* a, const int* ia, const int* ja,
               const int* desca, double* b, const int* ib, const int* jb, const int* descb,
               const int* ictxt);
void pdgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
             const double* alpha, const double* a, const int* ia, const int* ja, const int* desca,
             const double* b, const int* ib, const int* jb, const int* descb, const double* beta,
             double* c, const int* ic, const int* jc, const int* descc, std::size_t transa_len,
             std::size_t transb_len);
void pdtran_(const int* m, const int* n, const double* alpha, const double* a, const int* ia,
             const int* ja, const int* desca, const double* beta, double* c, const int* ic,
             const int* jc, const int* descc);
void pdposv_(const char* uplo, const int* n, const int* nrhs, double* a, const int* ia,
             const int* ja, const int* desca, double* b, const int* ib, const int* jb,
             const int* descb, int* info, std::size_t uplo_len);
void pdgehrd_(const int* n, const int* ilo, const int* ihi, double* a, const int* ia,
              const int* ja, const int* desca, double* tau, double* work, const int* lwork,
              int* info);
void pdlahqr_(const int* wantt, const int* wantz, const int* n, const int* ilo, const int* ihi,
              double* a, const int* desca, double* wr, double* wi, const int* iloz,
              const int* ihiz, double* z, const int* descz, double* work, const int* lwork,
              int* iwork, const int* ilwork, int* info);

// BLAS / LAPACK (serial)
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
            const double* beta, double* c, const int* ldc, std::size_t transa_len,
            std::size_t transb_len);
void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
            const float* beta, float* c, const int* ldc, std::size_t transa_len,
            std::size_t transb_len);
void dsyrk_(const char* uplo, const char* trans, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* beta, double* c, const int* ldc,
            std::size_t uplo_len, std::size_t trans_len);
void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
            const int* n, const double* alpha, const double* a, const int* lda, double* b,
            const int* ldb, std::size_t side_len, std::size_t uplo_len, std::size_t transa_len,
            std::size_t diag_len);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info,
             std::size_t uplo_len);
// Eigenvalues of a general matrix (the tests' serial reference of pdlahqr).
void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda,
            double* wr, double* wi, double* vl, const int* ldvl, double* vr, const int* ldvr,
            double* work, const int* lwork, int* info, std::size_t jobvl_len,
            std::size_t jobvr_len);
// LAPACK's own version (for kembed --version).
void ilaver_(int* major, int* minor, int* patch);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
             double* work, const int* lwork, int* iwork, const int* liwork, int* info,
             std::size_t jobz_len, std::size_t uplo_len);

}  // extern "C"
