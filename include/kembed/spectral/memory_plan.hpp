#pragma once
/// @file How much memory a fit needs per rank, before anything large is allocated.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kembed/graph/graph_multigrid.hpp"
#include "kembed/spectral/eigensolver.hpp"

namespace kembed {
class Comm;
}

namespace kembed::spectral {

/// The sparse fits, whose results differ in size (ProblemShape::sparse_fit).
enum class SparseMethod { pca, ca };

/// The shape of an n x n decomposition (kernel PCA, MDS, PCA's covariance or
/// Gram matrix) on a P x Q grid.
struct ProblemShape {
  std::int64_t n = 0;  ///< order of the decomposed matrix
  std::int64_t d = 0;  ///< features read into panels (0: the input is the n x n matrix)
  int k = 2;
  int nprow = 1, npcol = 1, block_size = 64;
  Solver solver = Solver::evd;
  /// PCA: the data matrix held block-cyclically during the whole fit
  /// (samples x features; 0 x 0 for kernel PCA and MDS).
  std::int64_t data_rows = 0, data_cols = 0;
  /// The n x n matrix stored as float32 (`--precision single`, krylov only),
  /// assembled in double a slab of columns at a time.
  bool single_precision = false;
  /// The method could store it so (kpca, mds from points): memory_shortfall
  /// then says when `--precision single` would fit.
  bool single_precision_available = false;
  /// The n x n matrix held in its blocks on and below the diagonal
  /// (Storage::lower_blocks; krylov only).
  bool lower_storage = false;
  /// > 0: the matrix is the normalized affinity of a kNN graph with this
  /// many neighbours per point (counting the point itself), held as sparse
  /// rows (spectral --affinity knn); krylov only, no n x n matrix. The plan
  /// then counts the neighbour search, the rows, the exchange buffers and the
  /// Krylov basis of a block of graph_block columns.
  int graph_neighbors = 0;
  int graph_block = 0;
  /// The graph's eigenpairs by LOBPCG with its multigrid (AffinityMethod::
  /// multigrid): the plan counts the hierarchy (multigrid_planned_bytes with
  /// these settings) and LOBPCG's blocks of graph_block columns instead of
  /// the Chebyshev filter's blocks and the Krylov basis.
  bool graph_multigrid = false;
  /// With graph_multigrid: the block of the filtered Krylov solver that runs
  /// should LOBPCG not converge (its basis is counted where it needs more
  /// than the released hierarchy and LOBPCG's blocks).
  int graph_filter_block = 0;
  graph::MultigridSettings graph_multigrid_settings{};
  /// The matrix is never stored (`--storage none`, krylov only): the plan
  /// counts the points' panels, one recomputed chunk, the lower-block
  /// product's buffers (PointMatrixOperator::planned_cost), the row means
  /// and the Krylov basis of a matrix-free block (matrix_free_krylov).
  bool matrix_free = false;
  /// `mds --add`: local n x n blocks the additive constant holds beside the
  /// stored matrix while it is computed (cailliez: the 2n x 2n matrix, four
  /// blocks, and a work copy; lingoes: the copy of B that pdsyevr overwrites).
  /// Counted as if they lived through the solve, though they are freed
  /// before it: the guard errs towards refusing rather than running out.
  double additive_blocks = 0;
  /// > 0: the data are sparse rows (pca or ca of a .h5ad, .npz or .mtx
  /// file) and the busiest rank stores at most this many entries
  /// (most_entries_per_rank); n is the order of
  /// the operator (d for pca, the J columns for ca), data_rows the data's
  /// rows. The plan counts the CSR rows, the column statistics, a product's
  /// d x b blocks, the Krylov basis of the sparse fits (sparse_krylov) and
  /// the results: never an n x n or a dense data matrix.
  std::int64_t sparse_entries = 0;
  /// What a sparse fit keeps on rank 0 (sparse_problem_shape): pca frees its
  /// rows before gathering the n x k scores, ca keeps them and holds every
  /// row's and column's coordinates, contributions and squared cosines.
  SparseMethod sparse_fit = SparseMethod::pca;
  /// > 0: Isomap's geodesic matrix (isomap_problem_shape): the neighbourhood
  /// graph of the n points (d features) is built from this many listed
  /// neighbours in all (n K with --neighbors K) and held whole on every rank
  /// through the solve, which fills the n x n matrix from it by Dijkstra (no
  /// data panels, no input stripe). The plan counts the graph, the
  /// shortest-path search and, where it is larger than the solve, the
  /// neighbour search and the graph's build (replicated_graph_bytes).
  std::int64_t geodesic_lists = 0;
  /// Vectors of length n every rank holds through the solve (spectral
  /// --affinity rbf: the degrees, their inverse square roots, rank 0's copy).
  int replicated_vectors = 0;
};

/// Resident bytes of an MPI process with kembed's libraries before any work:
/// the first item of every plan (plan_memory's and the approximate tier's).
double process_baseline_bytes();

/// Bytes per rank of a neighbourhood graph held whole on every rank
/// (graph::neighborhood_graph of n points with d features, `lists` listed
/// neighbours in all, `ranks` ranks): what it holds once built, and the
/// peaks of its two phases before that, each counted without the other.
struct ReplicatedGraphBytes {
  /// graph::Graph: 2 lists entries reserved (target, length, listed flag:
  /// 17 bytes) and n + 1 offsets.
  double held = 0;
  /// The neighbour search: the k-d tree (d <= graph::kTreeMaxDims: every
  /// point twice while it is built, n / 8 nodes of 2 d bounds, the rank's
  /// rows) or the scan's chunk, and the rank's lists.
  double search = 0;
  /// Beside `held` while it is filled: the rank's lists, the gathered lists
  /// and both directions of every listed pair (16 bytes each), four n-vectors.
  double build = 0;
};
ReplicatedGraphBytes replicated_graph_bytes(std::int64_t n, std::int64_t d, std::int64_t lists,
                                            int ranks);

/// The most stored entries one of `ranks` ranks can hold when the rows of a
/// matrix with `cols` columns and `entries` stored entries are split by
/// entries (io's split_rows_by_entries: rank r starts at the first row whose
/// entries begin at or after floor(r entries / ranks)): ceil(entries / ranks)
/// plus a row's entries but one, a row holding at most min(cols, entries);
/// never more than `entries`. It needs the shape and the count only, so
/// `kembed plan` (from --nnz or a file's header) and the fit's guard (from
/// the entries read) price the same number.
std::int64_t most_entries_per_rank(std::int64_t entries, std::int64_t cols, int ranks);

/// The shape of a sparse fit (ProblemShape::sparse_entries) of a rows x
/// cols CSR matrix storing `entries` in all, on nprow x npcol ranks: the
/// busiest rank is priced at most_entries_per_rank, or at `held` when a
/// rank is known to hold more (the fit passes the most a rank holds: rows
/// split by a file's entries before repeated ones were summed can exceed
/// the bound of the summed count). The one plan of the sparse pca and ca
/// fits, their --dry-run and `kembed plan`.
ProblemShape sparse_problem_shape(std::int64_t rows, std::int64_t cols, std::int64_t entries,
                                  int k, int nprow, int npcol, int block_size, SparseMethod fit,
                                  std::int64_t held = 0);

/// The block size a fit uses for an n x n decomposition (`order` = n) when
/// `requested` is asked: min(requested, order), at least 1. A block larger
/// than the matrix gives the same layout as one of the matrix's size (one
/// block on process (0, 0)), but ScaLAPACK's workspaces grow with NB^2 and
/// NB n, so every matrix of the fit uses this size instead.
int effective_block_size(int requested, std::int64_t order);

/// Estimated peak bytes of the busiest rank (process (0, 0) holds the largest
/// blocks), by item, from ScaLAPACK's documented workspace formulas, with the
/// effective block size. Sizes are computed in double: no shape overflows.
struct MemoryPlan {
  std::vector<std::pair<std::string, double>> items;  ///< what, bytes
  std::vector<std::string> notes;  ///< e.g. the block size that is used instead
  double total() const;
  /// One line per item and the total, in human units (the total also in
  /// bytes, the number the guard compares), then the notes.
  std::string describe() const;
};

MemoryPlan plan_memory(const ProblemShape& shape);

/// Entries of the n x n matrix that the busiest rank, process (0, 0), holds:
/// its blocks on and below the block diagonal with lower storage (and, for a
/// matrix-free shape, those it recomputes in every product), else its whole
/// local block. The memory plan and the time estimate count with it.
double busiest_rank_entries(const ProblemShape& shape);

/// Empty if ScaLAPACK (32-bit integers) can run `shape` at all; otherwise why
/// not: a matrix order beyond 2^31 - 1, pdsyevd's workspace length beyond it,
/// or a block size whose back-transformation workspace kembed cannot give.
std::string plan_limits(const ProblemShape& shape);

/// "12.8 GB" style.
std::string human_bytes(double bytes);

/// Parses "2G", "512M", "1.5T" or a plain byte count; throws Error otherwise.
double parse_bytes(const std::string& text);

/// The estimate for the busiest rank and the limit it was checked against.
struct MemoryCheck {
  double estimate = 0, limit = 0;
};

/// Empty if `shape` fits in `limit` bytes per rank with `ranks` ranks and
/// within plan_limits; otherwise the limit it breaks, or how much is needed and available, how many
/// ranks (the next power-of-two multiple) or which solver would fit, and the plan.
std::string memory_shortfall(const ProblemShape& shape, int ranks, double limit);
/// The same with `plan` = plan_memory(shape), made once by the caller.
std::string memory_shortfall(const ProblemShape& shape, const MemoryPlan& plan, int ranks,
                             double limit);

/// For a fit whose busiest rank needs `bytes_for(P)` bytes on P ranks and no
/// ScaLAPACK matrix (the approximate tier): empty if `ranks` ranks fit in
/// `limit` bytes per rank; otherwise how much is needed and available, and
/// how many ranks (the next power-of-two multiple, up to 2^20) would fit or
/// that none would (what is replicated or gathered on rank 0 does not shrink).
std::string streamed_shortfall(const std::function<double(int)>& bytes_for, int ranks,
                               double limit);

/// Collective: an agreed error, before anything large is allocated, if
/// `shape` needs more than `limit` bytes per rank (0: the node's available
/// memory divided among its ranks). The message says how much is needed,
/// how much there is, how many ranks would fit and whether krylov would.
MemoryCheck check_memory(const ProblemShape& shape, double limit, const Comm& comm);
/// The same with `plan` = plan_memory(shape), made once at the start of the
/// fit (FitPlan::memory). @pre limit > 0
MemoryCheck check_memory(const ProblemShape& shape, const MemoryPlan& plan, double limit,
                         const Comm& comm);

/// Collective: memory this rank may use: the node's MemAvailable divided by
/// the ranks sharing the node (MPI_Comm_split_type SHARED).
double available_memory_per_rank(const Comm& world);

}  // namespace kembed::spectral
