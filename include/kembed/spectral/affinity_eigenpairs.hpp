#pragma once
/// @file The top eigenpairs of a normalized affinity M = D^(-1/2) W D^(-1/2)
/// (spectrum in [-1, 1], largest eigenvalue 1), whose wanted eigenvalues
/// crowd just below 1: LOBPCG preconditioned by the graph's multigrid (the
/// default), or the block Krylov solver run on a Chebyshev filter p(M) that
/// spreads them apart; then the eigenvalues taken as Rayleigh quotients
/// with M and the residuals computed with M itself.
#include <functional>
#include <string>
#include <vector>

#include "kembed/graph/graph_multigrid.hpp"
#include "kembed/spectral/krylov.hpp"
#include "kembed/spectral/lobpcg.hpp"
#include "kembed/spectral/symmetric_operator.hpp"

namespace kembed::spectral {

/// The method of top_affinity_eigenpairs.
enum class AffinityMethod {
  /// LOBPCG with one multigrid V-cycle of the graph Laplacian as its
  /// preconditioner: iterations nearly independent of n (swiss roll, K = 10,
  /// k = 2, 2 ranks: 39, 47 and 69 at n = 16,000, 10^5 and 10^6, where the
  /// filter took 598, 1652 and 6280 products). Needs the graph's rows (the
  /// hierarchy) and the top vector to deflate; without them, or when the
  /// hierarchy cannot be built, or LOBPCG does not converge within
  /// AffinitySolve::max_iterations, the filter runs instead.
  multigrid,
  filter,  ///< Krylov on the Chebyshev filter p(M)
  plain,   ///< Krylov on M (the reference)
};

/// How the eigenpairs of the normalized affinity are computed.
struct AffinitySolve {
  AffinityMethod method = AffinityMethod::multigrid;
  /// multigrid: LOBPCG's columns beyond the wanted pairs (at n = 10^6: 2
  /// took 69 iterations, 12.5 s; 3 took 68, 17.8 s), and the hierarchy.
  int guard = 2;
  /// multigrid: LOBPCG iterations before the filter runs instead (a graph
  /// on which the multigrid preconditions poorly; 39-69 at n = 16,000-10^6).
  int max_iterations = 500;
  /// multigrid: called after every LOBPCG iteration (LobpcgSettings::progress).
  std::function<void(int, int, int, double)> progress{};
  graph::MultigridSettings multigrid{};
  /// Products of M per filter application; 0: chosen from the cut so that
  /// the damped part shrinks by kFilterDamping, within [8, kMaxFilterDegree].
  int degree = 0;
  /// Krylov block width on p(M); 0: affinity_block_width.
  int block = 0;
  /// Blocks per restart cycle of both runs; 0: krylov_depth's default.
  int depth = 0;
  /// Restart cycles of the rough first run on M whose Ritz value sets the cut.
  int rough_cycles = 2;
  /// Residual at which the rough run stops earlier.
  double rough_tol = 1e-2;
  /// With the top eigenvector known (top_affinity_eigenpairs' `top`): search
  /// the others in its orthogonal complement (P M P, P = I - u u^T), one
  /// pair fewer, and the filter's cut set below the next wanted eigenvalue.
  bool deflate = true;
};

/// T_m(L(1)) >= 1 / kFilterDamping: measured at n = 16,000 (swiss roll, K = 10),
/// degrees 30, 60, 120, 250 took 564, 624, 744, 1024 products of M: the
/// Krylov solver on p(M) separates the rest, so a mild filter is cheapest.
inline constexpr double kFilterDamping = 0.1;
inline constexpr int kMaxFilterDegree = 400;

/// The Krylov block width on p(M) for q wanted pairs of an order-n M:
/// how.block, or q + 5. Measured (swiss roll, K = 10, k = 2, the top vector
/// deflated so q = 2; products of M): n = 16,000: width 7 570 products,
/// width 12 569 (1.7 times the columns); n = 100,000: width 7 1652, width 12
/// 936, width 16 726 (the same columns in fewer products: 32.5 against
/// 51.5 s of solve for widths 12 and 7, load 5). Wider blocks would pay at
/// large n, but the basis of depth x width vectors of n is the larger part
/// of the memory there (n = 10^6 on 2 ranks, width 12: 1.1 GB per rank,
/// above the 1 GB aimed at), and a shallower basis (depth 6 or 8) made the
/// rough run's bound, and with it the filter, weaker (1938 and 1408
/// products at n = 100,000).
int affinity_block_width(int q, std::int64_t n, const AffinitySolve& how);

struct AffinityEigenpairs {
  std::vector<double> values;  ///< q Rayleigh quotients v^T M v, descending
  /// n x q unit vectors in M's row layout: this rank's rows().local_size()
  /// rows, column-major with leading dimension max(1, local rows).
  std::vector<double> vectors;
  std::vector<double> residual_norms;  ///< ||M v - mu v||_2 per pair
  int cycles = 0;                      ///< Krylov restart cycles (both stages), or LOBPCG iterations
  long long products = 0;              ///< block products of M (all stages)
  /// multigrid: V-cycles applied (each about 3 products of the graph
  /// Laplacian on the finest level) and the vertices of each level.
  long long preconditioned = 0;
  std::vector<std::int64_t> levels;
  std::string note;                    ///< the filter used, for run.json
  bool converged = false;
  std::string failure;  ///< krylov_failure of the last stage, when not converged
};

/// Collective over m.grid(): the q algebraically largest eigenpairs of the
/// normalized affinity `m` (spectrum in [-1, 1]). With how.method multigrid,
/// `multigrid` (the hierarchy of m's graph, usable) and `top`: LOBPCG on
/// P M P for the other q - 1 pairs, preconditioned by D^(1/2) B D^(1/2) (B
/// one V-cycle of D - W), to settings.tol. With the filter: (1) a
/// short Krylov run on M (2 cycles, tol 1e-2) whose q-th Ritz value is a
/// lower bound of M's q-th eigenvalue (Cauchy interlacing) and sets the cut
/// a little below it; (2) Krylov to settings.tol on p(M), damping [-1, cut];
/// (3) mu = v^T M v and ||M v - mu v|| with M; the pairs are M's top q when
/// every mu exceeds the cut, else (a cut above the q-th eigenvalue) the plain
/// Krylov solver on M runs instead and the note says so. With `top` (this
/// rank's rows of a unit eigenvector of eigenvalue 1, as sqrt(degree) /
/// ||sqrt(degree)|| is for a connected graph) and how.deflate, steps (1)-(2)
/// run on P M P for the other q - 1 pairs, and `top` is returned first with
/// its own Rayleigh quotient and residual.
AffinityEigenpairs top_affinity_eigenpairs(SymmetricOperator& m, int q,
                                           const KrylovSettings& settings,
                                           const AffinitySolve& how,
                                           const std::vector<double>& top = {},
                                           graph::GraphMultigrid* multigrid = nullptr);

}  // namespace kembed::spectral
