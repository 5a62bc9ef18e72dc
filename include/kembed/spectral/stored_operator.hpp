#pragma once
/// @file The stored block-cyclic matrix (double or single precision, full or
/// lower-block storage) as a SymmetricOperator for the Krylov solver.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/linalg/block_cyclic.hpp"
#include "kembed/linalg/block_product.hpp"
#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/spectral/krylov.hpp"
#include "kembed/spectral/symmetric_operator.hpp"

namespace kembed::spectral {

/// A = the symmetric n x n matrix `a` as stored: its blocks of whole rows are
/// laid out as BlockProduct's line layout (a.row_dist()'s block size over all
/// ranks of a.grid()). The product is `product`:
/// - local: BlockProduct, one local product per rank and one reduce-scatter;
///   it reads full and lower-block storage, double and single precision
///   (then on X rounded to float, so exact_products() is false);
/// - pdgemm: ScaLAPACK's product, X copied to and A X back from the 2-D grid,
///   the reference (double precision and full storage only).
/// Construction is collective over a.grid(). @pre a square with square blocks,
/// symmetric (only its stored blocks are read); it stays alive and unchanged
/// while the operator is used.
class StoredOperator final : public SymmetricOperator {
 public:
  /// @throws Error (on every rank) for pdgemm with lower-block storage.
  StoredOperator(const DistMatrix& a, KrylovProduct product);
  /// @throws Error (on every rank) for pdgemm.
  StoredOperator(const SingleMatrix& a, KrylovProduct product);

  std::int64_t order() const override { return n_; }
  const BlacsGrid& grid() const override { return *grid_; }
  int block_size() const override { return nb_; }
  const BlockCyclic1D& rows() const override { return line_; }
  void apply(const double* x, int ldx, int width, double* y, int ldy) override;
  bool exact_products() const override { return single_ == nullptr; }
  OperatorCost cost(int width) const override;

  /// Bytes of the working blocks BlockProduct keeps after a product of width
  /// `width` (the memory plan's "block product buffers"), on a rank with
  /// `line_rows` rows of the blocks and a `local_rows` x `local_cols` piece of
  /// the n x n matrix. In the matrix's precision: X packed, X at A's local
  /// columns (gathered along the process column) and its partial product for
  /// A's local rows; with lower-block storage all of X, and X and a partial
  /// product for both A's rows and its columns. In double, the
  /// reduce-scatter's partial sums and result. Sizes in double, so that no
  /// shape overflows (the memory plan passes process (0, 0)'s counts).
  static double product_work_bytes(double n, double line_rows, double local_rows, double local_cols,
                                   bool lower_blocks, bool single_precision, double width);

 private:
  template <class T>
  StoredOperator(const BasicDistMatrix<T>& a, const DistMatrix* ad, const SingleMatrix* af,
                 KrylovProduct product);
  // y = A x through pdgemm: x and y in the line layout, copied through the
  // line grid's matrices to and from the 2-D grid.
  void apply_pdgemm(const double* x, int ldx, int width, double* y, int ldy);

  const DistMatrix* double_;    // the matrix, or
  const SingleMatrix* single_;  // its single-precision storage
  const BlacsGrid* grid_;
  std::int64_t n_;
  int nb_;
  BlockCyclic1D line_;
  KrylovProduct product_;
  std::optional<BlockProduct> block_product_;  // local
  // pdgemm: the (ranks x 1) grid of the line layout, X and A X in it, and
  // X and A X on the 2-D grid, all as wide as the widest product so far.
  std::optional<BlacsGrid> line_grid_;
  std::optional<DistMatrix> line_x_, line_y_, x_, p_;
};

}  // namespace kembed::spectral
