#include "kembed/kernel/point_tiles.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "kembed/core/error.hpp"
#include "kembed/kernel/assemble.hpp"

namespace kembed::kernel {

PointTiles::PointTiles(std::vector<double> row_panel, std::vector<double> col_panel, int d,
                       TileEntries entries)
    : row_panel_(std::move(row_panel)),
      col_panel_(std::move(col_panel)),
      d_(d),
      entries_(std::move(entries)),
      self_(Comm::self(), 1, 1) {}

const DistMatrix& PointTiles::tile(int row, int rows, int col, int cols) {
  // Tiles mostly share one shape (a chunk of rows by a block of columns):
  // the buffer is kept while they do.
  if (!tile_ || tile_->rows() != rows || tile_->cols() != cols)
    tile_.emplace(DistMatrix::uninitialized(self_, rows, cols, std::max(rows, 1),
                                            std::max(cols, 1)));
  const std::size_t d = static_cast<std::size_t>(d_);
  rows_.assign(row_panel_.begin() + std::ptrdiff_t(row * d),
               row_panel_.begin() + std::ptrdiff_t((row + rows) * d));
  cols_.assign(col_panel_.begin() + std::ptrdiff_t(col * d),
               col_panel_.begin() + std::ptrdiff_t((col + cols) * d));
  try {
    if (const Kernel* kernel = std::get_if<Kernel>(&entries_)) {
      assemble_kernel(*kernel, rows_, cols_, d_, *tile_);
    } else {
      assemble_distances(std::get<Metric>(entries_), rows_, cols_, d_, *tile_);
      square_distances(*tile_, -0.5);
    }
  } catch (const Error& e) {
    // The entry the message names is the tile's (1-based within it).
    throw Error("in the tile of local rows " + std::to_string(row + 1) + "-" +
                std::to_string(row + rows) + " and local columns " + std::to_string(col + 1) +
                "-" + std::to_string(col + cols) + ": " + e.what());
  }
  return *tile_;
}

std::size_t PointTiles::panel_bytes() const {
  return (row_panel_.capacity() + col_panel_.capacity()) * sizeof(double);
}

double PointTiles::tile_bytes(double rows, double cols, double d) {
  return (rows * cols + (rows + cols) * d) * sizeof(double);
}

}  // namespace kembed::kernel
