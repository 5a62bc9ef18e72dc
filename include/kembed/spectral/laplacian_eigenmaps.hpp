#pragma once
/// @file Laplacian eigenmaps (scikit-learn's SpectralEmbedding): affinity W
/// without self-loops -> degrees -> D^(-1/2) W D^(-1/2) -> top k + 1
/// eigenvectors -> drop the trivial one -> v / sqrt(degree), sign rule.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kembed/core/phase_timer.hpp"
#include "kembed/graph/graph.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/spectral/affinity_eigenpairs.hpp"
#include "kembed/spectral/eigensolver.hpp"
#include "kembed/spectral/memory_plan.hpp"

namespace kembed::spectral {

enum class Affinity {
  rbf,  ///< w_ij = exp(-gamma ||x_i - x_j||^2), dense
  knn,  ///< scikit-learn's 1/2 (C + C^T), C the kNN connectivity with the point itself among its K
};

Affinity parse_affinity(const std::string& name);
std::string affinity_name(Affinity affinity);

struct LaplacianEigenmapsSettings {
  Affinity affinity = Affinity::rbf;
  double gamma = 0;   ///< rbf; 0: 1 / d (scikit-learn's default)
  int neighbors = 0;  ///< knn, counting the point itself; 0: max(n / 10, 1) as scikit-learn
  int components = 2;
  Solver solver = Solver::evd;
  int block_size = 64;
  KrylovSettings krylov;
  /// knn: how the sparse operator's eigenpairs are found (the filter by default).
  AffinitySolve knn_solve;
  double max_memory_per_rank = 0;
};

struct LaplacianEigenmapsResult {
  std::int64_t n = 0, d = 0;
  double gamma = 0;                        ///< resolved (rbf)
  int neighbors = 0;                       ///< resolved (knn)
  std::optional<graph::GraphStats> graph;  ///< knn: the graph of the other K - 1 neighbours
  /// k + 1 leading eigenvalues mu of D^(-1/2) W D^(-1/2), descending (mu_1 = 1, trivial).
  std::vector<double> affinity_eigenvalues;
  /// 1 - mu: the matching eigenvalues of the normalized Laplacian, ascending.
  std::vector<double> laplacian_eigenvalues;
  std::vector<double> residuals;  ///< ||M v - mu v|| / ||M||_F per pair
  double min_degree = 0, max_degree = 0;
  std::string solver_used, solver_note;
  int iterations = 0, matvecs = 0;
  MemoryCheck memory;
  std::vector<double> embedding;  ///< rank 0 only: n x k row-major, pairs 2..k+1
  std::vector<double> degrees;    ///< rank 0 only: d_i = sum_j w_ij, n (what a model keeps)
  /// knn, rank 0 only: each point's last listed neighbour (the K - 1-th
  /// nearest other) and its distance, n each (for the out-of-sample extension).
  std::vector<std::int64_t> neighbor_last;
  std::vector<double> neighbor_radius;
};

/// Collective over the grid: the Laplacian eigenmap of the n points in
/// `points`, as scikit-learn's SpectralEmbedding computes it (norm_laplacian,
/// drop_first): the diagonal of W is left out of W and of the degrees;
/// column c of the embedding is v_{c+1} / sqrt(degree), flipped so that its
/// largest |entry| (the first of equal ones) is positive. Agreed errors: a
/// point of degree 0 (isolated), a knn graph with several components, and
/// an rbf affinity whose second eigenvalue is 1 to working precision
/// (disconnected, or numerically so: the embedding is then not defined).
/// Empty when the spectral embedding of n points (`source` names them) can
/// be asked with `settings`, else why not: --components k needs k + 1
/// points; --affinity knn needs 2 <= --neighbors <= n (default max(n/10, 1))
/// and the krylov solver (auto or krylov: the graph is never a dense matrix).
/// fit_laplacian_eigenmaps checks with it first, and `kembed plan spectral`
/// before it prints anything.
std::string spectral_embedding_request_error(std::int64_t n,
                                             const LaplacianEigenmapsSettings& settings,
                                             const std::string& source);

/// --neighbors of --affinity knn as the fit uses it: the setting, or max(n/10, 1).
int resolved_neighbors(std::int64_t n, const LaplacianEigenmapsSettings& settings);

/// The memory plan's shape of the spectral embedding of n points in d
/// dimensions on a P x Q grid: rbf the dense n x n matrix, knn its sparse
/// graph (ProblemShape::graph_neighbors).
ProblemShape spectral_problem_shape(std::int64_t n, std::int64_t d, int nprow, int npcol,
                                    const LaplacianEigenmapsSettings& settings);

/// Collective over the grid: with --affinity knn, W is held as sparse rows
/// (graph::symmetrized_rows, built from each rank's neighbour lists) and
/// M = D^(-1/2) W D^(-1/2) is the operator NormalizedAffinity, solved by
/// top_affinity_eigenpairs; no n x n matrix. With rbf, the dense path.
LaplacianEigenmapsResult fit_laplacian_eigenmaps(io::MatrixFile& points, const BlacsGrid& grid,
                                                 const LaplacianEigenmapsSettings& settings,
                                                 PhaseTimer& timer);

}  // namespace kembed::spectral
