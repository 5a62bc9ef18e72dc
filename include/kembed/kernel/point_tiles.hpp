#pragma once
/// @file Tiles of a kernel matrix K (or of -1/2 D^(2), MDS's matrix before
/// centering) computed from the points whenever they are needed, by the
/// same code that assembles the stored matrix: the matrix-free operators'
/// source of entries.
#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "kembed/kernel/distances.hpp"
#include "kembed/kernel/kernel.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::kernel {

/// What a tile holds: k(x_i, x_j) for a kernel (gamma resolved, not
/// precomputed), or -1/2 d(x_i, x_j)^2 for a metric (the entries of
/// -1/2 D^(2), rounded as MDS's stored path rounds them: square_distances).
using TileEntries = std::variant<Kernel, Metric>;

/// A rank's tiles of an n x n matrix of points: `row_panel` holds the points
/// of its local rows and `col_panel` those of its local columns of a
/// block-cyclic layout (distribute::read_panel's panels, row-major, d
/// columns). tile() fills local rows [row, row + rows) x local columns
/// [col, col + cols) with assemble_kernel (or assemble_distances and
/// square_distances) on a matrix of the tile's shape on this rank's own
/// 1 x 1 grid, so every entry has the stored path's formula and fallbacks.
/// No communication: a tile that cannot be computed (an entry that
/// overflows) throws Error on this rank only, naming the tile's rows and
/// columns; the caller agrees it across ranks. Move-only (owns its grid).
class PointTiles {
 public:
  /// Collective over MPI_COMM_SELF only (creates the 1 x 1 grid).
  PointTiles(std::vector<double> row_panel, std::vector<double> col_panel, int d,
             TileEntries entries);

  /// The tile, column-major in the returned matrix's local block (ld()).
  /// Valid until the next call. @pre within the panels
  const DistMatrix& tile(int row, int rows, int col, int cols);

  int dimension() const { return d_; }
  /// Bytes held: the two panels (the tile buffer is tile_bytes).
  std::size_t panel_bytes() const;
  /// Bytes of the tile buffer and of the per-tile copies of the points.
  static double tile_bytes(double rows, double cols, double d);

 private:
  std::vector<double> row_panel_, col_panel_;
  int d_;
  TileEntries entries_;
  BlacsGrid self_;
  std::optional<DistMatrix> tile_;
  std::vector<double> rows_, cols_;  // the tile's points
};

}  // namespace kembed::kernel
