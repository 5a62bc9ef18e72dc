#include "kembed/distribute/read_distributed.hpp"

#include <algorithm>

namespace kembed::distribute {

std::vector<double> read_panel(io::MatrixFile& file, const BlockCyclic1D& dist) {
  return file.read_rows(dist.owned_ranges());
}

void read_block_cyclic(io::MatrixFile& file, DistMatrix& k) {
  const auto& rows = k.row_dist();
  const auto& cols = k.col_dist();
  const int nb = rows.block_size();
  const std::int64_t n = k.rows(), stride = std::int64_t{nb} * k.grid().nprow();
  // A rank's block rows come one stripe (nb x n) per step; many steps go into
  // one collective read of up to about 64 MB per rank, since each read has a
  // fixed cost (thousands of stripe-sized reads made reading a tall file
  // slow). Every rank makes the same number of reads; a rank whose blocks are
  // exhausted asks for nothing.
  const std::int64_t steps = (n + stride - 1) / stride;
  const std::int64_t stripe_bytes = std::int64_t{nb} * std::max<std::int64_t>(1, k.cols()) * 8;
  const std::int64_t group = std::max<std::int64_t>(1, (std::int64_t{64} << 20) / stripe_bytes);
  for (std::int64_t first = 0; first < steps; first += group) {
    std::vector<io::RowRange> want;
    for (std::int64_t step = first; step < std::min(steps, first + group); ++step) {
      const std::int64_t begin = step * stride + std::int64_t{k.grid().myrow()} * nb;
      if (begin < n) want.push_back({begin, std::min(begin + nb, n)});
    }
    const auto stripes = file.read_rows(want);
    std::size_t at = 0;
    for (const io::RowRange& range : want) {
      const int local_row0 = rows.to_local(range.begin);
      for (std::int64_t i = 0; i < range.size(); ++i, at += std::size_t(k.cols()))
        for (int lj = 0; lj < k.local_cols(); ++lj)
          k.local(local_row0 + static_cast<int>(i), lj) = stripes[at + cols.to_global(lj)];
    }
  }
}

}  // namespace kembed::distribute
