#include "kembed/linalg/cross_product.hpp"

#include <mpi.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kembed/core/error.hpp"
#include "kembed/linalg/block_cyclic.hpp"
#include "kembed/linalg/lapack.hpp"
#include "kembed/linalg/scalapack.hpp"

namespace kembed {

bool cross_product_is_local(char trans, const DistMatrix& a) {
  const BlacsGrid& grid = a.grid();
  const int ranks = grid.comm().size();
  if (trans == 'T')
    return grid.npcol() == 1 && a.cols() * ranks <= std::max<std::int64_t>(a.rows(), 1);
  return grid.nprow() == 1 && a.rows() * ranks <= std::max<std::int64_t>(a.cols(), 1);
}

void cross_product(char trans, double alpha, const DistMatrix& a, DistMatrix& c) {
  const std::int64_t order = trans == 'T' ? a.cols() : a.rows();
  if (c.grid().context() != a.grid().context() || c.rows() != order || c.cols() != order)
    throw Error("cross_product: C must be " + std::to_string(order) + " x " +
                std::to_string(order) + " on A's grid");
  if (!cross_product_is_local(trans, a)) {
    if (trans == 'T')
      scalapack::gemm('T', 'N', alpha, a, a, 0.0, c);
    else
      scalapack::gemm('N', 'T', alpha, a, a, 0.0, c);
    return;
  }
  const Comm& comm = a.grid().comm();
  const int m = static_cast<int>(c.rows());
  // This rank's partial sum, lower triangle, then mirrored.
  std::vector<double> partial(std::size_t(m) * m, 0.0);
  if (trans == 'T' && a.local_rows() > 0)
    lapack::syrk_lower_transposed(m, a.local_rows(), alpha, a.data(), a.ld(), 0.0,
                                  partial.data(), m);
  if (trans == 'N' && a.local_cols() > 0)
    lapack::syrk_lower(m, a.local_cols(), alpha, a.data(), a.ld(), 0.0, partial.data(), m);
  for (int j = 0; j < m; ++j)
    for (int i = j + 1; i < m; ++i)
      partial[std::size_t(i) * m + j] = partial[std::size_t(j) * m + i];

  // Pack each rank's block of C (its rows and columns of the block-cyclic
  // layout, column-major) in rank order, for one reduce-scatter.
  const BlacsGrid& grid = c.grid();
  const int ranks = comm.size();
  std::vector<int> counts(ranks);
  std::vector<double> send;
  send.reserve(partial.size());
  for (int r = 0; r < ranks; ++r) {
    // Ranks are laid out row-major on the grid.
    const BlockCyclic1D rows(m, c.row_dist().block_size(), r / grid.npcol(), grid.nprow());
    const BlockCyclic1D cols(m, c.col_dist().block_size(), r % grid.npcol(), grid.npcol());
    counts[r] = rows.local_size() * cols.local_size();
    const std::vector<IndexRange> row_ranges = rows.owned_ranges();
    for (int lj = 0; lj < cols.local_size(); ++lj) {
      const double* column = partial.data() + std::size_t(cols.to_global(lj)) * m;
      for (const IndexRange& range : row_ranges)
        send.insert(send.end(), column + range.begin, column + range.end);
    }
  }
  std::vector<double> mine(std::size_t(std::max(counts[comm.rank()], 1)));
  MPI_Reduce_scatter(send.data(), mine.data(), counts.data(), MPI_DOUBLE, MPI_SUM, comm.get());
  const int lr = c.local_rows();
  for (int lj = 0; lj < c.local_cols(); ++lj)
    std::copy_n(mine.data() + std::size_t(lj) * lr, lr, c.data() + std::size_t(lj) * c.ld());
}

}  // namespace kembed
