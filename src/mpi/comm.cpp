#include "kembed/mpi/comm.hpp"

#include <utility>

namespace kembed {

Comm::Comm(Comm&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)), owned_(std::exchange(other.owned_, false)) {}

Comm& Comm::operator=(Comm&& other) noexcept {
  if (this != &other) {
    if (owned_ && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    owned_ = std::exchange(other.owned_, false);
  }
  return *this;
}

Comm::~Comm() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owned_ && comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
}

int Comm::rank() const {
  int r = 0;
  MPI_Comm_rank(comm_, &r);
  return r;
}

int Comm::size() const {
  int s = 0;
  MPI_Comm_size(comm_, &s);
  return s;
}

Comm Comm::split(int color, int key) const {
  MPI_Comm out = MPI_COMM_NULL;
  MPI_Comm_split(comm_, color, key, &out);
  return Comm::adopt(out);
}

double Comm::max(double v) const {
  double r = 0;
  MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, comm_);
  return r;
}

double Comm::sum(double v) const {
  std::vector<double> one{v};
  sum_in_place(one);
  return one[0];
}

long long Comm::max(long long v) const {
  long long r = 0;
  MPI_Allreduce(&v, &r, 1, MPI_LONG_LONG, MPI_MAX, comm_);
  return r;
}

long long Comm::sum(long long v) const {
  long long r = 0;
  MPI_Allreduce(&v, &r, 1, MPI_LONG_LONG, MPI_SUM, comm_);
  return r;
}

void Comm::sum_in_place(std::vector<double>& v) const {
  if (v.empty()) return;
  // Reduce then broadcast rather than Allreduce: an allreduce may sum in a
  // different order on each rank, and kembed's ranks must take identical
  // decisions from identical numbers.
  const int count = static_cast<int>(v.size());
  if (rank() == 0)
    MPI_Reduce(MPI_IN_PLACE, v.data(), count, MPI_DOUBLE, MPI_SUM, 0, comm_);
  else
    MPI_Reduce(v.data(), nullptr, count, MPI_DOUBLE, MPI_SUM, 0, comm_);
  MPI_Bcast(v.data(), count, MPI_DOUBLE, 0, comm_);
}

void Comm::barrier() const { MPI_Barrier(comm_); }

void Comm::broadcast(std::string& s, int root) const {
  long long len = static_cast<long long>(s.size());
  MPI_Bcast(&len, 1, MPI_LONG_LONG, root, comm_);
  s.resize(static_cast<std::size_t>(len));
  if (len > 0) MPI_Bcast(s.data(), static_cast<int>(len), MPI_CHAR, root, comm_);
}

}  // namespace kembed
