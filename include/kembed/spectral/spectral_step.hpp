#pragma once
/// @file The spectral step every method shares: solve -> positive-eigenvalue
/// guard -> residuals (rebuilding the matrix only if the solver destroyed it)
/// -> reject inaccurate pairs -> sign convention -> eigenvalue gap.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kembed/core/phase_timer.hpp"
#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/spectral/eigensolver.hpp"
#include "kembed/spectral/symmetric_operator.hpp"

namespace kembed::spectral {

/// Why the positive-eigenvalue guard failed, for the method's own message.
struct PositiveShortfall {
  int wanted = 0;              ///< k
  int positive = 0;            ///< leading eigenvalues above the threshold (< wanted)
  double value = 0;            ///< eigenvalue positive + 1 (1-based), the first that is not
  std::optional<int> total{};  ///< eigenvalues above the threshold in the whole spectrum (evd)
};

/// What a method asks of the spectral step.
struct SpectralRequest {
  int k = 1;                          ///< wanted pairs (ignored with `choose_k`)
  Solver solver = Solver::automatic;  ///< auto is resolved by resolve_solver
  KrylovSettings krylov{};            ///< used when the solver is krylov
  SpectrumRule choose_k{};            ///< set: k from the whole spectrum (always evd)
  /// The n of the numerical-zero threshold n eps max(|lambda_1|, ||A||_F);
  /// 0: the order of the matrix.
  double threshold_size = 0;
  /// Set: every kept eigenvalue must exceed the threshold (the method divides
  /// by sqrt(lambda)); otherwise the step throws (agreed) the message this
  /// returns. Empty: no check.
  std::function<std::string(const PositiveShortfall&)> too_few_positive{};
  /// Refills the matrix with its input after a solver that overwrote it
  /// (evd, evr, elpa); krylov keeps it and this is not called. Collective.
  std::function<void(DistMatrix&)> rebuild{};
  /// Keep a copy of the matrix through the solve instead of calling
  /// `rebuild`: for a cross-product of a larger data matrix (pca, ca), whose
  /// copy costs less memory than the data and less time than forming it
  /// again. The memory plan counts it (data_rows > 0).
  bool keep_copy = false;
  /// Apply the sign convention (fix_signs) to the eigenvectors. Off where the
  /// convention belongs to another matrix (PCA's covariance route: to X U).
  bool fix_signs = true;
  /// ||A||_F when the caller took it while writing A (centering does:
  /// CenteringStats::frobenius_norm); unset: read from A here.
  std::optional<double> known_frobenius_norm{};
};

/// What the spectral step found; identical on every rank.
struct SpectralStep {
  std::vector<double> values;       ///< k eigenvalues, descending
  DistMatrix vectors;               ///< n x k unit eigenvectors (sign convention applied if asked)
  std::vector<double> residuals{};  ///< ||A v - lambda v||_2 / ||A||_F per pair (A the input)
  std::vector<double> spectrum{};   ///< all n eigenvalues, descending (evd only; else empty)
  double trace = 0;                 ///< trace(A)
  double frobenius_norm = 0;        ///< ||A||_F
  double zero_threshold = 0;        ///< n eps max(|lambda_1|, ||A||_F), n = threshold_size
  /// min over j < k of (lambda_j - lambda_{j+1}) / |lambda_1|, when the spectrum is known.
  std::optional<double> smallest_gap{};
  std::string solver_used{};  ///< auto resolved, after any fallback
  std::string solver_note{};  ///< every fallback, e.g. "... fell back to evr"; empty if none
  int krylov_cycles = 0;      ///< restart cycles (krylov)
  int krylov_products = 0;    ///< block products A X (krylov)
};

/// Collective: the top eigenpairs of the symmetric (centered) n x n matrix
/// `a` as `request` asks, checked and normalized: an agreed error when too few
/// eigenvalues are positive (if asked) or a pair's relative residual exceeds
/// kResidualLimit. Phases "solve", "residual" and "project" (the sign
/// convention; the caller's projection continues in it) go to `timer`. `a`
/// holds the input again on return (through `rebuild` when the solver
/// destroyed it).
/// @pre 1 <= request.k <= n (or choose_k set), square blocks
SpectralStep spectral_step(DistMatrix& a, const SpectralRequest& request, PhaseTimer& timer);
/// The same on single-precision storage (`--precision single`): krylov only,
/// residuals through the solver's own product; `rebuild` is never needed.
SpectralStep spectral_step(SingleMatrix& a, const SpectralRequest& request, PhaseTimer& timer);
/// The same for an operator that is never stored (`--storage none`): krylov
/// only (top_eigenpairs on the operator), residuals from its own products;
/// trace(A) is `trace` and ||A||_F request.known_frobenius_norm (required),
/// both taken by the caller in passes of its own. `rebuild`, `keep_copy`
/// and `choose_k` do not apply.
SpectralStep spectral_step(SymmetricOperator& a, double trace, const SpectralRequest& request,
                           PhaseTimer& timer);

/// Copies what every method reports about its solve (the fields of KpcaResult,
/// PcaResult and MdsResult with these names) from `step` into `result`.
template <class Result>
void record_solve(const SpectralStep& step, Result& result) {
  result.spectrum = step.spectrum;
  result.residuals = step.residuals;
  result.smallest_gap = step.smallest_gap.value_or(0);
  result.solver_used = step.solver_used;
  result.solver_note = step.solver_note;
  result.iterations = step.krylov_cycles;
  result.matvecs = step.krylov_products;
}

/// Collective: the whole of `a` on rank 0 as a row-major array (empty elsewhere),
/// the layout of the methods' embedding and model arrays.
std::vector<double> row_major_on_root(const DistMatrix& a);

}  // namespace kembed::spectral
