#pragma once
/// @file Landmark MDS (de Silva and Tenenbaum, 2004): classical MDS of the
/// M x M distances among M landmarks, then every point placed by
/// distance-based triangulation x_a = -1/2 L# (delta_a - delta_mean) from its
/// squared distances delta_a to the landmarks. Memory O(M^2 + panel) per
/// rank besides the gathered n x k embedding; the n x n matrix never exists.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kembed/core/phase_timer.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/kernel/distances.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::approx {

/// Rows of points (or of distances to the landmarks) per streamed panel.
inline constexpr std::int64_t kLandmarkPanelRows = 4096;

struct LandmarkMdsSettings {
  int components = 2;              ///< k
  std::int64_t landmarks = 0;      ///< M (point input; taken from the files otherwise)
  std::uint64_t seed = 0;          ///< landmark choice and stress sample
  std::int64_t stress_pairs = 10000;  ///< pairs in the stress sample (0: none)
  std::int64_t panel_rows = kLandmarkPanelRows;
  double max_memory_per_rank = 0;  ///< bytes; 0: the node's available memory / its ranks
};

/// What triangulation needs: the fitted landmark configuration. The same on
/// every rank.
struct LandmarkModel {
  std::optional<kernel::Metric> metric;  ///< set for points; else inputs are distances
  std::int64_t d = 0;                    ///< coordinates of a point (0 for distances)
  std::int64_t m = 0;                    ///< landmarks M
  int k = 0;
  std::vector<double> landmark_points;   ///< M x d row-major (points only)
  std::vector<double> pseudo_inverse;    ///< L# = Lambda^(-1/2) V^T, k x M row-major, signs applied
  std::vector<double> delta_mean;        ///< column means of the squared landmark distances, M
};

/// What a landmark MDS fit produced; the same on every rank except where noted.
struct LandmarkMdsResult {
  std::int64_t n = 0;
  LandmarkModel model;
  std::vector<std::int64_t> landmark_rows;   ///< 0-based input rows (points only)
  std::vector<double> eigenvalues;           ///< top k of B_L = -1/2 J Delta J (M x M)
  std::vector<double> scaled_eigenvalues;    ///< eigenvalues * n / M: estimate for the n x n B
  std::vector<double> landmark_spectrum;     ///< all M eigenvalues of B_L, descending
  double zero_threshold = 0;                 ///< M eps max(|lambda_1|, ||B_L||_F)
  std::int64_t negative_count = 0;           ///< eigenvalues of B_L below -zero_threshold
  std::vector<double> embedding;             ///< rank 0 only: n x k row-major
  std::int64_t stress_pairs = 0;             ///< pairs sampled (0: no stress computed)
  std::optional<double> sample_stress;       ///< Kruskal stress-1 over the sample
  double memory_estimate = 0;                ///< bytes per rank (landmark_mds_memory)
  double memory_limit = 0;                   ///< bytes per rank it was checked against
};

/// Throws Error unless 1 <= M <= n and M >= k + 1 (classical MDS of M
/// landmarks has at most M - 1 dimensions). Both fits and `kembed plan`
/// check with it.
void check_landmark_request(std::int64_t n, std::int64_t m, int k);

/// Bytes one of `ranks` ranks needs for a fit of n points of d coordinates
/// (d = 0: distances to the landmarks) with M landmarks and k components.
double landmark_mds_memory(std::int64_t n, std::int64_t d, std::int64_t m, int k, int ranks,
                           std::int64_t panel_rows = kLandmarkPanelRows);

/// Both fits check landmark_mds_memory against settings.max_memory_per_rank
/// before reading any data (an agreed Error, spectral::streamed_shortfall).
///
/// Collective: landmark MDS of the n points in `points` under `metric`: the
/// M landmarks uniform_landmarks(n, M, seed), their classical MDS (top k
/// eigenpairs of B_L, all k positive or an agreed Error), the triangulation
/// of every point in streamed panels of each rank's rows, the sign
/// convention of exact MDS on the embedding columns (folded into L#), and
/// Kruskal's stress-1 of a seeded sample of pairs. Phases go to `timer`.
/// @pre k + 1 <= M <= n (agreed Error otherwise)
LandmarkMdsResult landmark_mds_points(io::MatrixFile& points, kernel::Metric metric,
                                      const LandmarkMdsSettings& settings, const Comm& comm,
                                      PhaseTimer& timer);

/// Collective: the same from precomputed distances (not squared):
/// `to_landmarks` (n x M, every point to every landmark) and
/// `among_landmarks` (M x M: symmetric, zero diagonal, non-negative, to
/// kernel::kDistanceTolerance; violations are agreed Errors naming the file
/// and entry). No stress (the pairs' distances are not known).
LandmarkMdsResult landmark_mds_distances(io::MatrixFile& to_landmarks,
                                         io::MatrixFile& among_landmarks,
                                         const LandmarkMdsSettings& settings, const Comm& comm,
                                         PhaseTimer& timer);

// The steps of a fit, for methods that find the distances to the landmarks
// their own way (landmark Isomap: geodesics along a graph).

/// `delta`, the M x M distances among the landmarks (row-major, the same on
/// every rank), made exactly symmetric with a zero diagonal (the two
/// triangles averaged) and squared. Throws Error naming `source` and the
/// entry where a square overflows. Not collective: call it in collectively().
void square_landmark_distances(std::vector<double>& delta, std::int64_t m,
                               const std::string& source);

/// Collective: the landmark configuration from the M x M squared distances
/// `delta` (square_landmark_distances): r.model.delta_mean, the spectrum of
/// B_L = -1/2 J Delta J (r.landmark_spectrum, r.zero_threshold,
/// r.negative_count), r.eigenvalues and L# (r.model.pseudo_inverse, signs
/// not yet fixed). Solved on rank 0 and broadcast: the same bits everywhere.
/// Agreed Error when fewer than k eigenvalues are positive.
/// @pre r.model.m and r.model.k set
void fit_landmark_configuration(const std::vector<double>& delta, const Comm& comm,
                                LandmarkMdsResult& r);

/// Triangulation of rows: `dist` holds rows x M distances to the landmarks
/// (row-major, the first of global row `first`; squared already when
/// `squared`), overwritten by the centred squares; writes the rows x k
/// coordinates x_a = -1/2 L# (delta_a - delta_mean) to `out` (row-major).
/// Throws Error naming `source` and the entry of a distance too large to
/// square. Not collective: call it in collectively().
void triangulate_rows(const LandmarkModel& model, std::vector<double>& dist, bool squared,
                      std::int64_t first, const std::string& source, double* out);

/// Collective: the sign convention of exact MDS on the triangulated rows
/// (`local`: this rank's rows x k, from global row `first`; the ranks'
/// rows in order make the whole embedding): the largest |entry| of each
/// column positive, ties within spectral::kSignTieTolerance to the lowest
/// row. Flips `local` and folds the signs into model.pseudo_inverse, so that
/// triangulating with the model later gives the same signs.
void sign_landmark_embedding(std::vector<double>& local, std::int64_t first, const Comm& comm,
                             LandmarkModel& model);

/// Collective: the m x k coordinates (row-major, rank 0 only) of the rows of
/// `points` (new points with model.d coordinates, or their m x M distances
/// to the landmarks when model.metric is unset) by triangulation, streamed
/// in panels of each rank's rows.
std::vector<double> triangulate(const LandmarkModel& model, io::MatrixFile& points,
                                const Comm& comm, std::int64_t panel_rows = kLandmarkPanelRows);

}  // namespace kembed::approx
