#pragma once
/// @file Nystrom kernel PCA: kernel PCA of the rank-m approximation
/// K ~ C W^+ C^T built from m landmark points, streamed over row panels so
/// that no rank holds more than O(m^2 + panel) numbers.
///
/// With landmarks L, W = K(L, L) = Q diag(s) Q^T and the directions with
/// s_i > rcond * s_max kept (r of them), the feature map of a point x is
/// f(x) = k(x, L) B, B = Q_r diag(s_r^{-1/2}) (m x r), so F F^T = C W^+ C^T
/// with C = K(X, L). With the feature mean mu = F^T 1 / n, the r x r
/// covariance S = F^T F - n mu mu^T has the nonzero eigenvalues of the
/// centered approximate kernel J C W^+ C^T J (J = I - 11^T/n), so with
/// m = n they are those of exact kernel PCA. Embedding: (F - 1 mu^T) U_k =
/// sqrt(lambda_j) v_j; out of sample z(x) = k(x, L) P - offset with
/// P = B U_k and offset = U_k^T mu.
#include <cstdint>
#include <string>
#include <vector>

#include "kembed/core/index_range.hpp"
#include "kembed/core/phase_timer.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/kernel/kernel.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::approx {

enum class LandmarkSelection { uniform, kmeanspp };
/// "uniform" or "kmeans++"; throws Error naming both otherwise.
LandmarkSelection parse_landmark_selection(const std::string& name);
std::string landmark_selection_name(LandmarkSelection selection);

/// Default relative threshold below which eigenvalues of W are dropped.
inline constexpr double kDefaultLandmarkRcond = 1e-12;
/// Above this condition number s_max / s_min of the kept part of W, pass 1
/// accumulates F^T F itself (3 n m^2 flops) instead of C^T C (n m^2 flops,
/// then B^T (C^T C) B once): the Gram route rounds at eps * cond relative
/// to ||F^T F||, which stays below about 1e-10 here.
inline constexpr double kGramRouteCondition = 1e6;

struct NystromSettings {
  kernel::Kernel kernel;  ///< gamma 0 = 1/d; not precomputed
  int components = 2;
  std::int64_t landmarks = 0;
  LandmarkSelection selection = LandmarkSelection::uniform;
  std::uint64_t seed = 0;
  double rcond = kDefaultLandmarkRcond;
  std::int64_t panel_rows = 0;  ///< rows per panel; 0: default_panel_rows
  double max_memory_per_rank = 0;  ///< bytes; 0: the node's available memory / its ranks
};

/// What `transform` needs: z(x) = k(x, L) P - offset.
struct NystromModel {
  kernel::Kernel kernel;           ///< gamma resolved
  std::int64_t m = 0, d = 0;
  int k = 0;
  std::vector<double> landmarks;   ///< m x d, row-major
  std::vector<double> projection;  ///< P = B U_k, m x k row-major (signs applied)
  std::vector<double> offset;      ///< U_k^T mu, k (signs applied)
};

/// A Nystrom fit; the same on every rank except `embedding`.
struct NystromResult {
  std::int64_t n = 0;
  NystromModel model;
  std::vector<std::int64_t> landmark_rows;  ///< global 0-based rows of L, in model order
  int kept = 0;                  ///< r: directions of W kept
  int dropped = 0;               ///< m - r
  double w_largest = 0;          ///< s_max
  double w_smallest_kept = 0;    ///< s_r
  bool gram_route = true;        ///< pass 1 accumulated C^T C (else F^T F)
  std::int64_t panel_rows = 0;
  int passes = 2;                ///< reads of the whole data set
  std::vector<double> eigenvalues;      ///< top k of S, descending
  std::vector<double> explained_ratio;  ///< eigenvalue / trace(S)
  double trace = 0;                     ///< trace(S) = trace of the centered approximate kernel
  std::vector<double> embedding;        ///< rank 0 only: n x k row-major
  double memory_limit = 0;              ///< bytes per rank the fit was checked against
};

/// Rows per panel when not given: about 4 M numbers in the widest panel.
std::int64_t default_panel_rows(std::int64_t m, std::int64_t d);

/// The contiguous rows rank `rank` of `size` owns: n split evenly in rank order.
IndexRange block_rows(std::int64_t n, int rank, int size);

/// The bytes one rank needs at most (what `plan` prints): (what, bytes).
std::vector<std::pair<std::string, double>> nystrom_memory(std::int64_t n, std::int64_t d,
                                                           std::int64_t m, int k, int ranks,
                                                           std::int64_t panel_rows,
                                                           LandmarkSelection selection);

/// Throws Error when `settings` cannot describe a fit of n samples with d
/// features (`source` names the data in the message): fewer than 2 samples,
/// a precomputed kernel, M outside [k, n], rcond outside [0, 1), a negative
/// panel. fit_nystrom and `kembed plan` check with it.
void check_nystrom_request(std::int64_t n, std::int64_t d, const NystromSettings& settings,
                           const std::string& source);

/// Sum of nystrom_memory's items.
double nystrom_memory_total(std::int64_t n, std::int64_t d, std::int64_t m, int k, int ranks,
                            std::int64_t panel_rows, LandmarkSelection selection);

/// Collective: Nystrom kernel PCA of the n x d data in `file`. Errors are
/// agreed across ranks. Before any data is read, the memory the busiest rank
/// needs (nystrom_memory) is checked against settings.max_memory_per_rank:
/// an agreed Error when it does not fit (spectral::streamed_shortfall).
/// Phases (landmarks, pass1, solve, pass2) go to `timer`.
NystromResult fit_nystrom(io::MatrixFile& file, const Comm& comm, const NystromSettings& settings,
                          PhaseTimer& timer);

/// Collective: z(x) for every row of `points` (same d as the model),
/// streamed in panels; rank 0 gets the rows x k row-major result.
std::vector<double> nystrom_transform(const NystromModel& model, io::MatrixFile& points,
                                      const Comm& comm, std::int64_t panel_rows = 0);

}  // namespace kembed::approx
