#pragma once
/// @file What the block Krylov solver multiplies by: a symmetric n x n
/// operator applied to blocks of whole rows. The solver sees nothing else
/// of the matrix, so one solver serves the stored block-cyclic matrix (double
/// or single precision, full or lower-block storage), and operators that are
/// never stored: a kernel recomputed tile by tile, a sparse graph, a sparse
/// data matrix with implicit centering.
#include <cstddef>
#include <cstdint>

#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/linalg/block_cyclic.hpp"

namespace kembed::spectral {

/// What one product with an n x w block costs this rank, for memory plans
/// and time estimates.
struct OperatorCost {
  std::size_t held_bytes = 0;  ///< held while the operator lives (matrix, graph, points)
  std::size_t work_bytes = 0;  ///< working blocks of one product of width w
  double flops = 0;            ///< floating-point operations of one product of width w
};

/// A symmetric n x n operator A. Blocks X and Y of n rows are held as whole
/// rows: rank r of grid().comm() holds the rows of the 1-D block-cyclic
/// distribution of n in blocks of block_size() over all ranks (rows()), the
/// layout of a DistMatrix of n rows on a (ranks x 1) grid with that row block.
/// The eigenvectors the solver returns are DistMatrix on grid() with square
/// blocks of block_size().
class SymmetricOperator {
 public:
  virtual ~SymmetricOperator() = default;
  SymmetricOperator() = default;
  SymmetricOperator(const SymmetricOperator&) = delete;
  SymmetricOperator& operator=(const SymmetricOperator&) = delete;

  /// The order n.
  virtual std::int64_t order() const = 0;
  /// The grid every apply is collective over, and that results live on.
  virtual const BlacsGrid& grid() const = 0;
  /// Row block size of the blocks' layout (and of the returned vectors).
  virtual int block_size() const = 0;
  /// This rank's rows of X and Y.
  virtual const BlockCyclic1D& rows() const = 0;

  /// Collective: y[:, 0:width] = A x[:, 0:width]; x and y are this rank's
  /// rows().local_size() x width column-major pieces with leading dimensions
  /// ldx, ldy >= max(1, rows().local_size()), not overlapping.
  virtual void apply(const double* x, int ldx, int width, double* y, int ldy) = 0;

  /// Whether a product is A x to double's round-off. False when the
  /// product rounds more (single-precision storage): the solver then confirms
  /// a convergence that its Krylov relation reports by an explicit product,
  /// and stops at the precision floor (KrylovResult::at_precision_floor).
  virtual bool exact_products() const { return true; }

  /// Cost of one product of width `width` on this rank.
  virtual OperatorCost cost(int width) const = 0;
};

}  // namespace kembed::spectral
