#pragma once
/// @file The top-k eigenpairs of a symmetric distributed matrix.
#include <string>
#include <vector>

#include "kembed/linalg/dist_matrix.hpp"

namespace kembed {

enum class Solver {
  evd,  ///< ScaLAPACK pdsyevd: all eigenpairs (the reference path)
  evr,  ///< ScaLAPACK pdsyevr: only eigenpairs n-k+1..n
};

Solver parse_solver(const std::string& name);
std::string solver_name(Solver solver);

/// The k largest eigenpairs, in descending order of eigenvalue.
struct Eigenpairs {
  std::vector<double> values;    ///< k eigenvalues, descending
  DistMatrix vectors;            ///< n x k, column j belongs to values[j]
  std::vector<double> spectrum;  ///< all n eigenvalues, descending (evd only; else empty)
};

/// Collective: the k largest eigenpairs of the symmetric matrix `a` (its lower
/// triangle is read; `a` is overwritten). @pre 1 <= k <= n, square blocks.
Eigenpairs top_eigenpairs(DistMatrix& a, int k, Solver solver);

}  // namespace kembed
