#pragma once
/// @file A kernel matrix K (or MDS's -1/2 D^(2)) of points as a
/// SymmetricOperator that is never stored (`--storage none`): every product
/// recomputes the blocks on and below the diagonal from the points, a chunk
/// at a time, and uses each for both of its products (BlockProduct with
/// recomputed blocks), then one reduce-scatter.
#include <cstdint>
#include <vector>

#include "kembed/kernel/point_tiles.hpp"
#include "kembed/linalg/block_product.hpp"
#include "kembed/spectral/symmetric_operator.hpp"

namespace kembed::spectral {

/// Row sums and trace of the uncentered matrix, from one recomputing pass.
struct PointMatrixSums {
  std::vector<double> row_sums;  ///< A 1, length n, on every rank
  double total = 0;              ///< 1^T A 1
  double trace = 0;              ///< trace(A)
};

/// A = the n x n matrix of `entries` over the points, laid out as a square
/// n x n DistMatrix on `grid` with square blocks of nb: `row_panel` holds
/// the points of this rank's local rows and `col_panel` those of its local
/// columns (distribute::read_panel's panels). Memory: the two panels, one
/// chunk (BlockProduct::kChunkRows x nb) and the product's n x w blocks;
/// never n x n. With `single_precision` the chunks are rounded to float and
/// multiplied by X rounded to float (exact_products() false), as the stored
/// single-precision matrix is.
class PointMatrixOperator final : public SymmetricOperator {
 public:
  /// Collective over grid.comm().
  PointMatrixOperator(const BlacsGrid& grid, std::int64_t n, int nb,
                      std::vector<double> row_panel, std::vector<double> col_panel, int d,
                      kernel::TileEntries entries, bool single_precision);

  std::int64_t order() const override { return n_; }
  const BlacsGrid& grid() const override { return grid_; }
  int block_size() const override { return nb_; }
  const BlockCyclic1D& rows() const override { return line_; }
  /// Collective: y = A x, recomputing every block this rank holds once.
  void apply(const double* x, int ldx, int width, double* y, int ldy) override;
  bool exact_products() const override { return !single_; }
  OperatorCost cost(int width) const override;

  /// Collective: A 1, 1^T A 1 and trace(A) in one recomputing pass (no
  /// product). A tile that cannot be computed, or sums that overflow, are an
  /// agreed Error.
  PointMatrixSums sums();
  /// Collective: ||A - 1 m^T - m 1^T + g 1 1^T||_F (the centered matrix's
  /// Frobenius norm) in one recomputing pass, with m the row means (length
  /// n, every rank) and g the grand mean: each entry centered as the stored
  /// path centers it.
  double centered_frobenius_norm(const std::vector<double>& row_means, double grand_mean);

  /// Recomputing passes so far: products and the passes of sums and norms.
  long long passes() const { return passes_; }

  /// The cost of one product of width `width` on a rank with `local_rows` x
  /// `local_cols` of the layout and `line_rows` rows of the blocks, `stored`
  /// entries on and below the block diagonal, points of dimension d: held =
  /// the panels; work = a chunk and its points, and the product's blocks
  /// (lower-block storage's, StoredOperator::product_work_bytes); flops = the
  /// Gram products (2 d per entry) and both products (2 width per use). The
  /// one formula of the memory plan and of cost().
  static OperatorCost planned_cost(double n, double line_rows, double local_rows,
                                   double local_cols, double stored, double d, double nb,
                                   bool single_precision, double width);

 private:
  const BlacsGrid& grid_;
  std::int64_t n_;
  int nb_;
  bool single_;
  BlockCyclic1D line_, row_dist_, col_dist_;
  kernel::PointTiles tiles_;
  BlockProduct product_;
  double stored_entries_ = 0;
  long long passes_ = 0;
};

}  // namespace kembed::spectral
