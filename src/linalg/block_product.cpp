#include "kembed/linalg/block_product.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>

#include "kembed/core/error.hpp"
#include "kembed/linalg/narrow_product.hpp"

namespace kembed {

namespace {

int checked_count(std::int64_t v) {
  if (v > std::numeric_limits<int>::max())
    throw Error("block product: " + std::to_string(v) + " values exceed MPI's int counts");
  return static_cast<int>(v);
}

}  // namespace

BlockProduct::BlockProduct(const DistMatrix& a) : BlockProduct(a, a.data(), nullptr) {}

BlockProduct::BlockProduct(const SingleMatrix& a) : BlockProduct(a, nullptr, a.data()) {}

// The reduce-scatter's layout: every rank's line rows, and where each local
// row of A goes (its rank and line row there).
void BlockProduct::init_line_maps(const BlockCyclic1D& rows) {
  const int ranks = comm_->size();
  for (int r = 0; r < ranks; ++r)
    scatter_counts_.push_back(BlockCyclic1D(n_, line_.block_size(), r, ranks).local_size());
  for (int li = 0; li < local_rows_; ++li) {
    const std::int64_t g = rows.to_global(li);
    receiver_.push_back(line_.owner(g));
    // to_local does not depend on which process asks.
    receiver_row_.push_back(line_.to_local(g));
  }
  rank_base_.assign(ranks + 1, 0);
  for (int r = 0; r < ranks; ++r) rank_base_[r + 1] = rank_base_[r] + scatter_counts_[r];
}

template <class T>
BlockProduct::BlockProduct(const BasicDistMatrix<T>& a, const double* ad, const float* af)
    : comm_(&a.grid().comm()),
      n_(a.rows()),
      local_rows_(a.local_rows()),
      local_cols_(a.local_cols()),
      lda_(a.ld()),
      a_(ad),
      a_single_(af),
      line_(a.rows(), a.row_dist().block_size(), a.grid().comm().rank(), a.grid().comm().size()) {
  const BlacsGrid& grid = a.grid();
  const BlockCyclic1D& rows = a.row_dist();
  const BlockCyclic1D& cols = a.col_dist();
  if (rows.global_size() != cols.global_size() || rows.block_size() != cols.block_size())
    throw Error("block product: the matrix must be square with square blocks");
  const std::int64_t n = n_;
  const int nb = rows.block_size();
  const int ranks = grid.comm().size();
  init_line_maps(rows);
  if (a.storage() == Storage::full) {
    // Line block t lives on rank t mod (P Q), whose process column is t mod
    // Q: the rows matching this process column's columns of A are exactly
    // the line rows of the ranks in this process column.
    column_comm_.emplace(grid.comm().split(grid.mycol(), grid.myrow()));
    for (int p = 0; p < grid.nprow(); ++p)
      column_lines_.emplace_back(n, nb, p * grid.npcol() + grid.mycol(), ranks);
    for (const BlockCyclic1D& line : column_lines_)
      for (int l = 0; l < line.local_size(); ++l)
        gathered_to_local_col_.push_back(cols.to_local(line.to_global(l)));
    agree(grid.comm(), static_cast<int>(gathered_to_local_col_.size()) == local_cols_
                           ? ""
                           : "block product: the grid's rank order is not row-major");
    return;
  }
  init_lower(grid, rows, cols);
  for (StoredBlock& b : stored_) {
    b.from = a.stored_from(b.col);
    b.below = a.below_diagonal_from(b.col);
    b.start = std::size_t(a.column(b.col) - a.data());
    b.ld = a.column_ld(b.col);
  }
}

BlockProduct::BlockProduct(const BlacsGrid& grid, std::int64_t n, int nb, RecomputedBlock block,
                           bool single_precision)
    : comm_(&grid.comm()),
      n_(n),
      local_rows_(BlockCyclic1D(n, nb, grid.myrow(), grid.nprow()).local_size()),
      local_cols_(BlockCyclic1D(n, nb, grid.mycol(), grid.npcol()).local_size()),
      lda_(1),
      a_(nullptr),
      a_single_(nullptr),
      line_(n, nb, grid.comm().rank(), grid.comm().size()),
      recompute_(std::move(block)),
      single_recomputed_(single_precision) {
  const BlockCyclic1D rows(n, nb, grid.myrow(), grid.nprow());
  const BlockCyclic1D cols(n, nb, grid.mycol(), grid.npcol());
  init_line_maps(rows);
  init_lower(grid, rows, cols);
}

void BlockProduct::init_lower(const BlacsGrid& grid, const BlockCyclic1D& rows,
                              const BlockCyclic1D& cols) {
  const int nb = rows.block_size();
  // Local rows before the row blocks of this process row below block
  // `limit` (DistMatrix::stored_from's count).
  const auto rows_before = [&](std::int64_t limit) {
    const std::int64_t p = grid.myrow(), procs = grid.nprow();
    const std::int64_t blocks = limit > p ? (limit - p + procs - 1) / procs : 0;
    return static_cast<int>(std::min<std::int64_t>(blocks * nb, local_rows_));
  };
  for (int c = 0; c < local_cols_; c += nb) {
    const std::int64_t block = cols.to_global(c) / nb;
    stored_.push_back({c, std::min(nb, local_cols_ - c), rows_before(block),
                       rows_before(block + 1), 0, 1});
  }
  lower_ = true;
  for (int lj = 0; lj < local_cols_; ++lj) {
    const std::int64_t g = cols.to_global(lj);
    col_owner_.push_back(line_.owner(g));
    col_line_.push_back(line_.to_local(g));
  }
}

template BlockProduct::BlockProduct(const DistMatrix&, const double*, const float*);
template BlockProduct::BlockProduct(const SingleMatrix&, const double*, const float*);

void BlockProduct::apply(const double* x, int ldx, int width, double* y, int ldy) {
  if (width <= 0) return;
  checked_count(n_ * width);
  if (recompute_ && single_recomputed_) {
    apply_lower(single_, x, ldx, width, [&](const StoredBlock& b, int r, int end) {
      const auto [tile, ld] = recompute_(Tile{r, end - r, b.col, b.cols, std::max(r, b.below)});
      // As stored single-precision blocks are rounded (kernel::assemble_in_slabs):
      // values below float's normal range become 0.
      const int rows = end - r;
      rounded_.resize(std::size_t(rows) * b.cols);
      for (int j = 0; j < b.cols; ++j)
        for (int i = 0; i < rows; ++i) {
          const double v = tile[i + std::size_t(j) * ld], magnitude = std::abs(v);
          rounded_[i + std::size_t(j) * rows] =
              magnitude < FLT_MIN || !(magnitude <= FLT_MAX) ? 0.0f : static_cast<float>(v);
        }
      return std::make_pair(static_cast<const float*>(rounded_.data()), rows);
    });
  } else if (recompute_) {
    apply_lower(double_, x, ldx, width, [&](const StoredBlock& b, int r, int end) {
      return recompute_(Tile{r, end - r, b.col, b.cols, std::max(r, b.below)});
    });
  } else if (lower_) {
    if (a_single_)
      apply_lower(single_, x, ldx, width, [&](const StoredBlock& b, int r, int) {
        return std::make_pair(a_single_ + b.start + r, b.ld);
      });
    else
      apply_lower(double_, x, ldx, width, [&](const StoredBlock& b, int r, int) {
        return std::make_pair(a_ + b.start + r, b.ld);
      });
  } else {
    if (a_single_)
      apply_full(a_single_, single_, x, ldx, width);
    else
      apply_full(a_, double_, x, ldx, width);
  }
  reduce_scatter(width, y, ldy);
}

std::size_t BlockProduct::held_bytes() const {
  const auto bytes = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  const auto all = [&](const auto& b) {
    return bytes(b.packed) + bytes(b.gathered) + bytes(b.x_cols) + bytes(b.x_rows) +
           bytes(b.y_rows) + bytes(b.y_cols);
  };
  return bytes(send_) + bytes(received_) + all(double_) + all(single_) + bytes(rounded_);
}

void BlockProduct::visit_tiles(const std::function<void(const Tile&, const double*, int)>& visit) {
  if (!recompute_) throw Error("block product: only recomputed blocks are visited");
  for (const StoredBlock& b : stored_)
    for (int r = b.from; r < local_rows_; r += kChunkRows) {
      const int end = std::min(local_rows_, r + kChunkRows);
      const Tile tile{r, end - r, b.col, b.cols, std::max(r, b.below)};
      const auto [entries, ld] = recompute_(tile);
      visit(tile, entries, ld);
    }
}

namespace {

// This rank's line rows of X, column-major, in A's precision.
template <class T>
void pack(const double* x, int ldx, int rows, int width, std::vector<T>& out) {
  out.resize(std::size_t(rows) * width);
  for (int j = 0; j < width; ++j)
    for (int l = 0; l < rows; ++l)
      out[std::size_t(j) * rows + l] = static_cast<T>(x[std::size_t(j) * ldx + l]);
}

}  // namespace

template <class T>
void BlockProduct::apply_full(const T* a, Buffers<T>& buf, const double* x, int ldx, int width) {
  const int mine = line_rows(), lr = local_rows_, lc = local_cols_;

  // 1. The rows of X matching this rank's columns of A, from the process column.
  pack(x, ldx, mine, width, buf.packed);
  const std::vector<T> all = column_comm_->allgatherv(buf.packed);
  buf.x_cols.resize(std::size_t(std::max(lc, 1)) * width);
  std::size_t offset = 0;
  std::size_t row = 0;
  for (const BlockCyclic1D& line : column_lines_) {
    const int rows = line.local_size();
    for (int j = 0; j < width; ++j) {
      const T* from = all.data() + offset + std::size_t(j) * rows;
      T* to = buf.x_cols.data() + std::size_t(j) * lc;
      for (int l = 0; l < rows; ++l) to[gathered_to_local_col_[row + l]] = from[l];
    }
    offset += std::size_t(rows) * width;
    row += rows;
  }

  // 2. One narrow_product over the whole local block A[R_p, C_q]: its partial
  //    sum of the rows R_p of A X (in float with single-precision storage).
  buf.y_rows.resize(std::size_t(std::max(lr, 1)) * width);
  if (lr > 0) {
    if (lc == 0)
      std::fill(buf.y_rows.begin(), buf.y_rows.end(), T(0));
    else
      narrow_product(lr, width, lc, a, lda_, buf.x_cols.data(), lc, buf.y_rows.data(), lr);
  }

  // 3. The partial products by receiving rank, each rank's rows column-major.
  send_.assign(std::size_t(n_) * width, 0.0);
  for (int li = 0; li < lr; ++li) {
    const int r = receiver_[li];
    double* to = send_.data() + std::size_t(rank_base_[r]) * width + receiver_row_[li];
    const std::size_t stride = scatter_counts_[r];
    for (int j = 0; j < width; ++j) to[j * stride] = buf.y_rows[std::size_t(j) * lr + li];
  }
}

void BlockProduct::reduce_scatter(int width, double* y, int ldy) {
  const int mine = line_rows();
  std::vector<int> counts(scatter_counts_.size());
  for (std::size_t r = 0; r < counts.size(); ++r) counts[r] = scatter_counts_[r] * width;
  received_.resize(std::size_t(std::max(mine, 1)) * width);
  MPI_Reduce_scatter(send_.data(), received_.data(), counts.data(), MPI_DOUBLE, MPI_SUM,
                     comm_->get());
  for (int j = 0; j < width; ++j)
    std::copy_n(received_.data() + std::size_t(j) * mine, mine, y + std::size_t(j) * ldy);
}

// Rows of a column block taken at a time (kChunkRows): both products read
// them, the second from cache. X_I and A^T X_I are held by rows (x_rows,
// y_cols), X_J and A X_J column-major (x_cols, y_rows). A^T X_I reads the
// chunk from memory: it walks down 8 columns at a time, where A X_J's
// 16-row tiles cross all 64 columns at once, and from memory it is the
// faster of the two (bench/narrow.cpp).
template <class T, class Block>
void BlockProduct::local_products(int width, Buffers<T>& buf, Block&& block) {
  const int lr = local_rows_, lc = local_cols_;
  buf.y_rows.assign(std::size_t(std::max(lr, 1)) * width, T(0));
  buf.y_cols.assign(std::size_t(std::max(lc, 1)) * width, T(0));
  for (const StoredBlock& b : stored_) {
    for (int r = b.from; r < lr; r += kChunkRows) {
      const int end = std::min(lr, r + kChunkRows);
      const auto [column, ld] = block(b, r, end);  // row r first
      // Rows J: A_IJ^T X_I over the blocks strictly below the diagonal,
      // with X_I and the result held by rows.
      const int start = std::max(r, b.below);
      if (start < end)
        narrow_product_transposed_add(end - start, width, b.cols, column + (start - r), ld,
                                      buf.x_rows.data() + std::size_t(start) * width, width,
                                      buf.y_cols.data() + std::size_t(b.col) * width, width);
      // Rows I of the column block: A_IJ X_J.
      narrow_product_add(end - r, width, b.cols, column, ld, buf.x_cols.data() + b.col, lc,
                         buf.y_rows.data() + r, lr);
    }
  }
}

template <class T, class Block>
void BlockProduct::apply_lower(Buffers<T>& buf, const double* x, int ldx, int width,
                               Block&& block) {
  const Comm& comm = *comm_;
  const int ranks = comm.size();
  // 1. All of X on every rank, ordered by rank, each rank's rows column-major.
  pack(x, ldx, line_rows(), width, buf.packed);
  buf.gathered.resize(std::size_t(n_) * width);
  std::vector<int> counts(ranks), displs(ranks);
  for (int r = 0; r < ranks; ++r) {
    counts[r] = scatter_counts_[r] * width;
    displs[r] = static_cast<int>(rank_base_[r] * width);
  }
  MPI_Allgatherv(buf.packed.data(), counts[comm.rank()], mpi_datatype<T>(), buf.gathered.data(),
                 counts.data(), displs.data(), mpi_datatype<T>(), comm.get());
  // Rank r's piece of X starts at rank_base_[r] * width, its rows column-major.
  const auto at = [&](int rank, int line_row) {
    return std::size_t(rank_base_[rank]) * width + line_row;
  };
  // Entry (l, j) of a block of `count` rows: column-major, or by rows.
  const auto index = [&](bool by_rows, int count, int l, int j) {
    return by_rows ? std::size_t(l) * width + j : std::size_t(j) * count + l;
  };
  const auto pick = [&](const std::vector<int>& owner, const std::vector<int>& line_row,
                        bool by_rows, std::vector<T>& out) {
    const int count = static_cast<int>(owner.size());
    out.resize(std::size_t(std::max(count, 1)) * width);
    for (int l = 0; l < count; ++l) {
      const T* from = buf.gathered.data() + at(owner[l], line_row[l]);
      const std::size_t stride = scatter_counts_[owner[l]];
      for (int j = 0; j < width; ++j) out[index(by_rows, count, l, j)] = from[j * stride];
    }
  };
  pick(col_owner_, col_line_, false, buf.x_cols);
  pick(receiver_, receiver_row_, true, buf.x_rows);

  // 2. The local products, in A's precision.
  local_products(width, buf, block);

  // 3. Both partials into one buffer by receiving rank, summed in double.
  send_.assign(std::size_t(n_) * width, 0.0);
  const auto put = [&](const std::vector<int>& owner, const std::vector<int>& line_row,
                       bool by_rows, const std::vector<T>& part) {
    const int count = static_cast<int>(owner.size());
    for (int l = 0; l < count; ++l) {
      double* to = send_.data() + at(owner[l], line_row[l]);
      const std::size_t stride = scatter_counts_[owner[l]];
      for (int j = 0; j < width; ++j) to[j * stride] += part[index(by_rows, count, l, j)];
    }
  };
  put(receiver_, receiver_row_, false, buf.y_rows);
  put(col_owner_, col_line_, true, buf.y_cols);
}

}  // namespace kembed
