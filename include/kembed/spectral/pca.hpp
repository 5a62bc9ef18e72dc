#pragma once
/// @file Linear PCA: read -> distribute -> center (standardize) -> form the
/// covariance or the Gram matrix -> solve -> select -> project.
///
/// Two routes give the same embedding:
///  - covariance (n >= d): C = Xc^T Xc / (n-1), d x d; top eigenvectors
///    U_k; Z = Xc U_k. On a grid of one process column (the default for
///    tall data) X stays in the row panels it was read into (pca_rows.hpp):
///    one dsyrk per rank and a reduction of d x d sums. On other grids X is
///    block-cyclic and C comes from pdgemm.
///  - Gram (d > n): G = Xc Xc^T, n x n (the centered linear kernel of kernel
///    PCA); top eigenvectors V_k with eigenvalues s_j; Z = V_k S^{1/2} and
///    the axes U_k = Xc^T V_k S^{-1/2}.
/// The embedding columns follow the sign convention (largest |entry|
/// positive) on both routes; the axes are flipped with them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kembed/core/phase_timer.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/spectral/eigensolver.hpp"
#include "kembed/spectral/memory_plan.hpp"

namespace kembed::spectral {

enum class PcaRoute {
  automatic,   ///< covariance when n >= d, Gram otherwise
  covariance,  ///< d x d covariance matrix
  gram,        ///< n x n Gram matrix of the centered data
};

/// Parses auto, covariance or gram; throws Error naming the valid ones.
PcaRoute parse_pca_route(const std::string& name);
std::string pca_route_name(PcaRoute route);

struct PcaSettings {
  /// Number of components; ignored when `variance` > 0.
  int components = 2;
  /// 0 < variance < 1: keep the smallest k whose cumulative explained
  /// variance ratio is strictly greater than this (scikit-learn's float
  /// n_components). 0 = use `components`. Needs the full spectrum
  /// (Solver::evd); with any other solver it is an agreed error.
  double variance = 0;
  bool standardize = false;  ///< divide the centered columns by their sample std (n-1)
  bool whiten = false;       ///< scale every component to unit sample variance
  PcaRoute route = PcaRoute::automatic;
  Solver solver = Solver::evd;
  int block_size = 64;
  KrylovSettings krylov;  ///< used by Solver::krylov
  double max_memory_per_rank = 0;  ///< bytes; 0: the node's available memory / its ranks
};

/// The route `settings.route` stands for on n x d data (automatic:
/// covariance when n >= d, else Gram).
PcaRoute resolve_route(PcaRoute route, std::int64_t n, std::int64_t d);

/// What a PCA of n x d data decomposes, for the memory plan: the d x d
/// covariance or n x n Gram matrix, with the n x d data held alongside.
ProblemShape pca_problem_shape(std::int64_t n, std::int64_t d, const PcaSettings& settings,
                               int nprow, int npcol);

/// What a PCA fit produced; the same on every rank except the rank-0 arrays.
struct PcaResult {
  std::int64_t n = 0, d = 0;
  int k = 0;                               ///< number of components kept
  PcaRoute route = PcaRoute::covariance;   ///< the route that ran (never automatic)
  std::string data_fingerprint;           ///< of the data as read (core/data_fingerprint.hpp)
  std::vector<double> mean;                ///< column means (length d)
  std::vector<double> scale;               ///< column std (n-1) with standardize, else 1
  std::vector<double> explained_variance;  ///< top k eigenvalues of the covariance, descending
  std::vector<double> explained_ratio;     ///< explained_variance / total_variance
  std::vector<double> spectrum;            ///< all eigenvalues of the covariance that the
                                           ///< solved matrix has (d or n; evd only, else empty)
  double total_variance = 0;               ///< trace of the covariance (sum of column variances)
  double noise_variance = 0;               ///< mean of the min(n, d) - k discarded eigenvalues
                                           ///< (scikit-learn's noise_variance_; 0 when k = min)
  std::vector<double> residuals;           ///< ||S v - lambda v|| / ||S||_F per pair, S solved
  std::string solver_used;                 ///< the solver that ran (auto resolved, fallbacks)
  std::string solver_note;                 ///< every fallback and why (empty: none)
  int iterations = 0, matvecs = 0;         ///< krylov restart cycles and block products
  double smallest_gap = 0;                 ///< min relative gap among the top k+1 (evd; else 0)
  double estimated_peak_bytes = 0;         ///< plan_memory's estimate for the busiest rank
  double memory_limit_bytes = 0;           ///< what it was checked against
  /// n x k on the fit's grid (whitened if asked); never gathered by the fit.
  std::optional<DistMatrix> embedding;
  std::vector<double> components;          ///< rank 0 only: d x k row-major principal axes
};

/// Collective over the grid: PCA of the n x d data in `file`. Errors
/// (constant column under standardize, k out of range, ...) are agreed
/// across ranks. Phases are recorded in `timer`.
PcaResult fit_pca(io::MatrixFile& file, const BlacsGrid& grid, const PcaSettings& settings,
                  PhaseTimer& timer);

/// Column means and scales of a distributed data matrix.
struct ColumnStats {
  std::vector<double> mean;   ///< length cols
  std::vector<double> scale;  ///< sample std (n-1) when standardizing, else all 1
};

/// Collective: means (and with `standardize` sample standard deviations,
/// n-1 denominator, two-pass) of the columns of `x`, by local sums reduced
/// over the grid. A constant column under `standardize` is an agreed error
/// naming the column (1-based, headers not counted) of `source`.
ColumnStats column_stats(const DistMatrix& x, bool standardize, const std::string& source);

/// Collective: the second half of column_stats for any layout: from every
/// rank's per-column minimum, maximum and sum of squared deviations from the
/// mean, sets stats.scale to the sample standard deviations (n-1); a constant
/// column is the agreed error column_stats describes.
void finish_scales(const Comm& comm, std::int64_t n, std::vector<double> low,
                   std::vector<double> high, std::vector<double> squares,
                   const std::string& source, ColumnStats& stats);

/// Replaces every entry x_ij of `x` by (x_ij - mean_j) / scale_j. Local, no
/// communication. @pre mean and scale have x.cols() entries
void standardize_columns(DistMatrix& x, const std::vector<double>& mean,
                         const std::vector<double>& scale);

/// What projection needs from a PCA fit besides the axes.
struct PcaProjection {
  std::int64_t d = 0;
  int k = 0;
  std::vector<double> mean, scale;         ///< length d
  std::vector<double> explained_variance;  ///< length k
  bool whiten = false;
  /// The axes array is k x d, one row per component (model format 2);
  /// false: d x k, U_k as PcaResult::components holds it (format 1).
  bool axes_as_rows = false;
  /// The probabilistic PCA noise variance (pca_likelihood.hpp); absent from
  /// models written before kembed scored samples.
  std::optional<double> noise_variance;
};

/// What is wrong with a PCA model's shapes (`components` k x d, or d x k
/// when !axes_as_rows; mean and scale of length d, k eigenvalues), or ""
/// when they agree. Local.
std::string model_shape_error(const PcaProjection& model, const io::MatrixFile& components);

/// What transform computes for new points; rank 0 only.
struct PcaTransformed {
  std::vector<double> embedding;       ///< m x k, row-major
  std::vector<double> log_likelihood;  ///< length m when scored, else empty
};

/// The most dense rows pca_transform holds at a time, in bytes (at least one row).
inline constexpr std::int64_t kTransformPieceBytes = std::int64_t{64} << 20;

/// Collective: the m x k embedding (row-major, rank 0 only) of the m new
/// points in `points`: Z* = ((Y - mean) / scale) U_k, divided column-wise by
/// sqrt(explained variance) when whitened. Every rank reads the small axes
/// (`components`, k x d = U_k^T, or d x k = U_k when !axes_as_rows) and one
/// contiguous block of the points, projects its rows with one dgemm per
/// piece of at most `piece_bytes` of them (the rank holds one piece of
/// dense rows at a time: a sparse file's rows arrive densified), and rank 0
/// gathers the rows in order. With `score`, every rank also scores
/// its rows under the model's probabilistic PCA (ppca_score_rows: scikit-
/// learn's score_samples of the (standardized) rows) and rank 0 gathers
/// those. A wrong feature count is an agreed error; so is `score` with a
/// model without a noise variance or whose covariance is singular.
PcaTransformed pca_transform(const PcaProjection& model, io::MatrixFile& components,
                             io::MatrixFile& points, const Comm& comm, bool score = false,
                             std::int64_t piece_bytes = kTransformPieceBytes);

}  // namespace kembed::spectral
