#pragma once
/// @file Index arithmetic of a 1-D block-cyclic distribution (source process 0).
#include <cstdint>
#include <vector>

#include "kembed/core/index_range.hpp"

namespace kembed {

/// How `n` global indices are dealt in blocks of `nb` over `nprocs` processes,
/// seen from process `iproc`. Global and local indices are 0-based.
class BlockCyclic1D {
 public:
  BlockCyclic1D(std::int64_t n, int nb, int iproc, int nprocs);

  std::int64_t global_size() const { return n_; }
  int block_size() const { return nb_; }
  /// Number of indices this process owns (ScaLAPACK's NUMROC).
  int local_size() const { return local_size_; }
  /// Process owning global index `g`.
  int owner(std::int64_t g) const { return static_cast<int>((g / nb_) % nprocs_); }
  bool is_local(std::int64_t g) const { return owner(g) == iproc_; }
  /// Local index of global `g`. @pre is_local(g)
  int to_local(std::int64_t g) const {
    return static_cast<int>((g / (std::int64_t{nb_} * nprocs_)) * nb_ + g % nb_);
  }
  /// Global index of local `l`. @pre 0 <= l < local_size()
  std::int64_t to_global(int l) const {
    return (std::int64_t{l} / nb_) * nb_ * nprocs_ + std::int64_t{iproc_} * nb_ + l % nb_;
  }
  /// The owned global indices as ascending contiguous ranges (one per block);
  /// their concatenation is the local index order.
  std::vector<IndexRange> owned_ranges() const;

 private:
  std::int64_t n_;
  int nb_, iproc_, nprocs_, local_size_;
};

}  // namespace kembed
