#pragma once
/// @file Block-local building blocks of kernel and distance matrices: the
/// Gram product of two row panels and elementwise maps over a rank's block.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "kembed/kernel/vector_exp.hpp"
#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::kernel {

/// Squared Euclidean norm of each of the `rows` rows of a row-major panel.
std::vector<double> row_norms_squared(const std::vector<double>& panel, int rows, int d);

/// max_t |x_t| of each of the `rows` rows of a row-major panel.
std::vector<double> row_max_magnitudes(const std::vector<double>& panel, int rows, int d);

/// out's local block <- X_rows X_cols^T: one dgemm on the row-major panels
/// (which are column-major d x m matrices). No communication.
void local_gram(const std::vector<double>& row_panel, const std::vector<double>& col_panel, int d,
                DistMatrix& out);

/// A rectangle of a rank's local block: local rows [row, row + rows) of local
/// columns [col, col + cols).
struct LocalTile {
  int row, rows, col, cols;
};

/// Rows and columns of the tiles local_gram_tiled visits: 1024 x 512 doubles
/// (4 MB) stay in the L2 and L3 caches between the tile's dgemm and the pass
/// that maps it. Measured on the 2-core development VM, two processes at once,
/// a 16000 x 8000 rbf block: 0.58 s in these tiles against 0.89 s as one
/// dgemm and then one map pass over the block. The row count is a multiple
/// of 4, so sums in 4 interleaved partials carry from tile to tile.
constexpr int kGramTileRows = 1024;
constexpr int kGramTileCols = 512;

/// The tile of out's local block <- its part of X_rows X_cols^T: one dgemm.
void gram_tile(const std::vector<double>& row_panel, const std::vector<double>& col_panel, int d,
               DistMatrix& out, const LocalTile& tile);

/// out's local block <- X_rows X_cols^T tile by tile, calling visit(tile)
/// right after each tile is computed, while it is still in cache. The tiles
/// come in slabs of kGramTileCols columns, left to right, each slab top to
/// bottom; so each entry's row sees the columns in increasing order. With
/// lower-block storage only the stored entries are computed: each tile is
/// cut at the column blocks, and each piece starts at its block's first
/// stored row (pieces of one slab still come top to bottom).
template <class Visit>
void local_gram_tiled(const std::vector<double>& row_panel, const std::vector<double>& col_panel,
                      int d, DistMatrix& out, Visit&& visit) {
  const int m = out.local_rows(), n = out.local_cols(), nb = out.col_dist().block_size();
  const bool lower = out.storage() == Storage::lower_blocks;
  for (int col = 0; col < n; col += kGramTileCols)
    for (int row = 0; row < m; row += kGramTileRows) {
      const LocalTile tile{row, std::min(kGramTileRows, m - row), col,
                           std::min(kGramTileCols, n - col)};
      if (!lower) {
        gram_tile(row_panel, col_panel, d, out, tile);
        visit(tile);
        continue;
      }
      for (int c = tile.col; c < tile.col + tile.cols;) {
        const int end = std::min({tile.col + tile.cols, (c / nb + 1) * nb});
        const int first = std::max(tile.row, out.stored_from(c));
        const LocalTile piece{first, tile.row + tile.rows - first, c, end - c};
        if (piece.rows > 0) {
          gram_tile(row_panel, col_panel, d, out, piece);
          visit(piece);
        }
        c = end;
      }
    }
}

/// out(li, lj) <- f(g, li, lj) with g = x_li . y_lj: the Gram product and the
/// map of map_local in one pass, tile by tile.
template <class F>
void local_gram_map(const std::vector<double>& row_panel, const std::vector<double>& col_panel,
                    int d, DistMatrix& out, F&& f) {
  local_gram_tiled(row_panel, col_panel, d, out, [&](const LocalTile& tile) {
    for (int lj = tile.col; lj < tile.col + tile.cols; ++lj) {
      double* column = out.column(lj);
      for (int li = tile.row; li < tile.row + tile.rows; ++li) column[li] = f(column[li], li, lj);
    }
  });
}

/// out's local block <- the L1 distances ||x_i - y_j||_1 between the rows of
/// the two row-major panels. No communication. Each sum runs over t = 0..d-1
/// in order, as the pair-by-pair loop does, but many rows at a time.
void local_l1_distances(const std::vector<double>& row_panel, const std::vector<double>& col_panel,
                        int d, DistMatrix& out);

/// out(li, lj) <- f(li, lj) for the entries whose local row is in `rows`
/// or whose local column is in `cols` (each entry once): the pairs that need
/// a slower, exact evaluation after the fast path filled the block.
template <class F>
void refill_pairs(DistMatrix& out, const std::vector<int>& rows, const std::vector<int>& cols,
                  F&& f) {
  if (rows.empty() && cols.empty()) return;
  std::vector<char> whole_column(out.local_cols(), 0);
  for (int lj : cols) whole_column[lj] = 1;
  for (int lj = 0; lj < out.local_cols(); ++lj) {
    const int first = out.stored_from(lj);  // lower-block storage: nothing above
    if (whole_column[lj]) {
      for (int li = first; li < out.local_rows(); ++li) out.local(li, lj) = f(li, lj);
    } else {
      for (int li : rows)
        if (li >= first) out.local(li, lj) = f(li, lj);
    }
  }
}

/// out(li, lj) <- f(out(li, lj), li, lj) over this rank's stored entries.
template <class F>
void map_local(DistMatrix& out, F&& f) {
  for (int lj = 0; lj < out.local_cols(); ++lj) {
    double* column = out.column(lj);
    for (int li = out.stored_from(lj); li < out.local_rows(); ++li)
      column[li] = f(column[li], li, lj);
  }
}

/// out(li, lj) <- exp(f(out(li, lj), li, lj)) over this rank's stored
/// entries: f one column at a time, then exp_in_place on that column while it
/// is still in cache.
template <class F>
void map_local_exp(DistMatrix& out, F&& f) {
  const int m = out.local_rows();
  for (int lj = 0; lj < out.local_cols(); ++lj) {
    double* column = out.column(lj);
    const int from = out.stored_from(lj);
    for (int li = from; li < m; ++li) column[li] = f(column[li], li, lj);
    exp_in_place(column + from, std::size_t(m - from));
  }
}

}  // namespace kembed::kernel
