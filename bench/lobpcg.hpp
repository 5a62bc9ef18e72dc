#pragma once
/// @file Block LOBPCG (no preconditioner) for the top k eigenpairs, written
/// for the pass-count benchmark (bench/krylov_passes.cpp) only: it is
/// measured against the library's block Krylov solver, not offered to users.
#include <cstdint>
#include <vector>

#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::bench {

struct LobpcgSettings {
  /// On ||A v - theta v|| / max |Ritz value| of every returned pair, as KrylovSettings::tol.
  double tol = 1e-12;
  int guard = 6;  ///< block width s = k + guard
  int max_iterations = 1000;
  std::uint64_t seed = 42;
};

struct LobpcgResult {
  std::vector<double> values;  ///< k largest, descending
  DistMatrix vectors;          ///< n x k on a's grid and blocking
  int passes = 0;              ///< block products (passes over A)
  long long matvecs = 0;       ///< columns multiplied, summed over the products
  int iterations = 0;
  bool converged = false;
};

/// Collective: the k algebraically largest eigenpairs of the symmetric `a`
/// (not modified). Each iteration multiplies A once, by the residuals of the
/// pairs not yet within tol (soft locking), and takes the s best Ritz pairs
/// of span[X, P, W], kept orthonormal (Gram-Schmidt twice, column by column,
/// with A P updated alongside so only W is multiplied).
LobpcgResult lobpcg_top_eigenpairs(const DistMatrix& a, int k, const LobpcgSettings& settings);

}  // namespace kembed::bench
