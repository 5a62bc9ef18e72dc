#pragma once
/// @file The top-k eigenpairs of a symmetric distributed matrix.
#include <functional>
#include <string>
#include <vector>

#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/spectral/krylov.hpp"

namespace kembed::spectral {

enum class Solver {
  evd,     ///< ScaLAPACK pdsyevd: all eigenpairs (the reference path)
  evr,     ///< ScaLAPACK pdsyevr: only eigenpairs n-k+1..n
  krylov,  ///< restarted block Krylov (PBLAS products only): top k
  elpa,    ///< ELPA two-stage, nev = k (when built with ELPA)
  automatic,  ///< "auto": krylov when its basis is at most n / 2, else evd
};

Solver parse_solver(const std::string& name);
std::string solver_name(Solver solver);

/// The solver `auto` stands for on an n x n problem with k wanted pairs:
/// krylov when its basis (q b columns, see krylov_block_width) is at most
/// n / 2, otherwise evd. Other solvers are returned unchanged.
Solver resolve_solver(Solver solver, std::int64_t n, int k,
                      const KrylovSettings& krylov = KrylovSettings{});

/// What happened to a krylov run that did not converge, for notes and errors:
///   krylov did not reach --tol T in C cycles (worst relative residual R)
///   krylov broke down in cycle C: its worst relative residual rose from A to
///   B (...), so it was stopped before reaching --tol T
/// (numbers as %.3g).
std::string krylov_failure(const KrylovResult& r, double tol);

/// Relative residual above which a fit rejects an eigenpair as wrong (a guard
/// against a solver that reports success with a bad result).
inline constexpr double kResidualLimit = 1e-6;

/// The k largest eigenpairs, in descending order of eigenvalue.
struct Eigenpairs {
  std::vector<double> values;    ///< k eigenvalues, descending
  DistMatrix vectors;            ///< n x k, column j belongs to values[j]
  std::vector<double> spectrum;  ///< all n eigenvalues, descending (evd only; else empty)
  bool input_preserved = false;  ///< `a` still holds the input (krylov)
  Solver used = Solver::evd;     ///< the solver that produced the result
  std::string note;              ///< what happened, e.g. a fallback (empty if nothing)
  int iterations = 0;            ///< krylov restart cycles
  int matvecs = 0;               ///< krylov block products
  /// ||A v_j - values[j] v_j||_2 from the solver's own products (krylov);
  /// empty when the caller must compute them (the dense solvers).
  std::vector<double> residual_norms;
};

/// Collective: the k largest eigenpairs of the symmetric matrix `a` (its lower
/// triangle is read; evd and evr overwrite `a`, krylov keeps it). A krylov
/// run that does not converge falls back to evr and says so in `note`.
/// `solver` is the one the fit's plan resolved (plan_fit: kpca, mds);
/// automatic, from methods that do not plan yet, is resolved here.
/// @pre 1 <= k <= n, square blocks.
Eigenpairs top_eigenpairs(DistMatrix& a, int k, Solver solver,
                          const KrylovSettings& krylov = KrylovSettings{});

/// Collective: the same for single-precision storage, where only krylov
/// (or auto, which means krylov here) applies and a run that does not
/// converge is an Error (no double matrix to fall back on).
Eigenpairs top_eigenpairs(SingleMatrix& a, int k, Solver solver,
                          const KrylovSettings& krylov = KrylovSettings{});

/// Collective over a.grid(): the same for an operator that is never stored
/// (`--storage none`): krylov only (or auto, which means krylov here); a run
/// that does not converge is an Error (no stored matrix to fall back on).
Eigenpairs top_eigenpairs(SymmetricOperator& a, int k, Solver solver,
                          const KrylovSettings& krylov = KrylovSettings{});

/// Chooses how many of the top eigenpairs to keep from the whole spectrum
/// (descending); returns a count in [1, n].
using SpectrumRule = std::function<int(const std::vector<double>& descending)>;

/// Collective: every eigenvalue of `a` by pdsyevd (`a` overwritten), then the
/// top `choose_k(spectrum)` eigenpairs, as top_eigenpairs with evd returns them.
Eigenpairs top_eigenpairs(DistMatrix& a, const SpectrumRule& choose_k);

}  // namespace kembed::spectral
