#pragma once
/// @file Preconditioned block LOBPCG (Knyazev, 2001) for the top k
/// eigenpairs of a SymmetricOperator: the solver of Laplacian eigenmaps'
/// kNN graph, whose wanted eigenvalues crowd so close to the top that a
/// polynomial method needs about n^0.5 products, while a multigrid
/// preconditioner makes the iteration count nearly independent of n.
#include <cstdint>
#include <functional>
#include <vector>

#include "kembed/spectral/symmetric_operator.hpp"

namespace kembed::spectral {

/// What LOBPCG multiplies the residuals by: a symmetric positive
/// semi-definite approximation of (sigma I - A)^+ for a sigma at or above
/// A's top eigenvalue, on A's row layout. Collective.
class Preconditioner {
 public:
  virtual ~Preconditioner() = default;
  Preconditioner() = default;
  Preconditioner(const Preconditioner&) = delete;
  Preconditioner& operator=(const Preconditioner&) = delete;
  /// z[:, 0:width] = T r[:, 0:width] (this rank's rows, column-major).
  virtual void apply(const double* r, int ldr, int width, double* z, int ldz) = 0;
};

struct LobpcgSettings {
  /// On ||A v - theta v|| / max |theta| of every returned pair (as KrylovSettings::tol).
  double tol = 1e-12;
  int guard = 3;  ///< columns beyond k in the block: they speed the k-th pair's convergence
  int max_iterations = 2000;
  std::uint64_t seed = 42;  ///< start block, the same on any rank count
  /// Called after every iteration on every rank with identical arguments
  /// (print from rank 0): iteration, converged pairs, k, largest residual.
  std::function<void(int, int, int, double)> progress{};
};

struct LobpcgResult {
  std::vector<double> values;     ///< k largest eigenvalues, descending
  /// n x k orthonormal vectors in a's row layout: rows().local_size() rows,
  /// column-major with leading dimension max(1, rows().local_size()).
  std::vector<double> vectors;
  std::vector<double> residuals;  ///< ||A v - theta v|| / max |theta| per pair (explicit product)
  int iterations = 0;
  long long products = 0;         ///< block products of A
  long long preconditioned = 0;   ///< applications of the preconditioner
  /// Every pair within tol, or (at_precision_floor) the largest residual
  /// no longer falling but at most kFloorAccepted.
  bool converged = false;
  bool at_precision_floor = false;
};

/// Iterations without the largest residual halving, once it is at most
/// kFloorAccepted, after which LOBPCG stops at its precision floor
/// (converged, with at_precision_floor). A slower fall above kFloorAccepted
/// goes on to max_iterations.
/// Swiss roll, n = 10^6, 2 ranks: the residual fell by about 0.73 per
/// iteration to 1e-12 in 64 iterations, then crept from 8e-13 to 2.5e-13
/// in the next 110.
inline constexpr int kFloorIterations = 48;
inline constexpr double kFloorAccepted = 1e-10;

/// Collective over a.grid(): the k algebraically largest eigenpairs of `a`
/// in the orthogonal complement of `deflate` (this rank's rows of a unit
/// vector; empty: none), by LOBPCG with the preconditioner `t`. Each
/// iteration applies T to the residuals (W), makes W and the previous
/// direction P orthogonal to the current vectors X (twice) and to
/// `deflate`, takes an orthonormal basis Z of [W, P] from its scaled Gram
/// matrix (near-dependent directions dropped), multiplies A once, by Z, and
/// keeps the k + guard best Ritz pairs of span[X, Z]. A X is updated
/// alongside, and computed afresh (with a Rayleigh-Ritz step on X) every 16
/// iterations and before convergence is accepted.
LobpcgResult lobpcg_top_eigenpairs(SymmetricOperator& a, int k, Preconditioner& t,
                                   const LobpcgSettings& settings,
                                   const std::vector<double>& deflate = {});

}  // namespace kembed::spectral
