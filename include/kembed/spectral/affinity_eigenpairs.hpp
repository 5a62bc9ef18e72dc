#pragma once
/// @file The top eigenpairs of a normalized affinity M = D^(-1/2) W D^(-1/2)
/// (spectrum in [-1, 1], largest eigenvalue 1), whose wanted eigenvalues
/// crowd just below 1: the block Krylov solver run on a Chebyshev filter
/// p(M) that spreads them apart, then the eigenvalues taken as Rayleigh
/// quotients with M and the residuals computed with M itself.
#include <string>
#include <vector>

#include "kembed/spectral/krylov.hpp"
#include "kembed/spectral/symmetric_operator.hpp"

namespace kembed::spectral {

/// How the eigenpairs of the normalized affinity are computed.
struct AffinitySolve {
  /// Chebyshev filter (true) or the plain Krylov solver on M (false, the reference).
  bool filter = true;
  /// Products of M per filter application; 0: chosen from the cut so that
  /// the damped part shrinks by kFilterDamping, within [8, kMaxFilterDegree].
  int degree = 0;
  /// Krylov block width on p(M); 0: q + 5 (wider blocks cost more products
  /// of M per filtered product and are not needed: p(M) separates the pairs).
  int block = 0;
};

/// T_m(L(1)) >= 1 / kFilterDamping: measured at n = 16,000 (swiss roll, K = 10),
/// degrees 30, 60, 120, 250 took 564, 624, 744, 1024 products of M: the
/// Krylov solver on p(M) separates the rest, so a mild filter is cheapest.
inline constexpr double kFilterDamping = 0.1;
inline constexpr int kMaxFilterDegree = 400;

struct AffinityEigenpairs {
  std::vector<double> values;  ///< q Rayleigh quotients v^T M v, descending
  /// n x q unit vectors in M's row layout: this rank's rows().local_size()
  /// rows, column-major with leading dimension max(1, local rows).
  std::vector<double> vectors;
  std::vector<double> residual_norms;  ///< ||M v - mu v||_2 per pair
  int cycles = 0;                      ///< Krylov restart cycles, both stages
  long long products = 0;              ///< block products of M, both stages
  std::string note;                    ///< the filter used, for run.json
  bool converged = false;
  std::string failure;  ///< krylov_failure of the last stage, when not converged
};

/// Collective over m.grid(): the q algebraically largest eigenpairs of the
/// normalized affinity `m` (spectrum in [-1, 1]). With the filter: (1) a
/// short Krylov run on M (2 cycles, tol 1e-2) whose q-th Ritz value is a
/// lower bound of M's q-th eigenvalue (Cauchy interlacing) and sets the cut
/// a little below it; (2) Krylov to settings.tol on p(M), damping [-1, cut];
/// (3) mu = v^T M v and ||M v - mu v|| with M; the pairs are M's top q when
/// every mu exceeds the cut, else (a cut above the q-th eigenvalue) the plain
/// Krylov solver on M runs instead and the note says so.
AffinityEigenpairs top_affinity_eigenpairs(SymmetricOperator& m, int q,
                                           const KrylovSettings& settings,
                                           const AffinitySolve& how);

}  // namespace kembed::spectral
