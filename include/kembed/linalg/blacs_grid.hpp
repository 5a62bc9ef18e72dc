#pragma once
/// @file A P x Q BLACS process grid that owns its context.
#include <utility>

#include "kembed/mpi/comm.hpp"

namespace kembed {

/// Owns a BLACS context over a duplicate of a communicator; ranks are laid
/// out row-major (rank = myrow * npcol + mycol). Move-only; the context is
/// released (gridexit) on destruction, which must happen before MPI_Finalize.
class BlacsGrid {
 public:
  /// Collective over `comm`. @pre nprow * npcol == comm.size()
  BlacsGrid(const Comm& comm, int nprow, int npcol);
  /// Collective: the near-square grid of near_square(comm.size()).
  explicit BlacsGrid(const Comm& comm);
  BlacsGrid(const BlacsGrid&) = delete;
  BlacsGrid& operator=(const BlacsGrid&) = delete;
  BlacsGrid(BlacsGrid&& other) noexcept;
  BlacsGrid& operator=(BlacsGrid&&) = delete;
  ~BlacsGrid();

  /// P x Q with P * Q == nprocs, P <= Q and P as large as possible.
  static std::pair<int, int> near_square(int nprocs);

  int context() const { return context_; }
  int nprow() const { return nprow_; }
  int npcol() const { return npcol_; }
  int myrow() const { return myrow_; }
  int mycol() const { return mycol_; }
  /// All ranks of the grid.
  const Comm& comm() const { return comm_; }

 private:
  Comm comm_;
  int handle_ = -1;
  int context_ = -1;
  int nprow_ = 0, npcol_ = 0, myrow_ = -1, mycol_ = -1;
};

}  // namespace kembed
