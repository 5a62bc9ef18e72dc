#include "kembed/linalg/row_blocks.hpp"

#include <algorithm>

#include "kembed/linalg/blacs_grid.hpp"

namespace kembed {

RowBlock contiguous_rows(const DistMatrix& a) {
  const Comm& comm = a.grid().comm();
  const std::int64_t m = a.rows(), n = a.cols();
  const int ranks = comm.size();
  const auto block = static_cast<int>(std::max<std::int64_t>(1, (m + ranks - 1) / ranks));
  // Rank r is process row r of a P x 1 grid (ranks are laid out row-major).
  const BlacsGrid column(comm, ranks, 1);
  DistMatrix rows(column, m, n, block, static_cast<int>(std::max<std::int64_t>(1, n)));
  copy(a, 0, 0, m, n, rows, 0, 0);
  RowBlock mine;
  mine.first_row = std::min<std::int64_t>(m, std::int64_t{block} * column.myrow());
  mine.rows = rows.local_rows();
  mine.values.resize(std::size_t(mine.rows) * std::size_t(n));
  for (int lj = 0; lj < rows.local_cols(); ++lj)
    for (int li = 0; li < rows.local_rows(); ++li)
      mine.values[std::size_t(li) * std::size_t(n) + std::size_t(lj)] = rows.local(li, lj);
  return mine;
}

}  // namespace kembed
