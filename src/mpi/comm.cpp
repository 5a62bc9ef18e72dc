#include "kembed/mpi/comm.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
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

Comm Comm::dup() const {
  MPI_Comm out = MPI_COMM_NULL;
  MPI_Comm_dup(comm_, &out);
  return Comm::adopt(out);
}

Comm Comm::split_shared() const {
  MPI_Comm out = MPI_COMM_NULL;
  MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank(), MPI_INFO_NULL, &out);
  return Comm::adopt(out);
}

double Comm::wtime() { return MPI_Wtime(); }

void Comm::abort_world(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest.
}

std::string Comm::library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(text, &len);
  return std::string(text, static_cast<std::size_t>(std::max(0, len)));
}

std::string Comm::error_text(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<std::size_t>(std::max(length, 0)));
}

double Comm::min(double v) const {
  double r = 0;
  MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MIN, comm_);
  return r;
}

long long Comm::min(long long v) const {
  long long r = 0;
  MPI_Allreduce(&v, &r, 1, MPI_LONG_LONG, MPI_MIN, comm_);
  return r;
}

void Comm::min_in_place(std::vector<double>& v) const {
  if (!v.empty())
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_MIN, comm_);
}

void Comm::max_in_place(std::vector<double>& v) const {
  if (!v.empty())
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_MAX, comm_);
}

void Comm::min_in_place(std::vector<long long>& v) const {
  if (!v.empty())
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_LONG_LONG, MPI_MIN,
                  comm_);
}

void Comm::minloc_in_place(std::vector<ValueIndex>& v) const {
  static_assert(sizeof(ValueIndex) == sizeof(double) + sizeof(int) ||
                    sizeof(ValueIndex) == 2 * sizeof(double),
                "ValueIndex must match MPI_DOUBLE_INT");
  if (!v.empty())
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE_INT, MPI_MINLOC,
                  comm_);
}

void Comm::broadcast_bytes(void* data, std::size_t bytes, int root) const {
  auto* p = static_cast<char*>(data);
  constexpr std::size_t chunk = std::size_t{1} << 30;
  for (std::size_t done = 0; done < bytes; done += chunk)
    MPI_Bcast(p + done, static_cast<int>(std::min(chunk, bytes - done)), MPI_BYTE, root, comm_);
}

std::vector<char> Comm::allgatherv_bytes(const void* data, std::size_t bytes) const {
  return gather_bytes(data, bytes, kAllRanks);
}

std::vector<char> Comm::gatherv_bytes(const void* data, std::size_t bytes, int root) const {
  return gather_bytes(data, bytes, root);
}

std::vector<char> Comm::gather_bytes(const void* data, std::size_t bytes, int root) const {
  // Sizes first; then each rank's bytes in pieces below 2^30 so that every
  // count and displacement of one MPI_(All)gatherv fits in an int.
  const int p = size();
  std::vector<long long> sizes(static_cast<std::size_t>(p));
  const long long mine = static_cast<long long>(bytes);
  MPI_Allgather(&mine, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, comm_);
  std::vector<long long> offsets(static_cast<std::size_t>(p) + 1, 0);
  for (int r = 0; r < p; ++r) offsets[r + 1] = offsets[r] + sizes[r];
  const bool receiving = root == kAllRanks || root == rank();
  std::vector<char> all(receiving ? static_cast<std::size_t>(offsets[p]) : 0);
  const long long chunk = std::max(1LL, (1LL << 30) / p);  // p chunks per round fit an int
  const long long largest = *std::max_element(sizes.begin(), sizes.end());
  const auto* mine_bytes = static_cast<const char*>(data);
  std::vector<char> buffer;
  std::vector<int> counts(static_cast<std::size_t>(p)), displs(static_cast<std::size_t>(p));
  for (long long done = 0; done < largest; done += chunk) {
    int total = 0;
    for (int r = 0; r < p; ++r) {
      counts[r] = static_cast<int>(std::max(0LL, std::min(chunk, sizes[r] - done)));
      displs[r] = total;
      total += counts[r];
    }
    if (receiving) buffer.resize(static_cast<std::size_t>(total));
    const char* piece = mine_bytes + std::min(done, mine);
    if (root == kAllRanks)
      MPI_Allgatherv(piece, counts[rank()], MPI_BYTE, buffer.data(), counts.data(),
                     displs.data(), MPI_BYTE, comm_);
    else
      MPI_Gatherv(piece, counts[rank()], MPI_BYTE, buffer.data(), counts.data(), displs.data(),
                  MPI_BYTE, root, comm_);
    if (receiving)
      for (int r = 0; r < p; ++r)
        std::copy_n(buffer.data() + displs[r], counts[r], all.data() + offsets[r] + done);
  }
  return all;
}

std::vector<std::int64_t> Comm::alltoall_counts(const std::vector<std::int64_t>& send_counts) const {
  std::vector<long long> out(send_counts.begin(), send_counts.end()),
      in(static_cast<std::size_t>(size()));
  MPI_Alltoall(out.data(), 1, MPI_LONG_LONG, in.data(), 1, MPI_LONG_LONG, comm_);
  return std::vector<std::int64_t>(in.begin(), in.end());
}

void Comm::alltoallv_bytes(const void* send, const std::vector<std::int64_t>& send_counts,
                           void* recv, const std::vector<std::int64_t>& recv_counts,
                           std::size_t value_bytes) const {
  // Counts are in values of `value_bytes` (a contiguous datatype), so a round
  // holds up to 2^31 - 1 values per rank in all; pieces of at most `chunk`
  // values per pair and round keep every displacement below that.
  const int p = size();
  const auto* out = static_cast<const char*>(send);
  auto* in = static_cast<char*>(recv);
  std::int64_t largest = 0, sent = 0, received = 0;
  for (int r = 0; r < p; ++r) {
    largest = std::max({largest, send_counts[r], recv_counts[r]});
    sent += send_counts[r];
    received += recv_counts[r];
  }
  MPI_Datatype value = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(static_cast<int>(value_bytes), MPI_BYTE, &value);
  MPI_Type_commit(&value);
  const bool fits = sent <= INT_MAX && received <= INT_MAX;
  const long long need = fits ? 0 : 1;
  long long any_large = 0;
  MPI_Allreduce(&need, &any_large, 1, MPI_LONG_LONG, MPI_MAX, comm_);
  std::vector<int> sc(static_cast<std::size_t>(p)), sd(sc.size()), rc(sc.size()), rd(sc.size());
  if (any_large == 0) {
    int s = 0, r = 0;
    for (int q = 0; q < p; ++q) {
      sc[q] = static_cast<int>(send_counts[q]), sd[q] = s, s += sc[q];
      rc[q] = static_cast<int>(recv_counts[q]), rd[q] = r, r += rc[q];
    }
    MPI_Alltoallv(send, sc.data(), sd.data(), value, recv, rc.data(), rd.data(), value, comm_);
  } else {
    const long long chunk = std::max(1LL, static_cast<long long>(INT_MAX) / p);
    long long most = static_cast<long long>(largest), rounds_max = 0;
    MPI_Allreduce(&most, &rounds_max, 1, MPI_LONG_LONG, MPI_MAX, comm_);
    std::vector<std::int64_t> send_at(sc.size()), recv_at(sc.size());
    for (int q = 1; q < p; ++q) {
      send_at[q] = send_at[q - 1] + send_counts[q - 1];
      recv_at[q] = recv_at[q - 1] + recv_counts[q - 1];
    }
    std::vector<char> out_piece, in_piece;
    for (long long done = 0; done < rounds_max; done += chunk) {
      int s = 0, r = 0;
      for (int q = 0; q < p; ++q) {
        sc[q] = static_cast<int>(std::max(0LL, std::min<long long>(chunk, send_counts[q] - done)));
        rc[q] = static_cast<int>(std::max(0LL, std::min<long long>(chunk, recv_counts[q] - done)));
        sd[q] = s, s += sc[q];
        rd[q] = r, r += rc[q];
      }
      out_piece.resize(std::size_t(s) * value_bytes);
      in_piece.resize(std::size_t(r) * value_bytes);
      for (int q = 0; q < p; ++q)
        std::copy_n(out + (send_at[q] + done) * value_bytes, std::size_t(sc[q]) * value_bytes,
                    out_piece.data() + std::size_t(sd[q]) * value_bytes);
      MPI_Alltoallv(out_piece.data(), sc.data(), sd.data(), value, in_piece.data(), rc.data(),
                    rd.data(), value, comm_);
      for (int q = 0; q < p; ++q)
        std::copy_n(in_piece.data() + std::size_t(rd[q]) * value_bytes,
                    std::size_t(rc[q]) * value_bytes, in + (recv_at[q] + done) * value_bytes);
    }
  }
  MPI_Type_free(&value);
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

std::uint64_t Comm::sum_modular(std::uint64_t v) const {
  std::uint64_t r = 0;
  MPI_Allreduce(&v, &r, 1, MPI_UINT64_T, MPI_SUM, comm_);
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
