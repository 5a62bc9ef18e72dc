#include "kembed/linalg/block_product.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "kembed/core/error.hpp"
#include "kembed/linalg/lapack.hpp"

namespace kembed {

namespace {

int checked_count(std::int64_t v) {
  if (v > std::numeric_limits<int>::max())
    throw Error("block product: " + std::to_string(v) + " values exceed MPI's int counts");
  return static_cast<int>(v);
}

}  // namespace

BlockProduct::BlockProduct(const DistMatrix& a)
    : a_(&a),
      column_comm_(a.grid().comm().split(a.grid().mycol(), a.grid().myrow())),
      line_(a.rows(), a.row_dist().block_size(), a.grid().comm().rank(), a.grid().comm().size()) {
  if (a.rows() != a.cols() || a.row_dist().block_size() != a.col_dist().block_size())
    throw Error("block product: the matrix must be square with square blocks");
  const BlacsGrid& grid = a.grid();
  const std::int64_t n = a.rows();
  const int nb = a.row_dist().block_size();
  const int ranks = grid.comm().size();
  // Line block t lives on rank t mod (P Q), whose process column is t mod Q:
  // the rows matching this process column's columns of A are exactly the
  // line rows of the ranks in this process column.
  for (int p = 0; p < grid.nprow(); ++p)
    column_lines_.emplace_back(n, nb, p * grid.npcol() + grid.mycol(), ranks);
  for (const BlockCyclic1D& line : column_lines_)
    for (int l = 0; l < line.local_size(); ++l)
      gathered_to_local_col_.push_back(a.col_dist().to_local(line.to_global(l)));
  agree(grid.comm(), static_cast<int>(gathered_to_local_col_.size()) == a.local_cols()
                         ? ""
                         : "block product: the grid's rank order is not row-major");

  for (int r = 0; r < ranks; ++r)
    scatter_counts_.push_back(BlockCyclic1D(n, nb, r, ranks).local_size());
  for (int li = 0; li < a.local_rows(); ++li) {
    const std::int64_t g = a.row_dist().to_global(li);
    receiver_.push_back(line_.owner(g));
    // to_local does not depend on which process asks.
    receiver_row_.push_back(line_.to_local(g));
  }
}

void BlockProduct::apply(const double* x, int ldx, int width, double* y, int ldy) {
  const DistMatrix& a = *a_;
  const Comm& comm = a.grid().comm();
  const int mine = line_rows(), lr = a.local_rows(), lc = a.local_cols();
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

  // 2. One dgemm over the whole local block A[R_p, C_q]: its partial sum of
  //    the rows R_p of A X.
  product_.resize(std::size_t(std::max(lr, 1)) * width);
  if (lr > 0) {
    if (lc > 0)
      lapack::gemm('N', 'N', lr, width, lc, 1.0, a.data(), a.ld(), gathered_.data(), lc, 0.0,
                   product_.data(), lr);
    else
      std::fill(product_.begin(), product_.end(), 0.0);
  }

  // 3. Sum the partial products; each rank receives its own line rows. The
  //    buffer is ordered by receiving rank, each rank's rows column-major.
  const std::int64_t n = a.rows();
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
