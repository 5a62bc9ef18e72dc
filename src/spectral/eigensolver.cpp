#include "kembed/spectral/eigensolver.hpp"

#include <algorithm>
#include <cstdio>

#include "kembed/core/error.hpp"
#include "kembed/linalg/elpa.hpp"
#include "kembed/linalg/scalapack.hpp"

namespace kembed::spectral {

Solver parse_solver(const std::string& name) {
  if (name == "evd") return Solver::evd;
  if (name == "evr") return Solver::evr;
  if (name == "krylov") return Solver::krylov;
  if (name == "elpa") return Solver::elpa;
  if (name == "auto") return Solver::automatic;
  throw Error("unknown solver '" + name + "' (expected auto, evd, evr, krylov or elpa)");
}

std::string solver_name(Solver solver) {
  switch (solver) {
    case Solver::evd: return "evd";
    case Solver::evr: return "evr";
    case Solver::krylov: return "krylov";
    case Solver::elpa: return "elpa";
    case Solver::automatic: return "auto";
  }
  return "?";
}

std::string krylov_failure(const KrylovResult& r, double tol) {
  char text[400];
  const double worst =
      r.residuals.empty() ? 0.0 : *std::max_element(r.residuals.begin(), r.residuals.end());
  if (r.broke_down && !r.cycle_residuals.empty()) {
    const double smallest = *std::min_element(r.cycle_residuals.begin(), r.cycle_residuals.end());
    std::snprintf(text, sizeof text,
                  "krylov broke down in cycle %d: its worst relative residual rose from %.3g to "
                  "%.3g (above 1, or growing, means the Krylov basis no longer represents the "
                  "matrix, as with a rank-deficient or highly degenerate spectrum), so it was "
                  "stopped before reaching --tol %.3g",
                  r.cycles, smallest, r.cycle_residuals.back(), tol);
  } else {
    std::snprintf(text, sizeof text,
                  "krylov did not reach --tol %.3g in %d cycles (worst relative residual %.3g)",
                  tol, r.cycles, worst);
  }
  return text;
}

Solver resolve_solver(Solver solver, std::int64_t n, int k, const KrylovSettings& krylov) {
  if (solver != Solver::automatic) return solver;
  // The benchmark (bench/solvers.sh, README) shows krylov far ahead of every
  // dense solver while its basis is a small part of n; a dense solver's
  // O(n^3) is cheap when n is small anyway.
  const std::int64_t b = std::min<std::int64_t>(n, std::max(k, krylov_block_width(k, krylov)));
  const std::int64_t basis = b * krylov_depth(static_cast<int>(b), krylov, n);
  return 2 * basis <= n ? Solver::krylov : Solver::evd;
}

Eigenpairs top_eigenpairs(DistMatrix& a, int k, Solver solver, const KrylovSettings& krylov) {
  const std::int64_t n = a.rows();
  // kpca and mds hand down the solver their plan resolved (plan_fit); pca,
  // isomap and spectral may still ask for auto.
  if (solver == Solver::automatic) solver = resolve_solver(solver, n, k, krylov);
  const int nb = a.row_dist().block_size();
  if (solver == Solver::krylov) {
    KrylovResult r = krylov_top_eigenpairs(a, k, krylov);
    if (r.converged)
      return Eigenpairs{r.values,  std::move(r.vectors), {},
                        true,      Solver::krylov,       {},
                        r.cycles,  r.matvecs,            std::move(r.residual_norms)};
    Eigenpairs result = top_eigenpairs(a, k, Solver::evr);
    result.note = krylov_failure(r, krylov.tol) + "; fell back to evr";
    return result;
  }
  if (solver == Solver::elpa && a.storage() != Storage::full)
    throw Error("elpa needs the whole matrix; lower-block storage is for krylov, evd and evr");
  // evd and evr read the lower triangle in ScaLAPACK's layout.
  a.unpack();
  if (solver == Solver::elpa && elpa::available()) {
    // ELPA 2022.11 fails or hangs when a process row or column owns no block.
    const std::int64_t blocks = (n + nb - 1) / nb;
    if (blocks < std::max(a.grid().nprow(), a.grid().npcol())) {
      Eigenpairs result = top_eigenpairs(a, k, Solver::evr);
      result.note = "elpa needs every process row and column to own a block (" +
                    std::to_string(blocks) + " blocks of " + std::to_string(nb) + " on a " +
                    std::to_string(a.grid().nprow()) + "x" + std::to_string(a.grid().npcol()) +
                    " grid); used evr";
      return result;
    }
  }
  if (solver == Solver::evd) return top_eigenpairs(a, [k](const std::vector<double>&) { return k; });
  Eigenpairs result{{}, DistMatrix(a.grid(), n, k, nb, nb), {}, false, solver, {}, 0, 0, {}};
  // elpa: column j of z belongs to the j-th largest eigenvalue; evr returns
  // ascending order, so there column k - 1 - j does.
  DistMatrix z(a.grid(), n, n, nb, nb);
  if (solver == Solver::elpa) {
    // ELPA computes the smallest eigenpairs: ask for those of -A.
    for (int lj = 0; lj < a.local_cols(); ++lj)
      for (int li = 0; li < a.local_rows(); ++li) a.local(li, lj) = -a.local(li, lj);
    const auto lowest = elpa::lowest_eigenpairs(a, k, z);
    for (int j = 0; j < k; ++j) {
      result.values.push_back(-lowest[j]);
      copy(z, 0, j, n, 1, result.vectors, 0, j);
    }
    return result;
  }
  const auto ascending = scalapack::syevr(a, static_cast<int>(n - k + 1), static_cast<int>(n), z);
  const std::int64_t offset = static_cast<std::int64_t>(ascending.size()) - k;
  for (int j = 0; j < k; ++j) {
    result.values.push_back(ascending[offset + k - 1 - j]);
    copy(z, 0, k - 1 - j, n, 1, result.vectors, 0, j);
  }
  return result;
}

namespace {

// The pairs of a krylov run on a matrix with no double-precision copy to
// fall back on (single-precision storage, or none at all), or why it failed:
// `what` names that matrix, `instead` what to do.
Eigenpairs krylov_only(KrylovResult r, const KrylovSettings& krylov,
                       const std::string& what, const std::string& instead) {
  if (!r.converged) {
    char text[500];
    const double worst = *std::max_element(r.residuals.begin(), r.residuals.end());
    if (r.at_precision_floor)
      std::snprintf(text, sizeof text,
                    "krylov cannot reach --tol %.3g with %s: float's round-off in the products "
                    "keeps the worst relative residual at %.3g; raise --tol, or %s",
                    krylov.tol, what.c_str(), worst, instead.c_str());
    else
      std::snprintf(text, sizeof text, "%s with %s; raise --tol, or %s",
                    krylov_failure(r, krylov.tol).c_str(), what.c_str(), instead.c_str());
    throw Error(text);
  }
  return Eigenpairs{r.values, std::move(r.vectors), {}, true, Solver::krylov, {}, r.cycles,
                    r.matvecs,  std::move(r.residual_norms)};
}

}  // namespace

Eigenpairs top_eigenpairs(SingleMatrix& a, int k, Solver solver, const KrylovSettings& krylov) {
  if (solver != Solver::krylov && solver != Solver::automatic)
    throw Error("--precision single needs --solver krylov (or auto): solver " +
                solver_name(solver) + " works on a double-precision matrix");
  return krylov_only(krylov_top_eigenpairs(a, k, krylov), krylov, "single-precision storage",
                     "use --precision double");
}

Eigenpairs top_eigenpairs(SymmetricOperator& a, int k, Solver solver,
                          const KrylovSettings& krylov) {
  if (solver != Solver::krylov && solver != Solver::automatic)
    throw Error("--storage none needs --solver krylov (or auto): solver " + solver_name(solver) +
                " works on a stored matrix");
  return krylov_only(krylov_top_eigenpairs(a, k, krylov), krylov,
                     a.exact_products() ? "the matrix-free operator (--storage none)"
                                        : "the matrix-free operator in single precision",
                     a.exact_products() ? "store the matrix (--storage auto)"
                                        : "use --precision double");
}

Eigenpairs top_eigenpairs(DistMatrix& a, const SpectrumRule& choose_k) {
  a.unpack();  // pdsyevd reads the lower triangle in ScaLAPACK's layout
  const std::int64_t n = a.rows();
  const int nb = a.row_dist().block_size();
  DistMatrix z(a.grid(), n, n, nb, nb);
  const auto ascending = scalapack::syevd(a, z);
  std::vector<double> spectrum(ascending.rbegin(), ascending.rend());
  const int k = choose_k(spectrum);
  // ScaLAPACK returns ascending order: column n - 1 - j of z holds the j-th largest.
  Eigenpairs result{{}, DistMatrix(a.grid(), n, k, nb, nb), std::move(spectrum), false,
                    Solver::evd, {}, 0, 0, {}};
  for (int j = 0; j < k; ++j) {
    result.values.push_back(result.spectrum[j]);
    copy(z, 0, n - 1 - j, n, 1, result.vectors, 0, j);
  }
  return result;
}

}  // namespace kembed::spectral
