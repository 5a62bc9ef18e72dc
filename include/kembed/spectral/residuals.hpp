#pragma once
/// @file Residuals of computed eigenpairs.
#include <string>
#include <vector>

#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/spectral/symmetric_operator.hpp"

namespace kembed::spectral {

/// Collective over a.grid(): ||A v_j - lambda_j v_j||_2 for every column v_j
/// of `v`, through one a.apply of all of them.
/// @pre v is n x k on a.grid() (any blocking), values.size() == k
std::vector<double> residual_norms(SymmetricOperator& a, const DistMatrix& v,
                                   const std::vector<double>& values);
/// Collective: ||A v_j - lambda_j v_j||_2 for every column v_j of `v`.
/// @pre a is n x n, v is n x k on the same grid and blocking, values.size() == k
std::vector<double> residual_norms(const DistMatrix& a, const DistMatrix& v,
                                   const std::vector<double>& values);
/// The same for single-precision storage of `a`, through the product the
/// Krylov solver uses (so it measures the operator the solver saw).
std::vector<double> residual_norms(const SingleMatrix& a, const DistMatrix& v,
                                   const std::vector<double>& values);

/// Collective: an agreed error if any relative residual exceeds
/// kResidualLimit (a solver that reported success with a wrong result).
/// @pre `relative` is identical on every rank
void reject_inaccurate_pairs(const Comm& comm, const std::vector<double>& relative,
                             const std::string& solver);

}  // namespace kembed::spectral
