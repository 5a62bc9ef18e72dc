#pragma once
/// @file An aggregation multigrid for the Laplacian L = D - W of a connected
/// graph held as distributed sparse rows: the preconditioner of the
/// eigensolver of Laplacian eigenmaps' kNN graph, whose wanted eigenvalues
/// sit so close to 0 that a polynomial method needs about n^0.5 products.
///
/// Each level is the graph of the level below with its vertices merged into
/// aggregates of neighbours on the same rank (so restriction and
/// prolongation never communicate): a coarse edge weight is the sum of the
/// fine weights between two aggregates, edges inside an aggregate vanish,
/// and the coarse Laplacian is exactly P^T L P for the 0/1 aggregation P.
/// A small level (or one whose vertices have too few neighbours on their own
/// rank to merge) is copied onto every rank and coarsened further there.
/// Levels shrink until at most `coarsest` vertices remain; that Laplacian is
/// inverted once, densely, on every rank. One application is a symmetric
/// V-cycle (damped Jacobi before and after each coarse correction), so the
/// preconditioner is symmetric and positive semi-definite.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kembed/graph/row_exchange.hpp"
#include "kembed/graph/sparse_rows.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::graph {

struct MultigridSettings {
  /// Vertices (all ranks) at or below which a level is solved densely.
  std::int64_t coarsest = 1500;
  /// Vertices at or below which a distributed level is copied onto every
  /// rank and coarsened there; and the larger size up to which that is done
  /// when the distributed coarsening stalls (too few neighbours on each rank).
  std::int64_t gather = 20000, gather_stalled = 500000;
  int max_levels = 16;
  int smoothing = 1;             ///< Jacobi sweeps before and after each coarse correction
  double jacobi_weight = 2.0 / 3;
  /// The coarse correction is multiplied by this (above 1 makes up for the
  /// energy that piecewise-constant interpolation loses).
  double correction_weight = 1.5;
};

/// The largest coarsest level factored densely when coarsening stalls above
/// MultigridSettings::coarsest (its inverse is held on every rank).
inline constexpr std::int64_t kDenseLimit = 2000;

class GraphMultigrid {
 public:
  /// Collective over `comm` (the ranks of w.rows): the hierarchy of the
  /// graph W (symmetric, zero diagonal, positive weights, connected; every
  /// rank passes its rows). `w` is copied.
  GraphMultigrid(const SparseRows& w, const Comm& comm, const MultigridSettings& settings = {});
  ~GraphMultigrid();
  GraphMultigrid(const GraphMultigrid&) = delete;
  GraphMultigrid& operator=(const GraphMultigrid&) = delete;

  /// Whether the hierarchy was built (agreed on every rank): false when the
  /// coarsening stalled above the limits or the coarsest Laplacian was not
  /// definite; solve() must not be called then.
  bool usable() const { return usable_; }

  /// Frees the hierarchy (usable() is false afterwards): for a caller that
  /// turns to another solver.
  void release();

  /// Collective: z ~ L^+ b by one V-cycle, for `width` right-hand sides of
  /// zero sum (this rank's rows of w.rows, column-major).
  void solve(const double* b, int ldb, int width, double* z, int ldz);

  /// Collective: y = L x (the fine level's Laplacian).
  void laplacian(const double* x, int ldx, int width, double* y, int ldy);

  /// The degrees of this rank's rows (the fine level's row sums of W).
  const std::vector<double>& degrees() const;
  /// The vertices of each level (all ranks; the coarsest last), phantom
  /// padding left out.
  const std::vector<std::int64_t>& level_sizes() const { return sizes_; }
  /// Bytes held on this rank (the levels' rows, plans and the coarsest factor).
  std::size_t held_bytes() const;
  /// Bytes of the work vectors of one solve of width `width` on this rank.
  std::size_t work_bytes(int width) const;

  struct Level;

 private:
  void cycle(std::size_t l, int width);
  const Comm& comm_;
  Comm self_;  // the replicated levels' one-rank communicator
  MultigridSettings settings_;
  bool usable_ = true;
  std::vector<std::unique_ptr<Level>> levels_;
  std::vector<std::int64_t> sizes_;
  // The inverse of the coarsest Laplacian plus a rank-one term (every rank).
  std::vector<double> factor_;
};

/// Bytes per rank of the hierarchy of an n-vertex graph with `entries`
/// stored entries on this rank's `local_rows` rows, whose products gather
/// `fetched` rows, for V-cycles of `width` columns (the memory plan): the
/// finest level (a copy of the rows: buffer index and weight, 12 bytes an
/// entry; degrees, aggregates, three work blocks and the gathered rows),
/// half that again for the coarser distributed levels (measured on the
/// swiss roll at n = 10^6, K = 10: the next level has 1/17 of the
/// vertices), the levels copied onto every rank (at most max(gather,
/// coarsest) vertices of up to twice the rows' mean entries, twice over)
/// and the coarsest inverse with its work copy while it is built.
double multigrid_planned_bytes(double n, double local_rows, double entries, double fetched,
                               double width, const MultigridSettings& settings);

}  // namespace kembed::graph
