#include "kembed/linalg/dist_matrix.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "fortran.hpp"
#include "kembed/core/error.hpp"

namespace kembed {

namespace {

int checked_int(std::int64_t v, const char* what) {
  if (v < 0 || v > std::numeric_limits<int>::max())
    throw Error(std::string(what) + " " + std::to_string(v) +
                " exceeds ScaLAPACK's 32-bit index range");
  return static_cast<int>(v);
}

// The (myrow, mycol) of every rank of the grid, on every rank.
std::vector<int> grid_coordinates(const BlacsGrid& grid) {
  std::vector<int> coords(2 * grid.comm().size());
  const int mine[2] = {grid.myrow(), grid.mycol()};
  MPI_Allgather(mine, 2, MPI_INT, coords.data(), 2, MPI_INT, grid.comm().get());
  return coords;
}

// calloc, not malloc + memset: a large block comes from fresh pages that the
// kernel zeroes on first touch, so a zeroed matrix costs no pass of its own.
// (Transparent huge pages, madvise(MADV_HUGEPAGE), made first touch of 2 GB
// three times faster on the development VM when free memory was unfragmented,
// but stalled 7-13 s in direct compaction when it was not: not used. Nor is
// mmap with MAP_POPULATE: it faulted 1 GB in 0.30 s up front where kernel
// assembly, touching the pages as it writes them, lost only 0.2 s to faults.)
template <class T>
T* allocate(std::size_t count, bool zeroed) {
  count = std::max<std::size_t>(count, 1);
  void* p = zeroed ? std::calloc(count, sizeof(T)) : std::malloc(count * sizeof(T));
  if (!p) throw std::bad_alloc();
  return static_cast<T*>(p);
}

}  // namespace

template <class T>
void BasicDistMatrix<T>::Free::operator()(T* p) const noexcept {
  std::free(p);
}

template <class T>
BasicDistMatrix<T>::BasicDistMatrix(const BlacsGrid& grid, std::int64_t m, std::int64_t n, int mb,
                                    int nb)
    : BasicDistMatrix(grid, m, n, mb, nb, true, true) {}

template <class T>
BasicDistMatrix<T> BasicDistMatrix<T>::uninitialized(const BlacsGrid& grid, std::int64_t m,
                                                     std::int64_t n, int mb, int nb,
                                                     Storage storage) {
  if (storage == Storage::full) return BasicDistMatrix(grid, m, n, mb, nb, false, true);
  // Only the packed values: a full buffer first would reserve twice the
  // address space.
  BasicDistMatrix a(grid, m, n, mb, nb, false, false);
  a.require_square();
  a.storage_ = Storage::lower_blocks;
  a.capacity_ = a.pack_layout();
  a.local_.reset(allocate<T>(a.capacity_, false));
  return a;
}

template <class T>
BasicDistMatrix<T>::BasicDistMatrix(const BlacsGrid& grid, std::int64_t m, std::int64_t n, int mb,
                                    int nb, bool zeroed, bool allocated)
    : grid_(&grid),
      rows_(m, mb, grid.myrow(), grid.nprow()),
      cols_(n, nb, grid.mycol(), grid.npcol()) {
  const int im = checked_int(m, "matrix dimension");
  const int in = checked_int(n, "matrix dimension");
  const int zero = 0, ctxt = grid.context();
  const int lld = std::max(1, rows_.local_size());
  int info = 0;
  descinit_(desc_, &im, &in, &mb, &nb, &zero, &zero, &ctxt, &lld, &info);
  if (info != 0) throw Error("descinit failed with INFO = " + std::to_string(info));
  if (!allocated) return;
  capacity_ = std::size_t(lld) * std::max(1, cols_.local_size());
  local_.reset(allocate<T>(capacity_, zeroed));
}

template <class T>
const int* BasicDistMatrix<T>::desc() const {
  if (packed_)
    throw Error("a packed lower-block matrix has no ScaLAPACK descriptor (unpack it first)");
  return desc_;
}

template <class T>
void BasicDistMatrix<T>::require_square() const {
  if (rows() != cols() || rows_.block_size() != cols_.block_size())
    throw Error("lower-block storage needs a square matrix with square blocks");
}

template <class T>
std::size_t BasicDistMatrix<T>::pack_layout() {
  const int m = local_rows(), n = local_cols();
  column_start_.resize(n);
  std::size_t next = n > 0 ? std::size_t(stored_from(0)) : 0;
  for (int lj = 0; lj < n; ++lj) {
    const int from = stored_from(lj);
    column_start_[lj] = next - std::size_t(from);
    next += std::size_t(m - from);
  }
  packed_ = true;
  return std::max<std::size_t>(next, 1);
}

template <class T>
void BasicDistMatrix<T>::set_storage(Storage storage) {
  if (storage == storage_) return;
  if (storage == Storage::full)
    throw Error("a matrix in lower-block storage cannot become full (its upper blocks are gone)");
  require_square();
  storage_ = storage;
  first_block_ = 0;
  // Column lj's stored rows move from lj ld + from to their packed place,
  // which is never later and ends before the next column's stored rows: in
  // column order each move reads only values not yet overwritten.
  const std::size_t lld = std::size_t(ld());
  pack_layout();
  for (int lj = 0; lj < local_cols(); ++lj) {
    const int from = stored_from(lj);
    std::memmove(local_.get() + column_start_[lj] + from, local_.get() + lj * lld + from,
                 std::size_t(local_rows() - from) * sizeof(T));
  }
}

template <class T>
void BasicDistMatrix<T>::set_lower_slab(std::int64_t first_block) {
  if (rows_.block_size() != cols_.block_size())
    throw Error("lower-block storage needs square blocks");
  storage_ = Storage::lower_blocks;
  first_block_ = first_block;
  if (pack_layout() > capacity_)
    throw Error("lower-block slab: the buffer is smaller than the packed slab");
}

template <class T>
void BasicDistMatrix<T>::unpack() {
  if (!packed_) return;
  const std::size_t lld = std::size_t(ld());
  const std::size_t count = lld * std::max(1, local_cols());
  std::unique_ptr<T, Free> strided(allocate<T>(count, true));
  for (int lj = 0; lj < local_cols(); ++lj) {
    const int from = stored_from(lj);
    std::copy(column(lj) + from, column(lj) + local_rows(), strided.get() + lj * lld + from);
  }
  local_ = std::move(strided);
  capacity_ = count;
  packed_ = false;
  column_start_.clear();
}

template <class T>
int BasicDistMatrix<T>::rows_before_block(int lj, int extra) const {
  if (storage_ == Storage::full) return 0;
  // Row blocks of this process row: myrow, myrow + P, ...; count those below
  // block `limit`.
  const std::int64_t limit = first_block_ + cols_.to_global(lj) / cols_.block_size() + extra;
  const std::int64_t p = grid_->myrow(), procs = grid_->nprow();
  const std::int64_t blocks = limit > p ? (limit - p + procs - 1) / procs : 0;
  return static_cast<int>(std::min<std::int64_t>(blocks * rows_.block_size(), local_rows()));
}

template <class T>
void BasicDistMatrix<T>::store_columns(const std::vector<T>& piece) {
  for (int lj = 0; lj < local_cols(); ++lj) {
    const int from = stored_from(lj);
    const T* c = piece.data() + std::size_t(lj) * local_rows();
    std::copy(c + from, c + local_rows(), column(lj) + from);
  }
}

template <class T>
void BasicDistMatrix<T>::scatter_from_root(const std::vector<T>& full) {
  const Comm& comm = grid_->comm();
  const auto coords = grid_coordinates(*grid_);
  if (comm.is_root()) {
    for (int r = comm.size() - 1; r >= 0; --r) {
      const BlockCyclic1D rd(rows(), rows_.block_size(), coords[2 * r], grid_->nprow());
      const BlockCyclic1D cd(cols(), cols_.block_size(), coords[2 * r + 1], grid_->npcol());
      std::vector<T> piece(std::size_t(rd.local_size()) * cd.local_size());
      for (int lj = 0; lj < cd.local_size(); ++lj)
        for (int li = 0; li < rd.local_size(); ++li)
          piece[std::size_t(lj) * rd.local_size() + li] =
              full[std::size_t(cd.to_global(lj)) * rows() + rd.to_global(li)];
      if (r == 0) {
        store_columns(piece);
      } else {
        MPI_Send(piece.data(), static_cast<int>(piece.size()), mpi_datatype<T>(), r, 0, comm.get());
      }
    }
  } else {
    std::vector<T> piece(std::size_t(local_rows()) * local_cols());
    MPI_Recv(piece.data(), static_cast<int>(piece.size()), mpi_datatype<T>(), 0, 0, comm.get(),
             MPI_STATUS_IGNORE);
    store_columns(piece);
  }
}

template <class T>
std::vector<T> BasicDistMatrix<T>::gather_to_root() const {
  const Comm& comm = grid_->comm();
  const auto coords = grid_coordinates(*grid_);
  std::vector<T> piece(std::size_t(local_rows()) * local_cols());
  for (int lj = 0; lj < local_cols(); ++lj) {
    const int from = stored_from(lj);
    std::copy(column(lj) + from, column(lj) + local_rows(),
              piece.data() + std::size_t(lj) * local_rows() + from);
  }
  if (!comm.is_root()) {
    MPI_Send(piece.data(), static_cast<int>(piece.size()), mpi_datatype<T>(), 0, 1, comm.get());
    return {};
  }
  std::vector<T> full(std::size_t(rows()) * cols());
  for (int r = 0; r < comm.size(); ++r) {
    const BlockCyclic1D rd(rows(), rows_.block_size(), coords[2 * r], grid_->nprow());
    const BlockCyclic1D cd(cols(), cols_.block_size(), coords[2 * r + 1], grid_->npcol());
    std::vector<T> theirs;
    if (r == 0) {
      theirs.swap(piece);
    } else {
      theirs.resize(std::size_t(rd.local_size()) * cd.local_size());
      MPI_Recv(theirs.data(), static_cast<int>(theirs.size()), mpi_datatype<T>(), r, 1, comm.get(),
               MPI_STATUS_IGNORE);
    }
    for (int lj = 0; lj < cd.local_size(); ++lj)
      for (int li = 0; li < rd.local_size(); ++li)
        full[std::size_t(cd.to_global(lj)) * rows() + rd.to_global(li)] =
            theirs[std::size_t(lj) * rd.local_size() + li];
  }
  return full;
}

template class BasicDistMatrix<double>;
template class BasicDistMatrix<float>;

void copy(const DistMatrix& src, std::int64_t si, std::int64_t sj, std::int64_t m, std::int64_t n,
          DistMatrix& dst, std::int64_t di, std::int64_t dj) {
  if (m == 0 || n == 0) return;
  if (src.packed() || dst.packed())
    throw Error("copy: a packed lower-block matrix (unpack it first)");
  const int im = static_cast<int>(m), in = static_cast<int>(n);
  const int ia = static_cast<int>(si + 1), ja = static_cast<int>(sj + 1);
  const int ib = static_cast<int>(di + 1), jb = static_cast<int>(dj + 1);
  const int ctxt = src.grid().context();
  pdgemr2d_(&im, &in, src.data(), &ia, &ja, src.desc(), dst.data(), &ib, &jb, dst.desc(), &ctxt);
}

}  // namespace kembed
