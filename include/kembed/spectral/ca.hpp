#pragma once
/// @file Correspondence analysis (Greenacre, "Correspondence Analysis in
/// Practice"; the definitions of R's `ca`): read -> check counts -> masses
/// -> standardized residuals -> cross-product -> solve -> coordinates.
///
/// With P = N / n, row masses r = P 1, column masses c = P^T 1, the
/// standardized residuals S = D_r^{-1/2} (P - r c^T) D_c^{-1/2} have the SVD
/// S = U Sigma V^T; the principal inertias are sigma_k^2. S is formed in
/// place over the block-cyclic table, and the top K pairs come from the
/// smaller of S S^T (I x I, "rows" route) and S^T S (J x J, "columns"
/// route) through the shared spectral step; the other side's singular
/// vectors are S^T U / sigma or S V / sigma.
///   row standard coordinates     Phi = D_r^{-1/2} U
///   row principal coordinates    F   = Phi Sigma
///   column standard coordinates  Gam = D_c^{-1/2} V
///   column principal coordinates G   = Gam Sigma
/// Sign: each dimension is flipped so that its row standard coordinate of
/// largest magnitude is positive; the column coordinates follow.
#include <cstdint>
#include <string>
#include <vector>

#include "kembed/core/phase_timer.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/spectral/eigensolver.hpp"
#include "kembed/spectral/memory_plan.hpp"

namespace kembed::spectral {

enum class CaRoute {
  automatic,  ///< rows when I <= J, else columns
  rows,       ///< S S^T, I x I
  columns,    ///< S^T S, J x J
};

/// Parses auto, rows or columns; throws Error naming the valid ones.
CaRoute parse_ca_route(const std::string& name);
std::string ca_route_name(CaRoute route);

/// The route `route` stands for on an I x J table.
CaRoute resolve_ca_route(CaRoute route, std::int64_t rows, std::int64_t cols);

struct CaSettings {
  int components = 2;
  CaRoute route = CaRoute::automatic;
  Solver solver = Solver::automatic;
  int block_size = 64;
  KrylovSettings krylov;
  /// Leave all-zero rows and columns out of the analysis (they get no
  /// coordinates) instead of refusing the table.
  bool drop_empty = false;
  /// For the caller's check_memory: bytes; 0: the node's available memory / its ranks.
  double max_memory_per_rank = 0;
};

/// What a CA of an I x J table decomposes, for the memory plan (check it
/// with check_memory before the table is read).
ProblemShape ca_problem_shape(std::int64_t rows, std::int64_t cols, const CaSettings& settings,
                              int nprow, int npcol);

/// The rows (or the columns) of the table in the fitted map. Entries of
/// dropped (all-zero) rows are 0 everywhere.
struct CaPoints {
  std::vector<double> mass;           ///< r_i = n_i+ / n (every rank)
  std::vector<double> inertia;        ///< r_i d_i^2 = sum_j s_ij^2 (every rank)
  std::vector<std::int64_t> dropped;  ///< 0-based indices of all-zero rows left out
  std::vector<double> standard;       ///< rank 0: count x k row-major, Phi
  std::vector<double> principal;      ///< rank 0: F = Phi Sigma
  std::vector<double> contribution;   ///< rank 0: r_i phi_ik^2 (sums to 1 over i)
  std::vector<double> cos2;           ///< rank 0: f_ik^2 / d_i^2 (0 where d_i = 0)
  std::vector<double> quality;        ///< rank 0: sum over the k kept dimensions of cos2
};

/// Local (rank 0 in the fits): fills p.principal (F = Phi Sigma),
/// p.contribution, p.cos2 and p.quality from p.standard (count x k
/// row-major), p.mass and p.inertia; `inertias` holds the k principal
/// inertias sigma^2. The dense and the sparse fits share it.
void derive_ca_points(CaPoints& p, const std::vector<double>& inertias);

/// What a CA fit produced; the same on every rank except the rank-0 arrays.
struct CaResult {
  std::int64_t rows = 0, cols = 0;  ///< I, J of the table (dropped ones included)
  double grand_total = 0;           ///< n
  int k = 0;
  CaRoute route = CaRoute::rows;           ///< the route that ran (never automatic)
  double total_inertia = 0;                ///< ||S||_F^2 = chi-square / n
  std::vector<double> principal_inertias;  ///< sigma_k^2, descending
  CaPoints row_points, col_points;
  std::vector<double> spectrum;   ///< all eigenvalues of the solved matrix (evd only)
  std::vector<double> residuals;  ///< ||A v - lambda v|| / ||A||_F, A the solved matrix
  double solved_frobenius = 0;    ///< ||A||_F = sqrt(sum of all sigma^4)
  std::string solver_used, solver_note;
  int iterations = 0, matvecs = 0;
  double smallest_gap = 0;
};

/// Collective: from the table's row and column sums (every rank), sets
/// result.grand_total, the masses and the dropped (all-zero) rows and
/// columns, and agrees on the errors the dense and the sparse fits share: a
/// total that is not positive and finite, an all-zero row or column without
/// settings.drop_empty (named with its label where rank 0 has one), fewer
/// than 2 non-empty rows or columns, --components outside [1, min(I, J) - 1].
void check_ca_margins(const Comm& comm, const std::vector<double>& row_sum,
                      const std::vector<double>& col_sum, const CaSettings& settings,
                      const std::string& source, const std::vector<std::string>& row_names,
                      const std::vector<std::string>& col_names, CaResult& result);

/// Collective over the grid of `table`: CA of the I x J non-negative counts
/// in `table`, which is overwritten with S. `source` names the table in
/// messages; `row_names`/`col_names` (rank 0, may be empty) label rows and
/// columns there. Agreed errors: a negative count, an all-zero row or column
/// (unless drop_empty), fewer than 2 non-empty rows or columns, a table of
/// independence (zero inertia), k outside 1..min(I, J) - 1, fewer than k
/// dimensions of positive inertia.
CaResult fit_ca(DistMatrix& table, const CaSettings& settings, const std::string& source,
                const std::vector<std::string>& row_names,
                const std::vector<std::string>& col_names, PhaseTimer& timer);

/// Collective: principal coordinates of supplementary points (rank 0: m x k
/// row-major), which do not influence the axes. Each row h of `points`
/// (counts over the fitted table's columns for supplementary rows, over its
/// rows for supplementary columns) is divided by its sum and multiplied by
/// the other side's standard coordinates in `standard` (count x k): f = (h /
/// h_+)^T Gamma, the transition formula the fitted points obey. Agreed
/// errors: a wrong column count, a negative count, a row summing to zero.
std::vector<double> ca_supplementary(io::MatrixFile& standard, io::MatrixFile& points,
                                     const BlacsGrid& grid, int block_size);

}  // namespace kembed::spectral
