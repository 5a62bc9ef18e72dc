#pragma once
/// @file Chebyshev-filtered subspace iteration for the top k eigenpairs
/// (ChASE's method, mirrored to the top of the spectrum), written for the
/// pass-count benchmark (bench/krylov_passes.cpp) only: it is measured against
/// the library's block Krylov solver, not offered to users.
#include <cstdint>
#include <vector>

#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::bench {

struct ChebSettings {
  /// On ||A v - theta v|| / max |Ritz value| of every returned pair, as KrylovSettings::tol.
  double tol = 1e-12;
  int guard = 6;           ///< block width s = k + guard
  int first_degree = 10;   ///< filter degree of the first step (Ritz values from a random block)
  int max_degree = 36;     ///< cap of the degree chosen from the spectrum estimate (ChASE: 36)
  /// A lower bound of the spectrum, the far end of the damped interval. 0 for a
  /// positive semidefinite matrix (a centered kernel of a positive definite kernel).
  double lower_bound = 0;
  int max_iterations = 300;
  std::uint64_t seed = 42;
};

struct ChebResult {
  std::vector<double> values;  ///< k largest, descending
  DistMatrix vectors;          ///< n x k on a's grid and blocking
  int passes = 0;              ///< block products (passes over A)
  long long matvecs = 0;       ///< columns multiplied, summed over the products
  int iterations = 0;          ///< filter + Rayleigh-Ritz steps after the first Rayleigh-Ritz
  bool converged = false;
};

/// Collective: the k algebraically largest eigenpairs of the symmetric `a`
/// (not modified). Each step filters the unlocked columns of an orthonormal
/// block by the scaled Chebyshev polynomial that damps [lower_bound, theta_s]
/// (theta_s the block's smallest Ritz value) and is 1 at the largest Ritz
/// value; column j gets the degree its residual and Ritz value ask for to
/// reach tol (ChASE's rule), so a degree-m filter costs m passes. Then
/// Gram-Schmidt (twice, column by column), one pass for Rayleigh-Ritz, and
/// converged leading pairs are locked (kept, no longer filtered).
ChebResult chebyshev_top_eigenpairs(const DistMatrix& a, int k, const ChebSettings& settings);

}  // namespace kembed::bench
