#include "kembed/linalg/blacs_grid.hpp"

#include <cstdint>
#include <string>

#include "fortran.hpp"
#include "kembed/core/error.hpp"

namespace kembed {

namespace {
Comm duplicate(const Comm& comm) {
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(comm.get(), &dup);
  return Comm::adopt(dup);
}
}  // namespace

BlacsGrid::BlacsGrid(const Comm& comm, int nprow, int npcol) : comm_(duplicate(comm)) {
  if (nprow < 1 || npcol < 1 || nprow * npcol != comm_.size())
    throw Error("process grid " + std::to_string(nprow) + "x" + std::to_string(npcol) +
                " does not match the " + std::to_string(comm_.size()) + " MPI ranks");
  handle_ = Csys2blacs_handle(comm_.get());
  context_ = handle_;
  Cblacs_gridinit(&context_, "Row", nprow, npcol);
  Cblacs_gridinfo(context_, &nprow_, &npcol_, &myrow_, &mycol_);
}

BlacsGrid::BlacsGrid(const Comm& comm)
    : BlacsGrid(comm, near_square(comm.size()).first, near_square(comm.size()).second) {}

BlacsGrid::BlacsGrid(BlacsGrid&& other) noexcept
    : comm_(std::move(other.comm_)),
      handle_(std::exchange(other.handle_, -1)),
      context_(std::exchange(other.context_, -1)),
      nprow_(other.nprow_),
      npcol_(other.npcol_),
      myrow_(other.myrow_),
      mycol_(other.mycol_) {}

BlacsGrid::~BlacsGrid() {
  if (context_ >= 0) Cblacs_gridexit(context_);
  if (handle_ >= 0) Cfree_blacs_system_handle(handle_);
}

std::pair<int, int> BlacsGrid::near_square(int nprocs) {
  int p = 1;
  for (int d = 1; std::int64_t{d} * d <= nprocs; ++d)  // d * d overflows int near 2^31
    if (nprocs % d == 0) p = d;
  return {p, nprocs / p};
}

}  // namespace kembed
