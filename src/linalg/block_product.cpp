#include "kembed/linalg/block_product.hpp"

#include <algorithm>
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

template <class T>
BlockProduct::BlockProduct(const BasicDistMatrix<T>& a, const double* ad, const float* af)
    : comm_(&a.grid().comm()),
      n_(a.rows()),
      local_rows_(a.local_rows()),
      local_cols_(a.local_cols()),
      lda_(a.ld()),
      a_(ad),
      a_single_(af),
      column_comm_(a.grid().comm().split(a.grid().mycol(), a.grid().myrow())),
      line_(a.rows(), a.row_dist().block_size(), a.grid().comm().rank(), a.grid().comm().size()) {
  const BlacsGrid& grid = a.grid();
  const BlockCyclic1D& rows = a.row_dist();
  const BlockCyclic1D& cols = a.col_dist();
  if (rows.global_size() != cols.global_size() || rows.block_size() != cols.block_size())
    throw Error("block product: the matrix must be square with square blocks");
  const std::int64_t n = n_;
  const int nb = rows.block_size();
  const int ranks = grid.comm().size();
  // Line block t lives on rank t mod (P Q), whose process column is t mod Q:
  // the rows matching this process column's columns of A are exactly the
  // line rows of the ranks in this process column.
  for (int p = 0; p < grid.nprow(); ++p)
    column_lines_.emplace_back(n, nb, p * grid.npcol() + grid.mycol(), ranks);
  for (const BlockCyclic1D& line : column_lines_)
    for (int l = 0; l < line.local_size(); ++l)
      gathered_to_local_col_.push_back(cols.to_local(line.to_global(l)));
  agree(grid.comm(), static_cast<int>(gathered_to_local_col_.size()) == local_cols_
                         ? ""
                         : "block product: the grid's rank order is not row-major");

  for (int r = 0; r < ranks; ++r)
    scatter_counts_.push_back(BlockCyclic1D(n, nb, r, ranks).local_size());
  for (int li = 0; li < local_rows_; ++li) {
    const std::int64_t g = rows.to_global(li);
    receiver_.push_back(line_.owner(g));
    // to_local does not depend on which process asks.
    receiver_row_.push_back(line_.to_local(g));
  }
  if (a.storage() == Storage::full) return;
  for (int c = 0; c < local_cols_; c += nb)
    stored_.push_back(
        {c, std::min(nb, local_cols_ - c), a.stored_from(c), a.below_diagonal_from(c)});
  lower_ = true;
  rank_base_.assign(ranks + 1, 0);
  for (int r = 0; r < ranks; ++r) rank_base_[r + 1] = rank_base_[r] + scatter_counts_[r];
  for (int lj = 0; lj < local_cols_; ++lj) {
    const std::int64_t g = cols.to_global(lj);
    col_owner_.push_back(line_.owner(g));
    col_line_.push_back(line_.to_local(g));
  }
}

template BlockProduct::BlockProduct(const DistMatrix&, const double*, const float*);
template BlockProduct::BlockProduct(const SingleMatrix&, const double*, const float*);

void BlockProduct::apply(const double* x, int ldx, int width, double* y, int ldy) {
  if (lower_) {
    apply_lower(x, ldx, width, y, ldy);
    return;
  }
  const Comm& comm = *comm_;
  const int mine = line_rows(), lr = local_rows_, lc = local_cols_;
  if (width <= 0) return;

  // 1. The rows of X matching this rank's columns of A, from the process column.
  packed_.resize(std::size_t(mine) * width);
  for (int j = 0; j < width; ++j)
    std::copy_n(x + std::size_t(j) * ldx, mine, packed_.data() + std::size_t(j) * mine);
  const std::vector<double> all = column_comm_.allgatherv(packed_);
  gathered_.resize(std::size_t(std::max(lc, 1)) * width);
  std::size_t offset = 0;
  std::size_t row = 0;
  for (const BlockCyclic1D& line : column_lines_) {
    const int rows = line.local_size();
    for (int j = 0; j < width; ++j) {
      const double* from = all.data() + offset + std::size_t(j) * rows;
      double* to = gathered_.data() + std::size_t(j) * lc;
      for (int l = 0; l < rows; ++l) to[gathered_to_local_col_[row + l]] = from[l];
    }
    offset += std::size_t(rows) * width;
    row += rows;
  }

  // 2. One narrow_product (in double or float) over the whole local block
  //    A[R_p, C_q]: its partial sum of the rows R_p of A X.
  product_.resize(std::size_t(std::max(lr, 1)) * width);
  if (lr > 0) {
    if (lc == 0) {
      std::fill(product_.begin(), product_.end(), 0.0);
    } else if (a_single_) {
      gathered_single_.assign(gathered_.begin(), gathered_.begin() + std::size_t(lc) * width);
      product_single_.resize(std::size_t(lr) * width);
      narrow_product(lr, width, lc, a_single_, lda_, gathered_single_.data(), lc,
                     product_single_.data(), lr);
      std::copy(product_single_.begin(), product_single_.end(), product_.begin());
    } else {
      narrow_product(lr, width, lc, a_, lda_, gathered_.data(), lc, product_.data(), lr);
    }
  }

  // 3. Sum the partial products; each rank receives its own line rows. The
  //    buffer is ordered by receiving rank, each rank's rows column-major.
  const std::int64_t n = n_;
  checked_count(n * width);
  send_.assign(std::size_t(n) * width, 0.0);
  std::vector<int> counts(scatter_counts_.size());
  std::vector<std::int64_t> base(scatter_counts_.size() + 1, 0);
  for (std::size_t r = 0; r < counts.size(); ++r) {
    counts[r] = scatter_counts_[r] * width;
    base[r + 1] = base[r] + std::int64_t{counts[r]};
  }
  for (int li = 0; li < lr; ++li) {
    const int r = receiver_[li];
    double* to = send_.data() + base[r] + receiver_row_[li];
    const std::size_t stride = scatter_counts_[r];
    for (int j = 0; j < width; ++j) to[j * stride] = product_[std::size_t(j) * lr + li];
  }
  std::vector<double> received(std::size_t(std::max(mine, 1)) * width);
  MPI_Reduce_scatter(send_.data(), received.data(), counts.data(), MPI_DOUBLE, MPI_SUM, comm.get());
  for (int j = 0; j < width; ++j)
    std::copy_n(received.data() + std::size_t(j) * mine, mine, y + std::size_t(j) * ldy);
}

// Rows of a column block taken at a time: both products read them, the
// second from cache (2048 x 64 doubles is 1 MB). X_I and A^T X_I are held by
// rows (x_rows, y_cols), X_J and A X_J column-major (x_cols, y_rows).
constexpr int kChunkRows = 2048;

template <class T>
void BlockProduct::local_products(const T* a, int width, std::vector<T>& x_cols,
                                  std::vector<T>& x_rows, std::vector<T>& y_rows,
                                  std::vector<T>& y_cols) {
  const int lr = local_rows_, lc = local_cols_;
  y_rows.assign(std::size_t(std::max(lr, 1)) * width, T(0));
  y_cols.assign(std::size_t(std::max(lc, 1)) * width, T(0));
  for (const StoredBlock& b : stored_) {
    const T* column = a + std::size_t(b.col) * lda_;
    for (int r = b.from; r < lr; r += kChunkRows) {
      const int end = std::min(lr, r + kChunkRows);
      // Rows I of the column block: A_IJ X_J.
      narrow_product_add(end - r, width, b.cols, column + r, lda_, x_cols.data() + b.col, lc,
                         y_rows.data() + r, lr);
      // Rows J: A_IJ^T X_I over the blocks strictly below the diagonal,
      // with X_I and the result held by rows.
      const int start = std::max(r, b.below);
      if (start < end)
        narrow_product_transposed_add(end - start, width, b.cols, column + start, lda_,
                                      x_rows.data() + std::size_t(start) * width, width,
                                      y_cols.data() + std::size_t(b.col) * width, width);
    }
  }
}

void BlockProduct::apply_lower(const double* x, int ldx, int width, double* y, int ldy) {
  const Comm& comm = *comm_;
  const int mine = line_rows();
  if (width <= 0) return;
  // 1. All of X on every rank, ordered by rank, each rank's rows column-major.
  packed_.resize(std::size_t(mine) * width);
  for (int j = 0; j < width; ++j)
    std::copy_n(x + std::size_t(j) * ldx, mine, packed_.data() + std::size_t(j) * mine);
  x_all_ = comm.allgatherv(packed_);
  // Rank r's piece of X starts at rank_base_[r] * width, its rows column-major.
  const auto at = [&](int rank, int line_row) {
    return std::size_t(rank_base_[rank]) * width + line_row;
  };
  // Entry (l, j) of a block of `count` rows: column-major, or by rows.
  const auto index = [&](bool by_rows, int count, int l, int j) {
    return by_rows ? std::size_t(l) * width + j : std::size_t(j) * count + l;
  };
  const auto pick = [&](const std::vector<int>& owner, const std::vector<int>& line_row,
                        bool by_rows, std::vector<double>& out) {
    const int count = static_cast<int>(owner.size());
    out.resize(std::size_t(std::max(count, 1)) * width);
    for (int l = 0; l < count; ++l) {
      const double* from = x_all_.data() + at(owner[l], line_row[l]);
      const std::size_t stride = scatter_counts_[owner[l]];
      for (int j = 0; j < width; ++j) out[index(by_rows, count, l, j)] = from[j * stride];
    }
  };
  pick(col_owner_, col_line_, false, x_cols_);
  pick(receiver_, receiver_row_, true, x_rows_);

  // 2. The local products, in double or in float.
  if (a_single_) {
    xf_cols_.assign(x_cols_.begin(), x_cols_.end());
    xf_rows_.assign(x_rows_.begin(), x_rows_.end());
    local_products(a_single_, width, xf_cols_, xf_rows_, yf_rows_, yf_cols_);
    y_rows_.assign(yf_rows_.begin(), yf_rows_.end());
    y_cols_.assign(yf_cols_.begin(), yf_cols_.end());
  } else {
    local_products(a_, width, x_cols_, x_rows_, y_rows_, y_cols_);
  }

  // 3. Both partials into one buffer by receiving rank; one reduce-scatter.
  checked_count(n_ * width);
  send_.assign(std::size_t(n_) * width, 0.0);
  const auto put = [&](const std::vector<int>& owner, const std::vector<int>& line_row,
                       bool by_rows, const std::vector<double>& part) {
    const int count = static_cast<int>(owner.size());
    for (int l = 0; l < count; ++l) {
      double* to = send_.data() + at(owner[l], line_row[l]);
      const std::size_t stride = scatter_counts_[owner[l]];
      for (int j = 0; j < width; ++j) to[j * stride] += part[index(by_rows, count, l, j)];
    }
  };
  put(receiver_, receiver_row_, false, y_rows_);
  put(col_owner_, col_line_, true, y_cols_);
  std::vector<int> counts(scatter_counts_.size());
  for (std::size_t r = 0; r < counts.size(); ++r) counts[r] = scatter_counts_[r] * width;
  std::vector<double> received(std::size_t(std::max(mine, 1)) * width);
  MPI_Reduce_scatter(send_.data(), received.data(), counts.data(), MPI_DOUBLE, MPI_SUM, comm.get());
  for (int j = 0; j < width; ++j)
    std::copy_n(received.data() + std::size_t(j) * mine, mine, y + std::size_t(j) * ldy);
}

}  // namespace kembed
