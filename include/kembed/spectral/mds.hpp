#pragma once
/// @file Classical (Torgerson-Gower) multidimensional scaling:
/// read -> distribute (or assemble distances) -> validate -> double center
/// -> solve -> project, and Gower's add-a-point formula for new points.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "kembed/core/phase_timer.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/spectral/additive_constant.hpp"
#include "kembed/kernel/distances.hpp"
#include "kembed/spectral/eigensolver.hpp"
#include "kembed/spectral/matrix_storage.hpp"
#include "kembed/spectral/memory_plan.hpp"
#include "kembed/spectral/spectral_step.hpp"

namespace kembed::spectral {

struct MdsSettings {
  /// Points compared with this metric; nothing: the file holds the n x n distances.
  std::optional<kernel::Metric> metric;
  int components = 2;
  Solver solver = Solver::evd;
  int block_size = 64;
  bool symmetrize = false;  ///< average D and D^T instead of rejecting asymmetry
  KrylovSettings krylov;    ///< used by Solver::krylov
  double max_memory_per_rank = 0;  ///< bytes; 0: the node's available memory / its ranks
  /// Store B = -1/2 J D^(2) J as float32 (`--precision single`): krylov only,
  /// distances computed from points only.
  bool single_precision = false;
  StorageRequest storage = StorageRequest::automatic;
  /// `--add`: make the dissimilarities Euclidean with an additive constant
  /// before embedding (needs the stored double matrix: storage full).
  AdditiveMethod additive = AdditiveMethod::none;
};

/// The plan of fit_mds (plan_fit, for `shape` as the fit builds it, `limit`
/// bytes per rank on `ranks` ranks): its solver resolved, its memory plan,
/// and how it holds B: only its blocks on and below the
/// diagonal for distances from points under every metric but manhattan
/// (computed pair by pair, whole); not at all (--storage none, or auto when
/// nothing stored fits) for points under every metric.
FitPlan mds_fit_plan(const MdsSettings& settings, const ProblemShape& shape, double limit,
                     int ranks);

/// What an MDS fit produced; the same on every rank except where noted.
struct MdsResult {
  std::int64_t n = 0, d = 0;            ///< d = 0 for a distance matrix
  std::vector<double> eigenvalues;      ///< top k of B, descending (all positive)
  std::vector<double> explained_ratio;  ///< eigenvalue / sum of positive eigenvalues (evd),
                                        ///< eigenvalue / trace(B) (evr, see ratio_of_trace)
  bool ratio_of_trace = false;          ///< true when the ratios are taken to trace(B)
  std::vector<double> spectrum;         ///< all n eigenvalues of B, descending (evd only)
  std::vector<double> residuals;        ///< ||B v - lambda v|| / ||B||_F per pair
  std::string solver_used;              ///< the solver that ran (auto resolved, fallbacks)
  std::string solver_note;              ///< every fallback and why (empty: none)
  int iterations = 0, matvecs = 0;      ///< krylov restart cycles and block products
  double smallest_gap = 0;              ///< min relative gap among the top k+1 (evd; else 0)
  double trace = 0;                     ///< trace(B) = sum of all eigenvalues
  MemoryCheck memory;                   ///< estimated peak per rank and its limit
  bool lower_storage = false;           ///< B was held in lower blocks
  MatrixStorage storage = MatrixStorage::full;  ///< how B was held
  std::string storage_note;             ///< why --storage auto chose it (empty: not chosen)
  long long passes = 0;                 ///< matrix-free: passes that recomputed -1/2 D^(2)
  double frobenius_norm = 0;            ///< ||B||_F
  /// Eigenvalues of B with |lambda| <= this are numerical zeros:
  /// n eps max(|lambda_1|, ||B||_F).
  double zero_threshold = 0;
  // From the full spectrum (evd); empty with evr, which computes only the top k.
  std::optional<double> positive_sum;          ///< sum of max(lambda, 0)
  std::optional<double> gof1, gof2;            ///< R's cmdscale GOF figures
  std::optional<std::int64_t> negative_count;  ///< eigenvalues below -zero_threshold
  std::optional<double> smallest_eigenvalue;   ///< lambda_n
  std::optional<double> max_asymmetry;         ///< max |d_ij - d_ji| before --symmetrize
  std::vector<double> embedding;  ///< rank 0 only: n x k row-major, Y = V_k sqrt(Lambda_k)
  std::vector<double> vectors;    ///< rank 0 only: n x k row-major, V_k (sign convention applied)
  std::vector<double> sq_row_means;  ///< r: row means of the squared distances D^(2), length n
  double sq_grand_mean = 0;          ///< g: mean of all entries of D^(2)
  /// Set with --add: the constant applied to D before everything above
  /// (D, B, r and g are then of the corrected dissimilarities).
  std::optional<AdditiveConstant> additive;
};

/// Collective over the grid: classical MDS of the n x n distance matrix in
/// `file` (validated in parallel: square, zero diagonal, non-negative,
/// symmetric), or of the n points in `file` under settings.metric. Forms
/// B = -1/2 J D^(2) J, takes its top k eigenpairs and returns
/// Y = V_k Lambda_k^(1/2) with the sign convention of kpca. A requested
/// component whose eigenvalue is not positive is an error. Errors are agreed
/// across ranks. Phases are recorded in `timer`.
MdsResult fit_mds(io::MatrixFile& file, const BlacsGrid& grid, const MdsSettings& settings,
                  PhaseTimer& timer);

/// Collective: the MDS part of fit_mds on a distance matrix already
/// assembled in `b` (n x n, square blocks; overwritten by B): double center,
/// spectral step (asked.k, solver, krylov), figures and embedding into
/// `result` (its n, d and memory are the caller's). `refill` puts the
/// distances back into a matrix after a solver that destroyed it.
void embed_distances(DistMatrix& b, const SpectralRequest& asked, PhaseTimer& timer,
                     MdsResult& result, const std::function<void(DistMatrix&)>& refill);

/// What placing new points needs from an MDS fit besides V_k (read in
/// parallel from a file) and, for point input, the training points.
struct MdsProjection {
  std::optional<kernel::Metric> metric;  ///< set when the model was fitted on points
  std::int64_t n = 0, d = 0;     ///< training shape (d = 0 for distances)
  int k = 0;
  std::vector<double> eigenvalues;   ///< Lambda_k, length k
  std::vector<double> sq_row_means;  ///< r, length n
  double sq_grand_mean = 0;          ///< g
  /// The fit's --add: each new-to-training distance d > 0 becomes
  /// corrected_dissimilarity(additive, additive_constant, d) before Gower's
  /// formula (0 marks the same object, as the diagonal did in the fit).
  AdditiveMethod additive = AdditiveMethod::none;
  double additive_constant = 0;
};

/// Collective: the m x k coordinates (row-major, rank 0 only) of m new
/// points by Gower's add-a-point formula: with Q (m x n) their squared
/// distances to the training points, B* = -1/2 (Q - 1 r^T - (Q 1/n) 1^T + g)
/// and Y* = B* V_k Lambda_k^(-1/2), one pdgemm. `points` holds the m x n
/// distances (model fitted on distances; checked non-negative) or the m new
/// points, whose distances to `training` are assembled block-cyclically.
std::vector<double> mds_transform(const MdsProjection& model, io::MatrixFile* training,
                                  io::MatrixFile& vectors, io::MatrixFile& points,
                                  const BlacsGrid& grid, int block_size);

/// Collective: the projection step of mds_transform on the m x n distances
/// of the new points to the training points, already in `distances`
/// (overwritten): rank 0 receives the m x k coordinates, row-major.
std::vector<double> gower_project(const MdsProjection& model, DistMatrix& distances,
                                  io::MatrixFile& vectors, int block_size);

}  // namespace kembed::spectral
