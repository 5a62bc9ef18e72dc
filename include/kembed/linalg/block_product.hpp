#pragma once
/// @file The product of a square block-cyclic matrix with a tall, thin
/// block held as whole rows, as one local product per rank.
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
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
///
/// With recomputed blocks (the matrix-free operators: a kernel or distance
/// matrix computed from points) nothing is stored: the same lower-block
/// traversal asks a RecomputedBlock source for each chunk of rows of a
/// column block on or below the diagonal, computed in double into the
/// source's own cache-sized buffer, and uses it for both of its products
/// before asking for the next one (rounded to float first in single
/// precision, as stored single-precision blocks are).
/// Move-only (with full storage, owns its process column's communicator).
class BlockProduct {
 public:
  /// A chunk of a local column block on or below the block diagonal: local
  /// rows [row, row + rows) of local columns [col, col + cols) of the n x n
  /// matrix's block-cyclic layout; rows from `below` on (below >= row) lie
  /// strictly below the diagonal block, the others in it.
  struct Tile {
    int row, rows, col, cols, below;
  };
  /// Computes a tile and returns its entries: column-major, entry (i, j) of
  /// the tile at first[i + j ld]; valid until the next call.
  using RecomputedBlock = std::function<std::pair<const double*, int>(const Tile&)>;
  /// Rows of a column block computed at a time by a RecomputedBlock source
  /// (and read from storage at a time by the lower-block product): both
  /// products read them, the second from cache (2048 x 64 doubles, 1 MB).
  static constexpr int kChunkRows = 2048;

  /// Collective over grid.comm(): the product with the symmetric n x n
  /// matrix whose blocks on and below the diagonal `block` computes, in the
  /// layout of a square n x n DistMatrix on `grid` with square blocks of nb,
  /// in double or (single_precision) in float on X rounded to float.
  /// @pre the source gives a symmetric matrix's blocks (its diagonal blocks whole)
  BlockProduct(const BlacsGrid& grid, std::int64_t n, int nb, RecomputedBlock block,
               bool single_precision);

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

  /// Bytes of the working blocks held between products (the memory plan's
  /// "block product buffers"): after a product of width w, what every later
  /// one of width <= w reuses.
  std::size_t held_bytes() const;

  /// Recomputed blocks only: every tile a product computes, in the product's
  /// order, with its entries (in double), with no communication: for the
  /// sums and norms a matrix-free operator takes in passes of its own.
  void visit_tiles(const std::function<void(const Tile&, const double*, int)>& visit);

 private:
  // Local rows [from, below) of a stored column block hold its diagonal
  // block, [below, local rows) the blocks strictly below it; entry (li, col
  // + c) is at start + c ld + li of A's local buffer (packed or not).
  struct StoredBlock {
    int col, cols, from, below;
    std::size_t start;
    int ld;
  };
  // One precision's working blocks, each at most n x width: with
  // single-precision storage of A, X is rounded to float when packed, and
  // every block but the reduce-scatter's is float.
  template <class T>
  struct Buffers {
    std::vector<T> packed;          // this rank's line rows of X
    std::vector<T> gathered;        // X from every rank (lower-block storage)
    std::vector<T> x_cols, x_rows;  // X at this rank's local columns and rows of A
    std::vector<T> y_rows, y_cols;  // the partial products for those rows and columns
  };
  template <class T>
  BlockProduct(const BasicDistMatrix<T>& a, const double* ad, const float* af);
  template <class T>
  void apply_full(const T* a, Buffers<T>& buf, const double* x, int ldx, int width);
  template <class T, class Block>
  void apply_lower(Buffers<T>& buf, const double* x, int ldx, int width, Block&& block);
  // Both products of every stored (or recomputed) block: block(b, r, end)
  // gives rows [r, end) of column block b, row r first, and its ld.
  template <class T, class Block>
  void local_products(int width, Buffers<T>& buf, Block&& block);
  // The lower-block layout of the square n x n matrix on `grid`.
  void init_line_maps(const BlockCyclic1D& rows);
  void init_lower(const BlacsGrid& grid, const BlockCyclic1D& rows, const BlockCyclic1D& cols);
  // Sums send_ over the ranks; y receives this rank's line rows.
  void reduce_scatter(int width, double* y, int ldy);
  const Comm* comm_;
  std::int64_t n_;
  int local_rows_, local_cols_, lda_;
  const double* a_;        // A's local block, or
  const float* a_single_;  // its single-precision storage
  BlockCyclic1D line_;
  // Full storage only:
  std::optional<Comm> column_comm_;           // the ranks of this process column, by process row
  std::vector<BlockCyclic1D> column_lines_;   // line layouts of the column's ranks
  std::vector<int> gathered_to_local_col_;    // gathered row -> local column of A
  std::vector<int> scatter_counts_;           // line rows of each rank
  std::vector<std::int64_t> rank_base_;       // line rows on the ranks before each rank
  std::vector<int> receiver_, receiver_row_;  // local row of A -> its rank and line row there
  std::vector<double> send_, received_;       // the reduce-scatter's partial sums and result
  Buffers<double> double_;
  Buffers<float> single_;
  // Lower-block storage only:
  std::vector<StoredBlock> stored_;
  bool lower_ = false;
  std::vector<int> col_owner_, col_line_;  // local column of A -> its rank and line row there
  // Recomputed blocks only: the source, and a tile rounded to float.
  RecomputedBlock recompute_;
  bool single_recomputed_ = false;
  std::vector<float> rounded_;
};

}  // namespace kembed
