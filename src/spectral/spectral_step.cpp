#include "kembed/spectral/spectral_step.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "kembed/core/error.hpp"
#include "kembed/linalg/reductions.hpp"
#include "kembed/spectral/residuals.hpp"
#include "kembed/spectral/sign_convention.hpp"

namespace kembed::spectral {

namespace {

// Methods divide by sqrt(lambda): the kept eigenvalues must be numerically
// positive, i.e. above the threshold (agreed error otherwise).
void check_positive(const SpectralStep& step, const SpectralRequest& request, const Comm& comm) {
  const int k = static_cast<int>(step.values.size());
  int positive = 0;
  while (positive < k && step.values[positive] > step.zero_threshold) ++positive;
  if (positive == k) return;
  PositiveShortfall shortfall{k, positive, step.values[positive], std::nullopt};
  if (!step.spectrum.empty()) {
    int total = 0;
    for (double v : step.spectrum) total += v > step.zero_threshold ? 1 : 0;
    shortfall.total = total;
  }
  agree(comm, request.too_few_positive(shortfall));
}

Eigenpairs solve(DistMatrix& a, const SpectralRequest& request) {
  return request.choose_k ? top_eigenpairs(a, request.choose_k)
                          : top_eigenpairs(a, request.k, request.solver, request.krylov);
}

Eigenpairs solve(SingleMatrix& a, const SpectralRequest& request) {
  if (request.choose_k) throw Error("spectral step: choosing k needs double-precision storage");
  return top_eigenpairs(a, request.k, request.solver, request.krylov);
}

void restore(DistMatrix& a, const SpectralRequest& request) {
  if (!request.rebuild) throw Error("spectral step: the solver overwrote the matrix, no rebuild");
  request.rebuild(a);
}

void restore(SingleMatrix&, const SpectralRequest&) {
  throw Error("spectral step: the solver overwrote a single-precision matrix");
}

// The step's figures from the solver's pairs, and the positive-eigenvalue guard.
SpectralStep from_pairs(Eigenpairs&& pairs, double trace_a, double norm_a, double order,
                        const SpectralRequest& request, const Comm& comm) {
  SpectralStep step{std::move(pairs.values), std::move(pairs.vectors)};
  step.spectrum = std::move(pairs.spectrum);
  step.trace = trace_a;
  step.frobenius_norm = norm_a;
  step.solver_used = solver_name(pairs.used);
  step.solver_note = std::move(pairs.note);
  step.krylov_cycles = pairs.iterations;
  step.krylov_products = pairs.matvecs;
  const double size = request.threshold_size > 0 ? request.threshold_size : order;
  step.zero_threshold = size * std::numeric_limits<double>::epsilon() *
                        std::max(std::abs(step.values[0]), step.frobenius_norm);
  if (request.too_few_positive) check_positive(step, request, comm);
  return step;
}

// Relative residuals (rejecting inaccurate pairs), the sign convention and the gap.
void finish_step(SpectralStep& step, const std::vector<double>& absolute,
                 const SpectralRequest& request, const Comm& comm, PhaseTimer& timer) {
  for (double r : absolute)
    step.residuals.push_back(step.frobenius_norm > 0 ? r / step.frobenius_norm : r);
  reject_inaccurate_pairs(comm, step.residuals, step.solver_used);

  timer.start("project");
  // Negating a column changes no residual bit, so the order is free.
  if (request.fix_signs) fix_signs(step.vectors);

  const std::size_t k = step.values.size();
  if (step.spectrum.size() > k) {
    double gap = std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < k; ++j)
      gap = std::min(gap, (step.spectrum[j] - step.spectrum[j + 1]) / std::abs(step.values[0]));
    step.smallest_gap = gap;
  }
}

template <class T>
SpectralStep run_step(BasicDistMatrix<T>& a, const SpectralRequest& request, PhaseTimer& timer) {
  const Comm& comm = a.grid().comm();
  const double trace_a = trace(a);
  const double norm_a =
      request.known_frobenius_norm ? *request.known_frobenius_norm : frobenius_norm(a);
  std::optional<BasicDistMatrix<T>> kept;
  if (request.keep_copy) {
    if (a.storage() != Storage::full) throw Error("spectral step: a kept copy needs full storage");
    kept.emplace(BasicDistMatrix<T>::uninitialized(
        a.grid(), a.rows(), a.cols(), a.row_dist().block_size(), a.col_dist().block_size()));
    // The same layout: the local blocks are copied as they are.
    std::copy_n(a.data(), std::size_t(a.ld()) * a.local_cols(), kept->data());
  }

  timer.start("solve");
  Eigenpairs pairs = solve(a, request);
  const bool preserved = pairs.input_preserved;
  std::vector<double> own_residuals = std::move(pairs.residual_norms);
  SpectralStep step =
      from_pairs(std::move(pairs), trace_a, norm_a, static_cast<double>(a.rows()), request, comm);

  // evd, evr and elpa overwrote `a`: rebuild it in place rather than keep a
  // second n x n matrix through the solve.
  timer.start("residual");
  if (!preserved) {
    if (kept)
      std::copy_n(kept->data(), std::size_t(a.ld()) * a.local_cols(), a.data());
    else
      restore(a, request);
  }
  // krylov's come from the products of its last Rayleigh-Ritz step, which
  // hold A V already; the dense solvers' take one product with `a`.
  const std::vector<double> absolute = own_residuals.empty()
                                           ? residual_norms(a, step.vectors, step.values)
                                           : std::move(own_residuals);
  finish_step(step, absolute, request, comm, timer);
  return step;
}

}  // namespace

SpectralStep spectral_step(DistMatrix& a, const SpectralRequest& request, PhaseTimer& timer) {
  return run_step(a, request, timer);
}

SpectralStep spectral_step(SingleMatrix& a, const SpectralRequest& request, PhaseTimer& timer) {
  return run_step(a, request, timer);
}

SpectralStep spectral_step(SymmetricOperator& a, double trace_a, const SpectralRequest& request,
                           PhaseTimer& timer) {
  const Comm& comm = a.grid().comm();
  if (!request.known_frobenius_norm || request.choose_k)
    throw Error("spectral step: an operator needs ||A||_F given and a fixed k");
  timer.start("solve");
  Eigenpairs pairs = top_eigenpairs(a, request.k, request.solver, request.krylov);
  std::vector<double> absolute = std::move(pairs.residual_norms);
  SpectralStep step = from_pairs(std::move(pairs), trace_a, *request.known_frobenius_norm,
                                 static_cast<double>(a.order()), request, comm);
  timer.start("residual");
  finish_step(step, absolute, request, comm, timer);
  return step;
}

std::vector<double> row_major_on_root(const DistMatrix& a) {
  const auto column_major = a.gather_to_root();
  std::vector<double> out;
  if (!a.grid().comm().is_root()) return out;
  const std::int64_t m = a.rows(), n = a.cols();
  out.resize(column_major.size());
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      out[std::size_t(i) * n + j] = column_major[std::size_t(j) * m + i];
  return out;
}

}  // namespace kembed::spectral
