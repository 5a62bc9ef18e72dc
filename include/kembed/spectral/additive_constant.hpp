#pragma once
/// @file The additive constants that make non-Euclidean dissimilarities
/// Euclidean (`kembed mds --add`): Cailliez's, added to the dissimilarities,
/// and Lingoes's, added (twice) to their squares, both off the diagonal.
#include <string>

#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::spectral {

enum class AdditiveMethod { none, cailliez, lingoes };

/// "none", "cailliez" or "lingoes" (the option's and run.json's spelling).
std::string additive_method_name(AdditiveMethod method);

/// What the constant's computation found; the same on every rank.
struct AdditiveConstant {
  AdditiveMethod method = AdditiveMethod::none;
  double constant = 0;
  /// Cailliez: the largest real part over all 2n eigenvalues of the block
  /// matrix (R's cmdscale takes it as the constant); equal to `constant`
  /// unless a complex pair lies right of the largest real eigenvalue.
  double largest_real_part = 0;
  int complex_eigenvalues = 0;  ///< Cailliez: eigenvalues with |imag| above the tolerance
  /// Lingoes: lambda_min of B = -1/2 J D^(2) J before the correction.
  double smallest_eigenvalue = 0;
};

/// Collective: Cailliez's constant c* of the n x n dissimilarities `d` (zero
/// diagonal; left unchanged): with B2 = -1/2 J D^(2) J and B1 = -1/2 J D J,
/// the largest real eigenvalue of the 2n x 2n matrix [[0, 2 B2], [-I, -4 B1]],
/// whose real eigenvalues are the c that make B2 + 2c B1 + c^2/2 J singular
/// on 1-perp. For c >= c*, d_ij + c (i != j) are Euclidean distances.
/// Formed block-cyclically (blocks of max(nb, 8)) and solved by
/// pdgehrd + pdlahqr: O((2n)^3) flops, 4 n^2 + n^2 doubles beside `d`.
/// Eigenvalues with |imag| <= sqrt(eps) max|lambda| count as real; none
/// real is an agreed error.
/// @pre d is n x n with square blocks, full storage
AdditiveConstant cailliez_constant(const DistMatrix& d);

/// Collective: Lingoes's constant c = -lambda_min(B2), B2 = -1/2 J D^(2) J,
/// the smallest eigenvalue by pdsyevr (clamped at 0: B2 always has the
/// eigenvalue 0 of the vector 1, so lambda_min <= 0 up to round-off).
/// For this c, d_ij^2 + 2c (i != j) are squared Euclidean distances
/// (B becomes B2 + c J, positive semidefinite).
/// @pre d is n x n with square blocks, full storage
AdditiveConstant lingoes_constant(const DistMatrix& d);

/// The corrected dissimilarity of two distinct objects at dissimilarity
/// `d`: d + c (Cailliez) or sqrt(d^2 + 2c) (Lingoes); `d` itself for none.
double corrected_dissimilarity(AdditiveMethod method, double c, double d);

/// `d` <- the corrected dissimilarities off the diagonal (local, no communication).
/// @pre d is square, full storage
void apply_additive_constant(DistMatrix& d, AdditiveMethod method, double c);

}  // namespace kembed::spectral
