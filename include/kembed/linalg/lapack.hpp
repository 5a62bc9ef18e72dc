#pragma once
/// @file Typed wrappers of the serial BLAS/LAPACK routines kembed uses on
/// small or local column-major matrices. Errors throw (callers on all ranks
/// see identical inputs, or agree afterwards).
#include <vector>

namespace kembed::lapack {

/// C = alpha op(A) op(B) + beta C on column-major arrays (dgemm).
void gemm(char trans_a, char trans_b, int m, int n, int k, double alpha, const double* a, int lda,
          const double* b, int ldb, double beta, double* c, int ldc);
/// The same in single precision (sgemm).
void gemm(char trans_a, char trans_b, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc);

/// The lower triangle of the n x n column-major C <- alpha A^T A + beta C,
/// for the k x n column-major A (dsyrk, 'L', 'T'); the upper triangle is
/// not touched.
void syrk_lower_transposed(int n, int k, double alpha, const double* a, int lda, double beta,
                           double* c, int ldc);

/// The lower triangle of the n x n column-major C <- alpha A A^T + beta C,
/// for the n x k column-major A (dsyrk, 'L', 'N'); the upper triangle is
/// not touched.
void syrk_lower(int n, int k, double alpha, const double* a, int lda, double beta, double* c,
                int ldc);

/// All eigenpairs of the symmetric n x n column-major `a` (dsyevd): returns
/// ascending eigenvalues; `a` is overwritten by the orthonormal eigenvectors.
std::vector<double> syevd(std::vector<double>& a, int n);

/// Cholesky factor R (upper) of the n x n SPD `a` in place (dpotrf).
/// Returns false if `a` is not numerically positive definite.
bool potrf_upper(std::vector<double>& a, int n);

/// B <- B R^{-1} for the m x n column-major B and upper-triangular R (dtrsm).
void solve_right_upper(const std::vector<double>& r, int n, double* b, int m, int ldb);

}  // namespace kembed::lapack
