#pragma once
/// @file Typed wrappers of the ScaLAPACK/PBLAS routines kembed uses. Each one
/// queries workspace, allocates, calls, and agrees on INFO across the grid
/// before throwing, so every rank takes the same path.
#include <vector>

#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::scalapack {

/// All eigenpairs of the symmetric matrix `a` (lower triangle used) by
/// divide and conquer (pdsyevd): returns the n eigenvalues in ascending order;
/// column j of `z` is the eigenvector of eigenvalue j. `a` is destroyed.
/// @pre a and z are n x n on the same grid with square blocks (mb == nb).
std::vector<double> syevd(DistMatrix& a, DistMatrix& z);

/// Eigenpairs il..iu (1-based, ascending order) of the symmetric matrix `a`
/// by MRRR (pdsyevr): returns iu - il + 1 ascending eigenvalues, vectors in
/// columns 0.. of `z`. `a` is destroyed.
/// @pre a and z are n x n on the same grid with square blocks.
std::vector<double> syevr(DistMatrix& a, int il, int iu, DistMatrix& z);

/// C = alpha op(A) op(B) + beta C (pdgemm); trans_a / trans_b are 'N' or 'T'.
void gemm(char trans_a, char trans_b, double alpha, const DistMatrix& a, const DistMatrix& b,
          double beta, DistMatrix& c);

/// Solves A X = B for symmetric positive definite A by Cholesky (pdposv):
/// B is overwritten with X, A with its factor (lower triangle used). Throws
/// (agreed) naming the leading minor that is not positive definite.
/// @pre a is n x n, b is n x nrhs, same grid, square blocks, same block size
void posv(DistMatrix& a, DistMatrix& b);
/// C = A^T (pdtran). @pre c is a.cols() x a.rows() on the same grid
void transpose(const DistMatrix& a, DistMatrix& c);

}  // namespace kembed::scalapack
