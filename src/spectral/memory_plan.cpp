#include "kembed/spectral/memory_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include "kembed/core/error.hpp"
#include "kembed/graph/neighbors.hpp"
#include "kembed/kernel/assemble.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/linalg/block_cyclic.hpp"
#include "kembed/mpi/comm.hpp"
#include "kembed/spectral/kernel_operator.hpp"
#include "kembed/spectral/matrix_storage.hpp"
#include "kembed/spectral/pca_rows.hpp"
#include "kembed/spectral/pca_likelihood.hpp"
#include "kembed/spectral/sparse_normal_operator.hpp"
#include "kembed/spectral/stored_operator.hpp"

namespace kembed::spectral {

namespace {
constexpr double kDouble = 8;
// Resident size of an MPI process with kembed's libraries before any work.
constexpr double kBaseline = 25e6;
// The largest value of a Fortran INTEGER in the LP64 ScaLAPACK kembed links:
// matrix orders and workspace lengths beyond it cannot be passed at all.
constexpr double kFortranIntMax = 2147483647.0;
// The back-transformation workspace kembed adds to pdsyevd's and pdsyevr's
// (src/linalg/scalapack.cpp) is capped at 2^30 doubles; a block size that
// needs more leaves the eigenvectors untransformed.
constexpr double kBackTransformCap = 1073741824.0;

// NUMROC for process 0: how many of n indices, dealt in blocks of nb over
// nprocs processes, process 0 owns (it owns the most). 64-bit throughout, so
// any n and any process count work.
double local_count(std::int64_t n, std::int64_t nb, std::int64_t nprocs) {
  if (n <= 0) return 0;
  const std::int64_t blocks = (n - 1) / nb + 1;
  const std::int64_t mine = blocks / nprocs + (blocks % nprocs > 0 ? 1 : 0);
  double count = static_cast<double>(mine) * static_cast<double>(nb);
  // The last block may be partial; it belongs to (blocks - 1) % nprocs.
  if ((blocks - 1) % nprocs == 0) count -= static_cast<double>(blocks * nb - n);
  return count;
}

// The solver's own sizes, in doubles, for process (0, 0).
struct SolverSizes {
  double np = 0, nq = 0, nb = 0, n = 0;
  // What kembed adds for pdormtr (scalapack.cpp, back_transform_workspace).
  double back_transform() const {
    return std::max(nb * (nb - 1) / 2, (np + nq + 2 * nb) * nb) + nb * nb;
  }
  // pdsyevd's LWORK: max(1 + 6n + 2 np nq, 3n + max(nb (np + 1), 3 nb)) + 2n
  // (its documentation), plus the back-transformation workspace.
  double syevd_work() const {
    return std::max(1 + 6 * n + 2 * np * nq, 3 * n + std::max(nb * (np + 1), 3 * nb)) + 2 * n +
           back_transform();
  }
};

SolverSizes sizes_of(const ProblemShape& s) {
  const int nb = effective_block_size(s.block_size, s.n);
  return {local_count(s.n, nb, s.nprow), local_count(s.n, nb, s.npcol), double(nb),
          static_cast<double>(s.n)};
}

// ELPA 2022.11 fails or hangs when a process row or column owns no block;
// top_eigenpairs then runs evr instead (eigensolver.cpp).
bool elpa_falls_back(const ProblemShape& s) {
  const std::int64_t nb = effective_block_size(s.block_size, s.n);
  const std::int64_t blocks = s.n > 0 ? (s.n - 1) / nb + 1 : 0;
  return blocks < std::max(s.nprow, s.npcol);
}

// The shape's solver: resolved by the fit's plan (plan_fit) for kpca and
// mds; pca, isomap and spectral may still leave it automatic.
Solver shape_solver(const ProblemShape& s) {
  if (s.single_precision || s.matrix_free) return Solver::krylov;
  return s.solver == Solver::automatic ? resolve_solver(s.solver, s.n, s.k) : s.solver;
}

Solver planned_solver(const ProblemShape& s) {
  const Solver solver = shape_solver(s);
  return solver == Solver::elpa && elpa_falls_back(s) ? Solver::evr : solver;
}

// Bytes of the blocks on and below the diagonal that process (0, 0) holds:
// for each of its block columns J, the rows of its row blocks I >= J.
double lower_blocks(const ProblemShape& s) {
  const std::int64_t nb = effective_block_size(s.block_size, s.n);
  const std::int64_t blocks = s.n > 0 ? (s.n - 1) / nb + 1 : 0;
  const double rows = local_count(s.n, nb, s.nprow);
  double entries = 0;
  for (std::int64_t j = 0; j < blocks; j += s.npcol) {
    const double cols = static_cast<double>(std::min(nb, s.n - j * nb));
    const std::int64_t above = (j + s.nprow - 1) / s.nprow;  // row blocks 0, P, ... below j
    entries += cols * std::max(0.0, rows - static_cast<double>(above * nb));
  }
  return entries * kDouble;
}

// As krylov.cpp sizes them: block width b, depth q, basis m = q b and the
// next block (b more columns) on a P*Q x 1 grid (rows dealt in blocks of
// nb, so a large nb puts them all on one rank), with the Ritz vectors and
// their products (n x keep each) beside them: {b, bytes}.
std::pair<double, double> krylov_basis(const ProblemShape& s, const KrylovSettings& settings) {
  const int nb = effective_block_size(s.block_size, s.n);
  if (s.n < 1 || s.k < 1) return {0.0, 0.0};
  const KrylovShape shape = krylov_shape(s.k, settings, s.n);
  const double rows = local_count(s.n, nb, std::int64_t{s.nprow} * s.npcol);
  // The basis and its next block, the Ritz vectors and their products.
  return {double(shape.b), rows * (shape.m + shape.b + 2.0 * shape.keep) * kDouble};
}

std::string count(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", v);
  return text;
}

// The k-d tree's search (nearest_neighbors with d <= kTreeMaxDims): every
// point twice while the tree is built (as read, and in tree order), their
// indices, about n / 8 nodes of 2 d bounds, and the rank's own rows.
double tree_search_bytes(double n, double d, double block_rows) {
  return (2 * n * d + n) * kDouble + n / 8 * (24 + 16 * d) + block_rows * d * kDouble;
}

}  // namespace

double process_baseline_bytes() { return kBaseline; }

ReplicatedGraphBytes replicated_graph_bytes(std::int64_t n, std::int64_t d, std::int64_t lists,
                                            int ranks) {
  const double nn = double(n), listed = double(lists), p = std::max(1, ranks);
  const double block_rows = std::ceil(nn / p), dims = double(std::max<std::int64_t>(1, d));
  const double per_row = std::ceil(listed / std::max(1.0, nn));
  // The rank's lists: one vector per row while they are selected (a
  // 24-byte header each), then concatenated.
  const double own_lists = block_rows * (per_row * 16 + 24) + block_rows * per_row * 16;
  ReplicatedGraphBytes bytes;
  bytes.held = 2 * listed * 17 + (nn + 1) * 8;
  bytes.search = (d <= graph::kTreeMaxDims
                      ? tree_search_bytes(nn, dims, block_rows)
                      : (block_rows + std::min(nn, 4096.0)) * dims * kDouble) +
                 own_lists;
  // symmetrize(): the gathered lists, the counting sort's entries (both
  // directions of each pair) and its counts and fill positions, beside the
  // rank's own lists, the gathered counts and the offsets.
  bytes.build = block_rows * per_row * 16 + listed * 16 + 2 * listed * 16 + 4 * nn * 8;
  return bytes;
}

double busiest_rank_entries(const ProblemShape& s) {
  if (s.lower_storage || s.matrix_free) return lower_blocks(s) / kDouble;
  const SolverSizes z = sizes_of(s);
  return z.np * z.nq;
}

int effective_block_size(int requested, std::int64_t order) {
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(requested, order)));
}

double MemoryPlan::total() const {
  double sum = 0;
  for (const auto& item : items) sum += item.second;
  return sum;
}

std::string MemoryPlan::describe() const {
  std::ostringstream out;
  for (const auto& [what, bytes] : items) out << "  " << what << ": " << human_bytes(bytes) << "\n";
  out << "  total: " << human_bytes(total()) << " per rank (" << count(total()) << " bytes)\n";
  for (const auto& note : notes) out << "  note: " << note << "\n";
  return out.str();
}

// spectral --affinity knn, two phases. The graph: the neighbour search (each
// rank's contiguous block of rows, a chunk of the others, K - 1 neighbours
// per row), the pairs exchanged to build the rows (16 bytes each, both
// directions: with the lists, 5 per listed neighbour at the peak), the rows
// with global columns, and the union-find labels of the component count
// (n on each rank, 2 n while merging). The solve: the sparse rows of M
// (at most 2 (K - 1) entries per row, a buffer index and a value each), the
// degrees, the gathered rows of a product (at most every other row) and
// those sent, then either the multigrid hierarchy and LOBPCG's blocks (the
// default) or the Chebyshev filter's three blocks and the Krylov basis, and
// the results.
MemoryPlan plan_sparse_graph(const ProblemShape& s) {
  const double n = static_cast<double>(s.n), ranks = double(s.nprow) * s.npcol;
  const int nb = effective_block_size(s.block_size, s.n);
  const double rows = local_count(s.n, nb, std::int64_t{s.nprow} * s.npcol);
  const double block_rows = std::ceil(n / ranks);
  const double others = std::max(1, s.graph_neighbors - 1);
  const double entries = std::min(n - 1, 2 * others) * rows;
  const std::int64_t b = std::max<std::int64_t>(1, std::min<std::int64_t>(s.n, s.graph_block));
  // The Krylov solver's block (on the filter, or on M): graph_block, or with
  // the multigrid the filter's should LOBPCG fall back to it.
  const std::int64_t bk = std::max<std::int64_t>(
      1, std::min<std::int64_t>(s.n, s.graph_multigrid ? s.graph_filter_block : s.graph_block));
  const std::int64_t q = std::max<std::int64_t>(
      2, std::min<std::int64_t>(krylov_depth(static_cast<int>(bk), KrylovSettings{}, s.n), s.n / bk));
  const double m = static_cast<double>(std::min<std::int64_t>(q * bk, s.n));
  const double krylov = 3 * rows * double(bk) * kDouble + rows * (m + 3 * double(bk)) * kDouble;
  MemoryPlan plan;
  plan.items.push_back({"process baseline", kBaseline});
  plan.items.push_back({"sparse rows of M (K = " + std::to_string(s.graph_neighbors) + ")",
                        entries * (4 + 8) + (rows + 1) * 8});
  plan.items.push_back({"degrees", rows * kDouble});
  const double fetched = std::min(n - rows, entries);
  // LOBPCG multiplies M by up to 2 b columns ([W, P]).
  const double width = s.graph_multigrid ? std::max(2 * b, bk) : b;
  plan.items.push_back(
      {"exchange buffers (gathered and sent rows)", (rows + 2 * fetched) * width * kDouble});
  if (s.graph_multigrid) {
    const double hierarchy = graph::multigrid_planned_bytes(n, rows, entries, fetched, double(b),
                                                            s.graph_multigrid_settings);
    // X, A X, the residuals, W, P, Z = [W P] (2 b) and its image (2 b), the
    // new X and A X, and a spare: 12 blocks of b; the Rayleigh-Ritz
    // matrices are (3 b)^2.
    const double lobpcg = 12 * rows * double(b) * kDouble;
    plan.items.push_back({"multigrid hierarchy of the graph", hierarchy});
    plan.items.push_back({"lobpcg blocks", lobpcg});
    // Should LOBPCG not converge, the hierarchy is released and the filtered
    // Krylov solver runs: counted where it needs more.
    if (krylov > hierarchy + lobpcg)
      plan.items.push_back({"the filtered krylov solver beyond the multigrid's memory (should "
                            "lobpcg not converge)",
                            krylov - hierarchy - lobpcg});
  } else {
    plan.items.push_back({"Chebyshev filter blocks", 3 * rows * double(b) * kDouble});
    plan.items.push_back({"krylov basis and Ritz vectors", rows * (m + 3 * double(b)) * kDouble});
  }
  plan.items.push_back({"results gathered on rank 0", 3 * n * s.k * kDouble});
  // The k-d tree (euclidean, d <= kTreeMaxDims) holds every point twice
  // while it is built (as read, and in tree order), their indices and about
  // n / 8 nodes of 2 d bounds; its order numbers the vertices (n indices,
  // kept for the solve, and their inverse while the rows are built).
  const double d = double(std::max<std::int64_t>(1, s.d));
  const bool tree = s.d <= graph::kTreeMaxDims;
  if (tree) plan.items.push_back({"vertex numbering (the k-d tree's order)", n * 8});
  // The graph is built, and its components counted, before the solve
  // allocates anything: the plan's total is the larger of the two phases.
  const double solve_phase = plan.total() - kBaseline;
  const double lists = block_rows * (others * 16 + 24) + block_rows * others * 16;
  const double search =
      tree ? tree_search_bytes(n, d, block_rows) + lists
           : (block_rows + std::min(n, 4096.0)) * d * kDouble + 5 * block_rows * others * 16;
  const double build = entries * (8 + 8 + 8) + 2 * n * 8 + (tree ? 2 * n * 8 : 0);
  const double graph_phase = std::max(search, build);
  if (graph_phase > solve_phase)
    plan.items.push_back(
        {"graph build beyond the solve's memory (neighbour lists, exchanged "
         "pairs, component labels)",
         graph_phase - solve_phase});
  return plan;
}

// --storage none: nothing n x n (see ProblemShape::matrix_free).
MemoryPlan plan_matrix_free(const ProblemShape& s) {
  const SolverSizes z = sizes_of(s);
  const double n = z.n;
  const auto [b, basis] = krylov_basis(s, matrix_free_krylov(KrylovSettings{}, s.k));
  const double rows = local_count(s.n, z.nb, std::int64_t{s.nprow} * s.npcol);
  const OperatorCost cost = PointMatrixOperator::planned_cost(
      n, rows, z.np, z.nq, lower_blocks(s) / kDouble, double(s.d), z.nb, s.single_precision, b);
  MemoryPlan plan;
  plan.items.push_back({"process baseline", kBaseline});
  plan.items.push_back({"data panels", double(cost.held_bytes)});
  plan.items.push_back({"row sums and means of the matrix (n, every rank)", 2 * n * kDouble});
  plan.items.push_back(
      {"recomputed chunk and block product buffers (matrix-free)", double(cost.work_bytes)});
  plan.items.push_back({"krylov basis and Ritz vectors", basis});
  plan.items.push_back({"results gathered on rank 0", 3 * n * s.k * kDouble});
  return plan;
}

// Sparse rows (ProblemShape::sparse_entries): the busiest rank's CSR arrays
// (an int32 column and a double value per entry, an offset per row; the rows
// are split by entries, so a rank's row count is estimated as the average;
// the readers narrow the columns as they read, so reading adds nothing of
// this size), the operator's column statistics and scalings (6 d) and row
// factors, a product's blocks at the widest block the solver multiplies
// (the Ritz vectors' product at a restart: the gathered d x w block, its
// row-major copy and sums, the rank's rows' products and the received
// columns), the Krylov basis on the operator's rows, the scores of the
// rank's rows, and the results on rank 0. pca frees the rows before it
// gathers the n x k scores and forms its model, so only what those hold
// beyond the fit's own peak is added; ca keeps them, and holds each row's and column's mass,
// distance, inertia, quality and four k-vectors (standard and principal
// coordinates, contributions, squared cosines), two labels each, and one
// table's values while its CSV is written (in pieces of 1 MiB).
MemoryPlan plan_sparse_data(const ProblemShape& s) {
  const double d = double(s.n), ranks = double(s.nprow) * s.npcol, n = double(s.data_rows);
  const double rows = std::ceil(n / ranks), k = s.k;
  const KrylovSettings krylov = sparse_krylov(KrylovSettings{}, s.k, s.n);
  const KrylovShape shape = krylov_shape(s.k, krylov, s.n);
  const double widest = std::max(shape.b, shape.keep);
  const double basis = krylov_basis(s, krylov).second;
  MemoryPlan plan;
  plan.items.push_back({"process baseline", kBaseline});
  const double csr = double(s.sparse_entries) * (4 + kDouble) + (rows + 1) * 8;
  plan.items.push_back({"sparse rows (CSR: column and value per stored entry, offset per row)", csr});
  const bool ca = s.sparse_fit == SparseMethod::ca;
  const double statistics = 6 * d * kDouble + (ca ? 2 * n : 2 * rows) * kDouble;
  plan.items.push_back({ca ? "column statistics and scalings (d, every rank), row masses and "
                             "inertias (n, every rank)"
                           : "column statistics and scalings (d, every rank), row factors",
                        statistics});
  const double blocks = (4 * d + rows + d / ranks) * widest * kDouble;
  plan.items.push_back({"product blocks (widest block " + count(widest) + ", d and the rank's rows)",
                        blocks});
  plan.items.push_back({"krylov basis and Ritz vectors", basis});
  const double scores = rows * k * kDouble, axes = 3 * d * k * kDouble;
  plan.items.push_back({"scores of this rank's rows, the axes (d x k, every rank)", scores + axes});
  if (ca) {
    const double per_point = (4 * k + 3) * kDouble + 2 * 40.0;
    plan.items.push_back({"row and column points on rank 0, one table's CSV values",
                          (n + d) * per_point + std::max(n, d) * (4 * k + 4) * kDouble + (1 << 20)});
  } else {
    // The model's d x d covariance of the probabilistic PCA (d <= 4096;
    // counted with --no-center too, which writes none) is formed on rank 0
    // after the scores are gathered.
    const double fit = csr + statistics + blocks + basis;
    const double model = s.n <= kPcaCovarianceMaxFeatures ? d * d * kDouble : 0.0;
    const double after = n * k * kDouble + model + (1 << 20);
    plan.items.push_back({"scores gathered on rank 0 and the model's covariance (d <= " +
                              std::to_string(kPcaCovarianceMaxFeatures) +
                              "), once the rows are freed (beyond the fit's own peak)",
                          std::max(0.0, after - fit)});
  }
  return plan;
}

std::int64_t most_entries_per_rank(std::int64_t entries, std::int64_t cols, int ranks) {
  if (entries <= 0) return 0;
  const std::int64_t p = std::max(1, ranks);
  const std::int64_t share = entries / p + (entries % p != 0 ? 1 : 0);
  // A rank's range ends at the first row reaching the next rank's start, so
  // it runs past its share by at most that row's entries but one.
  const std::int64_t longest_row = std::min(std::max<std::int64_t>(cols, 1), entries);
  return std::min(entries, share + longest_row - 1);
}

ProblemShape sparse_problem_shape(std::int64_t rows, std::int64_t cols, std::int64_t entries,
                                  int k, int nprow, int npcol, int block_size, SparseMethod fit,
                                  std::int64_t held) {
  ProblemShape shape{cols, 0, k, nprow, npcol, block_size, Solver::krylov};
  shape.sparse_fit = fit;
  shape.data_rows = rows;
  shape.data_cols = cols;
  shape.sparse_entries =
      std::max({std::int64_t{1}, most_entries_per_rank(entries, cols, nprow * npcol), held});
  return shape;
}

MemoryPlan plan_memory(const ProblemShape& s) {
  if (s.sparse_entries > 0) return plan_sparse_data(s);
  if (s.graph_neighbors > 0) return plan_sparse_graph(s);
  if (s.matrix_free) return plan_matrix_free(s);
  const SolverSizes z = sizes_of(s);
  const double np = z.np, nq = z.nq, n = z.n, nb = z.nb;
  const double local = np * nq * kDouble;  // one n x n matrix on process (0, 0)
  MemoryPlan plan;
  if (s.block_size > nb)
    plan.notes.push_back("block size " + std::to_string(s.block_size) + " is larger than the " +
                         std::to_string(s.n) + " x " + std::to_string(s.n) + " matrix; " +
                         count(nb) + " is used");
  plan.items.push_back({"process baseline", kBaseline});
  if (s.single_precision) {
    if (s.lower_storage)
      plan.items.push_back(
          {"n x n matrix (blocks on and below the diagonal, float32)", lower_blocks(s) / 2});
    else
      plan.items.push_back({"n x n matrix (local block, float32)", local / 2});
    // kernel::assemble_kernel's slab: whole rounds of nb columns per process
    // column, about kDefaultSlabEntries doubles, at least one block column.
    const double slab = double(kernel::kDefaultSlabEntries);
    plan.items.push_back({"assembly slab (double)",
                          np * std::max(nb, std::floor(slab / (np * nb)) * nb) * kDouble});
  } else if (s.lower_storage) {
    plan.items.push_back({"n x n matrix (blocks on and below the diagonal)", lower_blocks(s)});
  } else {
    plan.items.push_back({"n x n matrix (local block)", local});
  }
  if (s.additive_blocks > 0)
    plan.items.push_back({"additive constant (mds --add)", s.additive_blocks * local});
  // Isomap: the graph, beside the matrix it fills, and Dijkstra's distances
  // and heap (lazy deletion: about 2 n entries at most in practice).
  const bool geodesic = s.geodesic_lists > 0;
  const ReplicatedGraphBytes graph = replicated_graph_bytes(
      s.n, s.d, s.geodesic_lists, static_cast<int>(std::int64_t{s.nprow} * s.npcol));
  if (geodesic) {
    plan.items.push_back({"neighbourhood graph, whole on every rank (" + count(s.geodesic_lists) +
                              " listed neighbours, both directions, 17 bytes each)",
                          graph.held});
    plan.items.push_back({"shortest-path search (distances, heap)", n * kDouble + 2 * n * 16});
  }
  if (s.replicated_vectors > 0)
    plan.items.push_back({"degree vectors (n, every rank)", s.replicated_vectors * n * kDouble});
  if (s.d > 0 && !geodesic)
    plan.items.push_back({"data panels", (np + nq) * double(s.d) * kDouble});
  // Matrices read from a file (n x n, or PCA's data) arrive one block row
  // (nb rows) at a time.
  if (s.d == 0 && !geodesic)
    plan.items.push_back(
        {"input stripe", nb * (s.data_rows > 0 ? double(s.data_cols) : n) * kDouble});
  if (s.data_rows > 0) {
    plan.items.push_back({"data matrix (local block)",
                          local_count(s.data_rows, z.nb, s.nprow) *
                              local_count(s.data_cols, z.nb, s.npcol) * kDouble});
    // The cross-product of the data is kept through the solve (for the
    // residuals) rather than formed again.
    plan.items.push_back({"copy of the n x n matrix", local});
    // cross_product's local path (whole rows or columns per rank): the m x m
    // partial sum and its packed copy for the reduce-scatter; PCA's row
    // panels (pca_rows.hpp) hold the d x d sums and the reduction's buffer.
    const std::int64_t ranks = std::int64_t{s.nprow} * s.npcol;
    const bool local_path =
        (s.npcol == 1 && s.n == s.data_cols &&
         (s.data_cols <= kRowPanelMaxCols || s.data_cols * ranks <= s.data_rows)) ||
        (s.nprow == 1 && s.n == s.data_rows && s.data_rows * ranks <= s.data_cols);
    if (local_path) plan.items.push_back({"cross-product partial sums", 2 * n * n * kDouble});
  }
  const Solver asked = shape_solver(s);
  const Solver solver = asked == Solver::elpa && elpa_falls_back(s) ? Solver::evr : asked;
  if (solver != asked)
    plan.notes.push_back("elpa needs every process row and column to own a block; evr is used");
  switch (solver) {
    case Solver::automatic:  // resolved above
    case Solver::evd:
      // pdsyevd: Z, its LWORK and LIWORK = 7n + 8 npcol + 2 integers.
      plan.items.push_back({"eigenvectors (n x n)", local});
      plan.items.push_back({"pdsyevd workspace",
                            z.syevd_work() * kDouble + (7 * n + 8.0 * s.npcol + 2) * 4});
      break;
    case Solver::evr: {
      // pdsyevr: Z, and its tridiagonal reduction's optimal workspace
      // (nps + 4) nps with nps ~ n / sqrt(P Q); its pdormtr gets
      // max(18n, np mq + 2 nb^2), and kembed adds the back-transformation's.
      const double nps = n / std::floor(std::sqrt(double(s.nprow) * s.npcol));
      plan.items.push_back({"eigenvectors (n x n)", local});
      // The 1.5 local blocks more were measured (n = 3000, 6000 on 2 ranks).
      plan.items.push_back({"pdsyevr workspace",
                            ((nps + 4) * nps + 30 * n + 2 * nb * nb + z.back_transform()) *
                                    kDouble +
                                1.5 * local});
      break;
    }
    case Solver::elpa:
      plan.items.push_back({"eigenvectors (n x n)", local});
      // ELPA's two-stage solver allocates internally; 2.5 local blocks were
      // measured (n = 3000, 6000 on 2 ranks), and its band stage holds
      // panels of nb columns of the local rows and columns.
      plan.items.push_back(
          {"ELPA workspace", 2.5 * local + (2 * (np + nq) * nb + 2 * nb * nb) * kDouble});
      break;
    case Solver::krylov: {
      const auto [b, basis] = krylov_basis(s, KrylovSettings{});
      const double rows = local_count(s.n, z.nb, std::int64_t{s.nprow} * s.npcol);
      plan.items.push_back({"krylov basis and Ritz vectors", basis});
      // The stored matrix's product (StoredOperator: BlockProduct's n x b blocks).
      plan.items.push_back({"block product buffers",
                            StoredOperator::product_work_bytes(n, rows, np, nq, s.lower_storage,
                                                               s.single_precision, double(b))});
      break;
    }
  }
  plan.items.push_back({"results gathered on rank 0",
                        3 * std::max(n, double(s.data_rows)) * s.k * kDouble});
  // Isomap's graph is searched and built before the n x n matrix exists:
  // the larger of that phase and the solve's.
  if (geodesic) {
    const double solve_phase = plan.total() - kBaseline;
    const double graph_phase = std::max(graph.search, graph.held + graph.build);
    if (graph_phase > solve_phase)
      plan.items.push_back({"graph build beyond the solve's memory (neighbour search, gathered "
                            "lists, both directions of every pair)",
                            graph_phase - solve_phase});
  }
  return plan;
}

std::string plan_limits(const ProblemShape& s) {
  const auto too_large = [](const std::string& what, double value) {
    return what + " (" + count(value) + ") exceeds " + count(kFortranIntMax) +
           ", the largest integer ScaLAPACK (32-bit) accepts";
  };
  if (double(s.n) > kFortranIntMax) return too_large("the matrix order n", double(s.n));
  if (double(s.data_rows) > kFortranIntMax)
    return too_large("the number of samples", double(s.data_rows));
  if (double(s.data_cols) > kFortranIntMax)
    return too_large("the number of features", double(s.data_cols));
  const Solver solver = planned_solver(s);
  if (solver != Solver::evd && solver != Solver::evr) return "";
  const SolverSizes z = sizes_of(s);
  if (z.back_transform() > kBackTransformCap)
    return "block size " + count(z.nb) + " is too large for the eigensolver: its " +
           "back-transformation needs " + count(z.back_transform()) +
           " doubles of workspace, more than the " + count(kBackTransformCap) +
           " kembed can give it; use a smaller --block-size (64 is the default) or --solver krylov";
  if (solver == Solver::evd && z.syevd_work() > kFortranIntMax)
    return "pdsyevd's workspace of " + count(z.syevd_work()) + " doubles on one rank exceeds " +
           count(kFortranIntMax) +
           ", the largest length ScaLAPACK (32-bit) accepts; use more ranks or --solver krylov";
  return "";
}

std::string human_bytes(double bytes) {
  if (!std::isfinite(bytes)) return "unknown";
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000 && u < 4) bytes /= 1000, ++u;
  char text[32];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return text;
}

double parse_bytes(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  double scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  if (unit == "k" || unit == "K" || unit == "kB" || unit == "KB") scale = 1e3;
  if (unit == "M" || unit == "MB") scale = 1e6;
  if (unit == "G" || unit == "GB") scale = 1e9;
  if (unit == "T" || unit == "TB") scale = 1e12;
  if (used == 0 || scale == 0 || !(value > 0))
    throw Error("cannot read the memory size '" + text + "' (examples: 2G, 512M, 1.5T)");
  return value * scale;
}

double available_memory_per_rank(const Comm& world) {
  const Comm on_node = world.split_shared();
  double available = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") available = kib * 1024;
  // Unknown (no /proc/meminfo): no limit rather than a refusal.
  const double share = available > 0 ? available / on_node.size()
                                     : std::numeric_limits<double>::infinity();
  // The smallest share on any node, so every rank decides alike.
  return world.min(share);
}

std::string memory_shortfall(const ProblemShape& shape, int ranks, double limit) {
  return memory_shortfall(shape, plan_memory(shape), ranks, limit);
}

std::string memory_shortfall(const ProblemShape& shape, const MemoryPlan& plan, int ranks,
                             double limit) {
  const std::string limits = plan_limits(shape);
  if (!limits.empty()) return limits + "\n" + plan.describe();
  if (plan.total() <= limit) return "";
  std::string error = "not enough memory: this run needs about " + human_bytes(plan.total()) +
                      " per rank (" + std::to_string(ranks) + " ranks), but " +
                      human_bytes(limit) + " is available per rank (--max-memory-per-rank)";
  ProblemShape bigger = shape;
  for (std::int64_t p = 2 * std::int64_t{ranks}; p <= (1 << 20); p *= 2) {
    const auto grid = BlacsGrid::near_square(static_cast<int>(p));
    bigger.nprow = grid.first;
    bigger.npcol = grid.second;
    if (plan_limits(bigger).empty() && plan_memory(bigger).total() <= limit) {
      error += "; " + std::to_string(p) + " ranks would fit";
      break;
    }
  }
  ProblemShape krylov = shape;
  krylov.solver = Solver::krylov;
  if (shape_solver(shape) != Solver::krylov && plan_limits(krylov).empty() &&
      plan_memory(krylov).total() <= limit)
    error += "; --solver krylov would fit here (" + human_bytes(plan_memory(krylov).total()) +
             " per rank)";
  ProblemShape single = krylov;
  single.single_precision = true;
  if (shape.single_precision_available && !shape.single_precision &&
      plan_limits(single).empty() && plan_memory(single).total() <= limit)
    error += "; --precision single would fit here (" + human_bytes(plan_memory(single).total()) +
             " per rank, float32 storage)";
  ProblemShape none = krylov;
  none.matrix_free = true;
  none.lower_storage = false;
  if (shape.single_precision_available && !shape.matrix_free && plan_memory(none).total() <= limit)
    error += "; --storage none would fit here (" + human_bytes(plan_memory(none).total()) +
             " per rank, the matrix recomputed from the points in every product)";
  return error + "\n" + plan.describe();
}

std::string streamed_shortfall(const std::function<double(int)>& bytes_for, int ranks,
                               double limit) {
  const double needed = bytes_for(ranks);
  if (needed <= limit) return "";
  std::string error = "not enough memory: this run needs about " + human_bytes(needed) +
                      " per rank (" + std::to_string(ranks) + " ranks), but " +
                      human_bytes(limit) + " is available per rank (--max-memory-per-rank)";
  for (std::int64_t p = 2 * std::int64_t{ranks}; p <= (1 << 20); p *= 2)
    if (bytes_for(static_cast<int>(p)) <= limit)
      return error + "; " + std::to_string(p) + " ranks would fit";
  return error + "; no number of ranks would fit (what every rank holds whole does not shrink "
                 "with more ranks)";
}

MemoryCheck check_memory(const ProblemShape& shape, double limit, const Comm& comm) {
  if (limit <= 0) limit = available_memory_per_rank(comm);
  return check_memory(shape, plan_memory(shape), limit, comm);
}

MemoryCheck check_memory(const ProblemShape& shape, const MemoryPlan& plan, double limit,
                         const Comm& comm) {
  agree(comm, memory_shortfall(shape, plan, comm.size(), limit));
  return {plan.total(), limit};
}

}  // namespace kembed::spectral
