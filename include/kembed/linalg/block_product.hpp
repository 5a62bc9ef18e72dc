#pragma once
/// @file The product of a square block-cyclic matrix with a tall, thin
/// block held as whole rows, as one local product per rank.
#include <cstdint>
#include <vector>

#include "kembed/linalg/block_cyclic.hpp"
#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed {

/// Y = A X for a square n x n matrix A in block-cyclic layout and n x w
/// blocks X, Y held as whole rows: rank r of A's grid holds the rows of the
/// 1-D block-cyclic distribution of n in A's row block size over all ranks
/// (line_rows()), which is the layout of a DistMatrix on a (ranks x 1) grid
/// over the same communicator with that row block size.
///
/// Instead of pdgemm's sequence of rank-NB updates, every rank multiplies its
/// whole local block of A once by the rows of X matching its local columns
/// (gathered along its process column, where the line layout keeps them),
/// and the partial products are summed by one reduce-scatter that leaves
/// each rank its own rows of Y. A's local block serves as stored (no
/// transposed copy, no repacking by kembed; symmetry is not needed).
/// Communication per product: the process column's rows of X (n w / Q
/// values) gathered, n w values reduce-scattered.
/// The local product is narrow_product, which streams A as stored. With
/// single-precision storage of A it runs on X rounded to float, summed in
/// float over the local columns; X and Y stay
/// double (the solver's basis and Rayleigh-Ritz work in double).
///
/// With lower-block storage (Storage::lower_blocks) each stored block A_IJ
/// below the diagonal serves twice in the same pass: A_IJ X_J for rows I and
/// A_IJ^T X_I for rows J, a column block's rows taken in chunks that stay in
/// cache between the two. Every rank then needs all of X (gathered from all
/// ranks: n w values, the size of the reduce-scatter), and its partial
/// products cover its rows and its columns of A.
/// Move-only (owns two sub-communicators).
class BlockProduct {
 public:
  /// Collective over a's grid (splits its communicator).
  /// @pre a square with square blocks (mb == nb); a stays alive and unchanged
  ///      in shape while this object is used.
  explicit BlockProduct(const DistMatrix& a);
  explicit BlockProduct(const SingleMatrix& a);

  /// Rows of X and Y this rank holds in the line layout.
  const BlockCyclic1D& line_dist() const { return line_; }
  int line_rows() const { return line_.local_size(); }

  /// Collective: y[:, 0:width] = A x[:, 0:width], where x and y are this
  /// rank's line_rows() x width column-major pieces with leading dimensions
  /// ldx, ldy >= max(1, line_rows()). x and y must not overlap.
  void apply(const double* x, int ldx, int width, double* y, int ldy);

 private:
  // Local rows [from, below) of a stored column block hold its diagonal
  // block, [below, local rows) the blocks strictly below it.
  struct StoredBlock {
    int col, cols, from, below;
  };
  template <class T>
  BlockProduct(const BasicDistMatrix<T>& a, const double* ad, const float* af);
  template <class T>
  void local_products(const T* a, int width, std::vector<T>& x_cols, std::vector<T>& x_rows,
                      std::vector<T>& y_rows, std::vector<T>& y_cols);
  void apply_lower(const double* x, int ldx, int width, double* y, int ldy);
  const Comm* comm_;
  std::int64_t n_;
  int local_rows_, local_cols_, lda_;
  const double* a_;        // A's local block, or
  const float* a_single_;  // its single-precision storage
  Comm column_comm_;       // the ranks of this process column, by process row
  BlockCyclic1D line_;
  std::vector<BlockCyclic1D> column_lines_;   // line layouts of the column's ranks
  std::vector<int> gathered_to_local_col_;    // gathered row -> local column of A
  std::vector<int> scatter_counts_;           // line rows of each rank
  std::vector<int> receiver_, receiver_row_;  // local row of A -> its rank and line row there
  std::vector<double> gathered_, packed_, product_, send_;
  std::vector<float> gathered_single_, product_single_;
  // Lower-block storage only:
  std::vector<StoredBlock> stored_;
  bool lower_ = false;
  std::vector<int> col_owner_, col_line_;  // local column of A -> its rank and line row there
  std::vector<std::int64_t> rank_base_;    // rows of X on the ranks before each rank
  std::vector<double> x_all_, x_cols_, x_rows_, y_rows_, y_cols_;
  std::vector<float> xf_cols_, xf_rows_, yf_rows_, yf_cols_;
};

}  // namespace kembed
