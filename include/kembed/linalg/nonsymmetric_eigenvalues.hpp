#pragma once
/// @file The eigenvalues of a general (nonsymmetric) square matrix, without
/// vectors: Hessenberg reduction (pdgehrd) then the Hessenberg QR algorithm
/// (pdhseqr). O(n^3) flops, no storage beyond the matrix and O(n) workspace.
#include <vector>

#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::scalapack {

/// The n eigenvalues of a general matrix as real and imaginary parts, in the
/// order pdhseqr leaves them (not sorted); complex conjugate pairs are
/// adjacent, the one with positive imaginary part first, and a real
/// eigenvalue has an imaginary part of exactly 0.
struct Eigenvalues {
  std::vector<double> real, imag;
};

/// Collective: all eigenvalues of the n x n matrix `a` (destroyed: it holds
/// the Schur form's quasi-triangle on return). The same on every rank.
/// INFO != 0 of either routine is an agreed error.
/// @pre a is square with square blocks (mb == nb) of at least 6 rows.
Eigenvalues nonsymmetric_eigenvalues(DistMatrix& a);

}  // namespace kembed::scalapack
