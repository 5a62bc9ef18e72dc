#include "kembed/distribute/read_distributed.hpp"

#include <algorithm>

namespace kembed::distribute {

std::vector<double> read_panel(io::MatrixFile& file, const BlockCyclic1D& dist) {
  return file.read_rows(dist.owned_ranges());
}

void read_block_cyclic(io::MatrixFile& file, DistMatrix& k) {
  const io::BlockCyclicLayout layout{k.row_dist().block_size(), k.col_dist().block_size(), k.grid().nprow(),
                                     k.grid().npcol(),          k.grid().myrow(),             k.grid().mycol()};
  const int local_cols = k.local_cols();
  file.read_block_cyclic(layout, [&](std::int64_t first, std::int64_t count, const double* values) {
    for (int lj = 0; lj < local_cols; ++lj)
      std::copy_n(values + std::int64_t{lj} * count, count, &k.local(static_cast<int>(first), lj));
  });
}

}  // namespace kembed::distribute
