#pragma once
/// @file Kernel PCA: read -> distribute -> assemble -> center -> solve -> project.
#include <cstdint>
#include <vector>

#include "kembed/core/phase_timer.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/kernel/kernel.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/spectral/eigensolver.hpp"
#include "kembed/spectral/matrix_storage.hpp"
#include "kembed/spectral/memory_plan.hpp"

namespace kembed::spectral {

struct KpcaSettings {
  kernel::Kernel kernel;  ///< gamma 0 = 1/d
  int components = 2;
  Solver solver = Solver::evd;
  int block_size = 64;
  KrylovSettings krylov;  ///< used by Solver::krylov
  double max_memory_per_rank = 0;  ///< bytes; 0: the node's available memory / its ranks
  /// Store the centered kernel as float32 (`--precision single`): half the
  /// memory and bytes per product; krylov only, assembled kernels only.
  bool single_precision = false;
  StorageRequest storage = StorageRequest::automatic;
};

/// The plan of fit_kpca (plan_fit, for `shape` as the fit builds it, `limit`
/// bytes per rank on `ranks` ranks): its solver resolved, its memory plan,
/// and how it holds the kernel: only its blocks on
/// and below the diagonal (half the memory and assembly) for every kernel
/// assembled from points in tiles but laplacian (its L1 distances are
/// computed whole); not at all (--storage none, or auto when nothing stored
/// fits) for every kernel but precomputed.
FitPlan kpca_fit_plan(const KpcaSettings& settings, const ProblemShape& shape, double limit,
                      int ranks);

/// What a kernel PCA fit produced; the same on every rank except `embedding`.
struct KpcaResult {
  std::int64_t n = 0, d = 0;
  kernel::Kernel kernel;                          ///< with gamma resolved
  std::vector<double> eigenvalues;        ///< top k of the centered kernel, descending
  std::vector<double> explained_ratio;    ///< eigenvalue / trace(centered K)
  std::vector<double> residuals;          ///< ||K~v - lambda v|| / ||K~||_F per pair (K~ as stored)
  std::vector<double> spectrum;           ///< all n eigenvalues (evd only)
  double trace = 0;                       ///< trace of the centered kernel
  double frobenius_norm = 0;              ///< ||K~||_F
  double smallest_gap = 0;                ///< min relative gap among the top k+1 (when known)
  std::string solver_used;                ///< differs from the request after a fallback
  std::string solver_note;                ///< e.g. why a fallback happened
  int iterations = 0, matvecs = 0;        ///< krylov work
  double estimated_peak_bytes = 0;        ///< plan_memory's estimate for the busiest rank
  double memory_limit_bytes = 0;          ///< what it was checked against
  std::vector<double> embedding;          ///< rank 0 only: n x k row-major, V_k sqrt(Lambda_k)
  std::vector<double> coefficients;       ///< rank 0 only: n x k row-major, a_j = v_j / sqrt(lambda_j)
  std::vector<double> col_means;          ///< column means of the uncentered kernel (length n)
  double grand_mean = 0;                  ///< mean of all entries of the uncentered kernel
  bool lower_storage = false;             ///< the kernel was held in lower blocks
  MatrixStorage storage = MatrixStorage::full;  ///< how the kernel was held
  std::string storage_note;               ///< why --storage auto chose it (empty: not chosen)
  long long passes = 0;                   ///< matrix-free: passes that recomputed the kernel
};

/// Collective over the grid: kernel PCA of the n x d data in `file` (or of
/// the n x n kernel itself when settings.kernel is precomputed). Errors are
/// agreed across ranks. Phases are recorded in `timer`.
KpcaResult fit_kpca(io::MatrixFile& file, const BlacsGrid& grid, const KpcaSettings& settings,
                    PhaseTimer& timer);

}  // namespace kembed::spectral
