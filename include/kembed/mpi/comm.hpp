#pragma once
/// @file Communicator wrapper with explicit ownership.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kembed {

/// The MPI datatype of a float or double value.
template <class T>
MPI_Datatype mpi_datatype() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "float or double only");
  return std::is_same_v<T, float> ? MPI_FLOAT : MPI_DOUBLE;
}

/// A communicator that either borrows (MPI_COMM_WORLD) or owns (the result
/// of a split, freed in the destructor) its MPI handle. Move-only.
class Comm {
 public:
  /// Borrows MPI_COMM_WORLD.
  static Comm world() { return Comm(MPI_COMM_WORLD, false); }
  /// Borrows MPI_COMM_SELF (a rank's own work: a 1 x 1 grid for local tiles).
  static Comm self() { return Comm(MPI_COMM_SELF, false); }
  /// Takes ownership of `comm` (freed on destruction).
  static Comm adopt(MPI_Comm comm) { return Comm(comm, true); }

  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  Comm(Comm&& other) noexcept;
  Comm& operator=(Comm&& other) noexcept;
  ~Comm();

  MPI_Comm get() const { return comm_; }
  int rank() const;
  int size() const;
  bool is_root() const { return rank() == 0; }

  /// Collective: MPI_Comm_split into an owned communicator.
  Comm split(int color, int key) const;
  /// Collective: an owned duplicate (its own message space).
  Comm dup() const;
  /// Collective: the ranks that share this rank's node (owned).
  Comm split_shared() const;

  /// Seconds since an arbitrary point (MPI_Wtime).
  static double wtime();
  /// Ends the whole job with `code` (MPI_Abort on the world communicator).
  [[noreturn]] static void abort_world(int code);
  /// The MPI library's version string (MPI_Get_library_version).
  static std::string library_version();
  /// The MPI library's text for an error code (MPI_Error_string).
  static std::string error_text(int code);

  // Small typed collectives used throughout kembed.
  double max(double v) const;
  double min(double v) const;
  double sum(double v) const;
  long long max(long long v) const;
  long long min(long long v) const;
  long long sum(long long v) const;
  /// Sum modulo 2^64 (unsigned arithmetic wraps; used for hashes).
  std::uint64_t sum_modular(std::uint64_t v) const;
  /// In-place elementwise sum over all ranks; bitwise identical on every rank.
  void sum_in_place(std::vector<double>& v) const;
  /// In-place elementwise minimum / maximum over all ranks (exact, so identical everywhere).
  void min_in_place(std::vector<double>& v) const;
  void max_in_place(std::vector<double>& v) const;
  void min_in_place(std::vector<long long>& v) const;
  /// A value and the index it belongs to (MPI_DOUBLE_INT).
  struct ValueIndex {
    double value;
    int index;
  };
  /// In-place elementwise MINLOC: the smallest value, ties to the smallest index.
  void minloc_in_place(std::vector<ValueIndex>& v) const;
  void barrier() const;
  /// Broadcasts a string from `root`.
  void broadcast(std::string& s, int root = 0) const;
  /// Broadcasts `count` values of an arithmetic type from `root` into `data`.
  template <class T>
  void broadcast(T* data, std::size_t count, int root = 0) const {
    static_assert(std::is_trivially_copyable_v<T>, "broadcast of plain values only");
    broadcast_bytes(data, count * sizeof(T), root);
  }
  /// Broadcasts a vector from `root`; receivers are resized to its length.
  template <class T>
  void broadcast(std::vector<T>& v, int root = 0) const {
    long long len = static_cast<long long>(v.size());
    broadcast(&len, 1, root);
    v.resize(static_cast<std::size_t>(len));
    broadcast(v.data(), v.size(), root);
  }

  /// Collective: every rank's `local` values concatenated in rank order, on
  /// every rank (MPI_Allgatherv; sizes of any length, sent in chunks that fit
  /// MPI's int counts).
  template <class T>
  std::vector<T> allgatherv(const std::vector<T>& local) const {
    static_assert(std::is_trivially_copyable_v<T>, "allgatherv of plain values only");
    const auto bytes = allgatherv_bytes(local.data(), local.size() * sizeof(T));
    std::vector<T> all(bytes.size() / sizeof(T));
    if (!all.empty()) std::memcpy(all.data(), bytes.data(), bytes.size());
    return all;
  }

  /// Collective: personalized all-to-all (MPI_Alltoallv). `send` holds
  /// send_counts[0] values for rank 0, then send_counts[1] for rank 1, ...;
  /// `recv` receives recv_counts[r] values from rank r, in rank order. The
  /// counts must match pairwise (what r sends here is what this rank expects
  /// from r). Counts of any size: sent in rounds whose counts and
  /// displacements fit MPI's int (one round when they all do; every rank
  /// learns the number of rounds from one small reduction).
  template <class T>
  void alltoallv(const T* send, const std::vector<std::int64_t>& send_counts, T* recv,
                 const std::vector<std::int64_t>& recv_counts) const {
    static_assert(std::is_trivially_copyable_v<T>, "alltoallv of plain values only");
    alltoallv_bytes(send, send_counts, recv, recv_counts, sizeof(T));
  }
  /// Collective: the same with the receive counts exchanged first
  /// (MPI_Alltoall); returns what every rank sent this one, in rank order,
  /// and (if asked) how many values came from each rank.
  template <class T>
  std::vector<T> alltoallv(const std::vector<T>& send, const std::vector<std::int64_t>& send_counts,
                           std::vector<std::int64_t>* received_counts = nullptr) const {
    std::vector<std::int64_t> counts = alltoall_counts(send_counts);
    std::int64_t total = 0;
    for (std::int64_t c : counts) total += c;
    std::vector<T> recv(static_cast<std::size_t>(total));
    alltoallv(send.data(), send_counts, recv.data(), counts);
    if (received_counts) *received_counts = std::move(counts);
    return recv;
  }
  /// Collective: one count per rank sent, one received from each (MPI_Alltoall).
  std::vector<std::int64_t> alltoall_counts(const std::vector<std::int64_t>& send_counts) const;

  /// Collective: every rank's `local` concatenated in rank order on `root`;
  /// an empty vector on the other ranks (no copy of the whole there).
  template <class T>
  std::vector<T> gatherv(const std::vector<T>& local, int root = 0) const {
    static_assert(std::is_trivially_copyable_v<T>, "gatherv of plain values only");
    const auto bytes = gatherv_bytes(local.data(), local.size() * sizeof(T), root);
    std::vector<T> all(bytes.size() / sizeof(T));
    if (!all.empty()) std::memcpy(all.data(), bytes.data(), bytes.size());
    return all;
  }

 private:
  std::vector<char> allgatherv_bytes(const void* data, std::size_t bytes) const;
  std::vector<char> gatherv_bytes(const void* data, std::size_t bytes, int root) const;
  void alltoallv_bytes(const void* send, const std::vector<std::int64_t>& send_counts, void* recv,
                       const std::vector<std::int64_t>& recv_counts, std::size_t value_bytes) const;
  /// Both: onto `root`, or onto every rank when root is kAllRanks.
  static constexpr int kAllRanks = -1;
  std::vector<char> gather_bytes(const void* data, std::size_t bytes, int root) const;
  /// Broadcast of raw bytes in chunks that fit MPI's int counts.
  void broadcast_bytes(void* data, std::size_t bytes, int root) const;
  Comm(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {}
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool owned_ = false;
};

}  // namespace kembed
