#pragma once
/// @file A dense matrix in ScaLAPACK's 2-D block-cyclic layout.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/linalg/block_cyclic.hpp"

namespace kembed {

/// Which entries of a symmetric matrix its local blocks hold.
/// - full: every entry.
/// - lower_blocks: the blocks on and below the block diagonal (block row I >=
///   block column J), the diagonal blocks whole: symmetric kernel storage for
///   the solvers that read one triangle (the block product, and ScaLAPACK's
///   routines called with UPLO = 'L'). The local block is packed (see
///   column()): each local column keeps only its stored rows, so the matrix
///   takes half the memory and half the address space of full storage.
enum class Storage { full, lower_blocks };

/// Owns the local column-major piece of an m x n matrix of T (double, or
/// float for single-precision kernel storage) distributed in mb x nb blocks
/// over a BlacsGrid, and its ScaLAPACK descriptor. Move-only. Indices are
/// 0-based in this API (ScaLAPACK calls add 1 internally).
template <class T>
class BasicDistMatrix {
 public:
  using value_type = T;
  /// Collective (no communication): a zero-initialized m x n matrix.
  BasicDistMatrix(const BlacsGrid& grid, std::int64_t m, std::int64_t n, int mb, int nb);
  /// Collective (no communication): an m x n matrix in `storage` whose
  /// entries are left unset, for a caller that writes every stored entry
  /// before reading any (kernel and distance assembly). Saves the zeroing
  /// pass, and the pages are first touched by the writer. With lower_blocks
  /// only the stored entries are allocated.
  static BasicDistMatrix uninitialized(const BlacsGrid& grid, std::int64_t m, std::int64_t n,
                                       int mb, int nb, Storage storage = Storage::full);
  BasicDistMatrix(const BasicDistMatrix&) = delete;
  BasicDistMatrix& operator=(const BasicDistMatrix&) = delete;
  BasicDistMatrix(BasicDistMatrix&&) noexcept = default;
  BasicDistMatrix& operator=(BasicDistMatrix&&) noexcept = default;

  const BlacsGrid& grid() const { return *grid_; }
  std::int64_t rows() const { return rows_.global_size(); }
  std::int64_t cols() const { return cols_.global_size(); }
  /// Distribution of the row (column) indices over the process rows (columns).
  const BlockCyclic1D& row_dist() const { return rows_; }
  const BlockCyclic1D& col_dist() const { return cols_; }
  int local_rows() const { return rows_.local_size(); }
  int local_cols() const { return cols_.local_size(); }
  /// Leading dimension of the local buffer in ScaLAPACK's layout (of desc()).
  /// A packed matrix has none: its columns are at column(lj), column_ld(lj) apart.
  int ld() const { return desc_[8]; }
  T* data() { return local_.get(); }
  const T* data() const { return local_.get(); }
  Storage storage() const { return storage_; }
  /// Declares which entries hold the matrix, keeping the values of the
  /// entries it still holds: to lower_blocks packs them in place (the buffer
  /// keeps its size). @pre lower_blocks only for a square matrix with square
  /// blocks; a lower-block matrix cannot become full.
  void set_storage(Storage storage);
  /// Lower-block storage of columns [first_block nb, ...) of a larger
  /// symmetric matrix with the same row layout (a slab of it): the stored
  /// rows are those whose row block is at least first_block + the column's
  /// block. The entries are left unset. @pre square blocks, and a buffer at
  /// least the packed size (the slab was allocated full, or larger before).
  void set_lower_slab(std::int64_t first_block);
  /// With lower_blocks storage, local column lj holds the local rows from
  /// stored_from(lj) on, and those from below_diagonal_from(lj) on lie in
  /// blocks strictly below the diagonal. With full storage: 0 and 0.
  int stored_from(int lj) const { return rows_before_block(lj, 0); }
  int below_diagonal_from(int lj) const { return rows_before_block(lj, 1); }

  /// Local column lj: entry (li, lj) is column(lj)[li] for its stored rows
  /// li >= stored_from(lj) (only those: with packed lower-block storage the
  /// rows above belong to the column before).
  T* column(int lj) { return local_.get() + column_start(lj); }
  const T* column(int lj) const { return local_.get() + column_start(lj); }
  /// The distance between consecutive columns of lj's column block, which
  /// share their stored rows: the leading dimension of a BLAS call on them.
  int column_ld(int lj) const {
    return packed_ ? std::max(1, local_rows() - stored_from(lj)) : ld();
  }
  /// Whether the local block is packed (lower_blocks, until unpack()).
  bool packed() const { return packed_; }
  /// Gives a packed matrix ScaLAPACK's layout again, for its routines that
  /// read the lower triangle (UPLO = 'L'). Reallocates; the entries above the
  /// diagonal blocks are zero pages, never touched. Storage stays lower_blocks.
  void unpack();

  /// The ScaLAPACK descriptor (9 ints). @pre not packed()
  const int* desc() const;
  T& local(int li, int lj) { return column(lj)[li]; }
  T local(int li, int lj) const { return column(lj)[li]; }

  /// Sets every stored entry to f(i, j) of its global indices.
  template <class F>
  void fill(F&& f) {
    for (int lj = 0; lj < local_cols(); ++lj) {
      const std::int64_t j = cols_.to_global(lj);
      T* c = column(lj);
      for (int li = stored_from(lj); li < local_rows(); ++li) c[li] = f(rows_.to_global(li), j);
    }
  }

  /// Collective: distributes the column-major m x n matrix `full` held by
  /// rank 0 of the grid (ignored elsewhere).
  void scatter_from_root(const std::vector<T>& full);
  /// Collective: the whole matrix, column-major, on rank 0 (empty elsewhere);
  /// with lower_blocks storage the entries above the diagonal blocks are 0.
  /// Meant for small matrices, output and tests.
  std::vector<T> gather_to_root() const;

 private:
  struct Free {
    void operator()(T* p) const noexcept;
  };
  BasicDistMatrix(const BlacsGrid& grid, std::int64_t m, std::int64_t n, int mb, int nb, bool zero,
                  bool allocated);
  void require_square() const;
  // The stored rows of each local column from a column-major local block.
  void store_columns(const std::vector<T>& piece);
  // Local rows whose row block comes before block column(lj) + extra.
  int rows_before_block(int lj, int extra) const;
  std::size_t column_start(int lj) const {
    return packed_ ? column_start_[lj] : std::size_t(lj) * std::size_t(ld());
  }
  // The packed layout of the current stored rows: column_start_, and the
  // values the buffer needs.
  std::size_t pack_layout();
  const BlacsGrid* grid_;
  BlockCyclic1D rows_, cols_;
  int desc_[9] = {};
  std::unique_ptr<T, Free> local_;
  std::size_t capacity_ = 0;  // values in local_
  Storage storage_ = Storage::full;
  std::int64_t first_block_ = 0;  // block column of the larger matrix at column 0
  bool packed_ = false;
  // Packed: column(lj) - local_.get(). Column lj's stored rows follow the
  // column before's; the first is preceded by stored_from(0) unused values,
  // so that no start lies before the buffer.
  std::vector<std::size_t> column_start_;
};

extern template class BasicDistMatrix<double>;
extern template class BasicDistMatrix<float>;

/// The matrices of every computation.
using DistMatrix = BasicDistMatrix<double>;
/// Kernel storage of `--precision single`: half the memory and bytes per pass.
using SingleMatrix = BasicDistMatrix<float>;

/// Collective: copies the m x n block of `src` at (si, sj) into `dst` at
/// (di, dj), across any difference of grid or blocking (ScaLAPACK pdgemr2d).
void copy(const DistMatrix& src, std::int64_t si, std::int64_t sj, std::int64_t m,
          std::int64_t n, DistMatrix& dst, std::int64_t di, std::int64_t dj);

}  // namespace kembed
