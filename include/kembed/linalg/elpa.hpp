#pragma once
/// @file ELPA's two-stage eigensolver on a DistMatrix (optional at build time).
#include <vector>

#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::elpa {

/// True if this kembed was built with ELPA.
bool available();

/// Collective: the `nev` smallest eigenpairs of the symmetric `a` by ELPA's
/// two-stage solver: ascending eigenvalues; eigenvectors in columns
/// 0..nev-1 of `z`. `a` is overwritten. Throws an agreed Error if ELPA is not
/// built in or fails. @pre a, z n x n on the same grid, square blocks
std::vector<double> lowest_eigenpairs(DistMatrix& a, int nev, DistMatrix& z);

}  // namespace kembed::elpa
