#include "kembed/linalg/block_cyclic.hpp"

#include <algorithm>

#include "kembed/core/error.hpp"

namespace kembed {

BlockCyclic1D::BlockCyclic1D(std::int64_t n, int nb, int iproc, int nprocs)
    : n_(n), nb_(nb), iproc_(iproc), nprocs_(nprocs) {
  if (nb <= 0) throw Error("block size must be positive");
  const std::int64_t nblocks = (n + nb - 1) / nb;
  const std::int64_t my_blocks = nblocks / nprocs + (iproc < nblocks % nprocs ? 1 : 0);
  std::int64_t count = my_blocks * nb;
  // The last block may be partial; it belongs to (nblocks - 1) % nprocs.
  if (nblocks > 0 && (nblocks - 1) % nprocs == iproc) count -= nblocks * nb - n;
  local_size_ = static_cast<int>(count);
}

std::vector<IndexRange> BlockCyclic1D::owned_ranges() const {
  std::vector<IndexRange> ranges;
  for (std::int64_t start = std::int64_t{iproc_} * nb_; start < n_;
       start += std::int64_t{nb_} * nprocs_)
    ranges.push_back({start, std::min(start + nb_, n_)});
  return ranges;
}

}  // namespace kembed
