#include "kembed/spectral/kernel_operator.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "kembed/core/error.hpp"
#include "kembed/spectral/stored_operator.hpp"

namespace kembed::spectral {

namespace {

// Entries on and below the block diagonal that this rank's blocks hold.
double lower_block_entries(const BlacsGrid& grid, const BlockCyclic1D& rows,
                           const BlockCyclic1D& cols) {
  const int nb = rows.block_size();
  double entries = 0;
  for (int c = 0; c < cols.local_size(); c += nb) {
    const std::int64_t block = cols.to_global(c) / nb;
    const std::int64_t p = grid.myrow(), procs = grid.nprow();
    const std::int64_t above = block > p ? (block - p + procs - 1) / procs : 0;
    const double from = std::min<double>(double(above) * nb, rows.local_size());
    entries += (rows.local_size() - from) * std::min(nb, cols.local_size() - c);
  }
  return entries;
}

}  // namespace

PointMatrixOperator::PointMatrixOperator(const BlacsGrid& grid, std::int64_t n, int nb,
                                         std::vector<double> row_panel,
                                         std::vector<double> col_panel, int d,
                                         kernel::TileEntries entries, bool single_precision)
    : grid_(grid),
      n_(n),
      nb_(nb),
      single_(single_precision),
      line_(n, nb, grid.comm().rank(), grid.comm().size()),
      row_dist_(n, nb, grid.myrow(), grid.nprow()),
      col_dist_(n, nb, grid.mycol(), grid.npcol()),
      tiles_(std::move(row_panel), std::move(col_panel), d, std::move(entries)),
      product_(
          grid, n, nb,
          [this](const BlockProduct::Tile& t) {
            const DistMatrix& tile = tiles_.tile(t.row, t.rows, t.col, t.cols);
            return std::make_pair(static_cast<const double*>(tile.data()), tile.ld());
          },
          single_precision) {
  stored_entries_ = lower_block_entries(grid, row_dist_, col_dist_);
}

void PointMatrixOperator::apply(const double* x, int ldx, int width, double* y, int ldy) {
  product_.apply(x, ldx, width, y, ldy);
  ++passes_;
}

OperatorCost PointMatrixOperator::planned_cost(double n, double line_rows, double local_rows,
                                               double local_cols, double stored, double d,
                                               double nb, bool single_precision, double width) {
  constexpr double kDouble = 8;
  const double chunk = std::min<double>(BlockProduct::kChunkRows, local_rows);
  OperatorCost c;
  c.held_bytes = static_cast<std::size_t>((local_rows + local_cols) * d * kDouble);
  c.work_bytes = static_cast<std::size_t>(
      kernel::PointTiles::tile_bytes(chunk, nb, d) + (single_precision ? chunk * nb * 4 : 0) +
      StoredOperator::product_work_bytes(n, line_rows, local_rows, local_cols, true,
                                         single_precision, width));
  // The entries below the diagonal blocks serve twice; counted so for all.
  c.flops = stored * (2 * d + 2 * 2 * width);
  return c;
}

OperatorCost PointMatrixOperator::cost(int width) const {
  return planned_cost(double(n_), line_.local_size(), row_dist_.local_size(),
                      col_dist_.local_size(), stored_entries_, tiles_.dimension(), nb_, single_,
                      width);
}

PointMatrixSums PointMatrixOperator::sums() {
  const int lr = row_dist_.local_size(), lc = col_dist_.local_size();
  std::vector<double> row_part(lr, 0.0), col_part(lc, 0.0);
  double trace = 0;
  std::string error;
  try {
    product_.visit_tiles([&](const BlockProduct::Tile& t, const double* a, int ld) {
      for (int j = 0; j < t.cols; ++j) {
        const int lj = t.col + j;
        const double* column = a + std::size_t(j) * ld;
        double below = 0;
        for (int i = 0; i < t.rows; ++i) {
          row_part[t.row + i] += column[i];
          if (t.row + i >= t.below) below += column[i];
        }
        col_part[lj] += below;
        // The diagonal lies in the diagonal block, rows [row, below).
        const std::int64_t g = col_dist_.to_global(lj);
        for (int i = 0; i < t.below - t.row; ++i)
          if (row_dist_.to_global(t.row + i) == g) trace += column[i];
      }
    });
  } catch (const Error& e) {
    error = e.what();
  }
  ++passes_;
  agree(grid_.comm(), error);
  PointMatrixSums s;
  s.row_sums.assign(n_, 0.0);
  // Row i: its entries in the stored blocks, and column i's below them.
  for (int li = 0; li < lr; ++li) s.row_sums[row_dist_.to_global(li)] += row_part[li];
  for (int lj = 0; lj < lc; ++lj) s.row_sums[col_dist_.to_global(lj)] += col_part[lj];
  grid_.comm().sum_in_place(s.row_sums);
  for (double r : s.row_sums) s.total += r;
  s.trace = grid_.comm().sum(trace);
  agree(grid_.comm(), std::isfinite(s.total)
                          ? ""
                          : "the row sums of the " + std::to_string(n_) + " x " +
                                std::to_string(n_) +
                                " matrix are not finite (entries too large to sum; rescale the "
                                "data)");
  return s;
}

double PointMatrixOperator::centered_frobenius_norm(const std::vector<double>& row_means,
                                                    double grand_mean) {
  std::vector<double> row_mean(row_dist_.local_size()), shift(col_dist_.local_size());
  for (int li = 0; li < row_dist_.local_size(); ++li)
    row_mean[li] = row_means[row_dist_.to_global(li)];
  for (int lj = 0; lj < col_dist_.local_size(); ++lj)
    shift[lj] = grand_mean - row_means[col_dist_.to_global(lj)];
  double sum = 0;
  product_.visit_tiles([&](const BlockProduct::Tile& t, const double* a, int ld) {
    for (int j = 0; j < t.cols; ++j) {
      const double* column = a + std::size_t(j) * ld;
      const double s = shift[t.col + j];
      double diagonal = 0, below = 0;
      // Centered as centering.cpp centers: a_ij + (g - m_j) - m_i.
      for (int i = 0; i < t.below - t.row; ++i) {
        const double v = column[i] + s - row_mean[t.row + i];
        diagonal += v * v;
      }
      for (int i = t.below - t.row; i < t.rows; ++i) {
        const double v = column[i] + s - row_mean[t.row + i];
        below += v * v;
      }
      // An entry below the diagonal blocks stands for itself and its mirror.
      sum += diagonal + 2 * below;
    }
  });
  ++passes_;
  return std::sqrt(grid_.comm().sum(sum));
}

}  // namespace kembed::spectral
