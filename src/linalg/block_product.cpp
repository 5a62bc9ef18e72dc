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

BlockProduct::BlockProduct(const DistMatrix& a)
    : BlockProduct(a.grid(), a.row_dist(), a.col_dist(), a.ld(), a.data(), nullptr) {}

BlockProduct::BlockProduct(const SingleMatrix& a)
    : BlockProduct(a.grid(), a.row_dist(), a.col_dist(), a.ld(), nullptr, a.data()) {}

BlockProduct::BlockProduct(const BlacsGrid& grid, const BlockCyclic1D& rows,
                           const BlockCyclic1D& cols, int lda, const double* a,
                           const float* a_single)
    : comm_(&grid.comm()),
      n_(rows.global_size()),
      local_rows_(rows.local_size()),
      local_cols_(cols.local_size()),
      lda_(lda),
      a_(a),
      a_single_(a_single),
      column_comm_(grid.comm().split(grid.mycol(), grid.myrow())),
      line_(rows.global_size(), rows.block_size(), grid.comm().rank(), grid.comm().size()) {
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
}

void BlockProduct::apply(const double* x, int ldx, int width, double* y, int ldy) {
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

}  // namespace kembed
