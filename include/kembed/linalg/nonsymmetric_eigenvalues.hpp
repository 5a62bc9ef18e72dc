#pragma once
/// @file The eigenvalues of a general (nonsymmetric) square matrix, without
/// vectors: Hessenberg reduction (pdgehrd) then the double-shift Hessenberg
/// QR algorithm (pdlahqr). O(n^3) flops, no storage beyond the matrix and
/// O(n + local size) workspace.
///
/// Why pdlahqr and not pdhseqr: ScaLAPACK 2.2.1's pdhseqr (Debian's
/// libscalapack-openmpi) hands matrices above its small-size threshold to
/// pdlaqr0, whose aggressive early deflation printed PDGEHRD / PDORMHR
/// argument errors and crashed with the default 8 MB stack (n = 2000 on 1
/// and 2 ranks); pdlahqr gave the eigenvalues of numpy.linalg.eigvals
/// (largest real one to 1.5e-14 relative) in 18 s on one rank.
#include <vector>

#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::scalapack {

/// The n eigenvalues of a general matrix as real and imaginary parts, in the
/// order pdlahqr leaves them (not sorted); complex conjugate pairs are
/// adjacent, the one with positive imaginary part first, and a real
/// eigenvalue has an imaginary part of exactly 0.
struct Eigenvalues {
  std::vector<double> real, imag;
};

/// Collective: all eigenvalues of the n x n matrix `a` (destroyed: it holds
/// the Schur form's quasi-triangle on return). The same on every rank.
/// INFO != 0 of either routine is an agreed error.
/// @pre a is square with square blocks (mb == nb).
Eigenvalues nonsymmetric_eigenvalues(DistMatrix& a);

}  // namespace kembed::scalapack
