#pragma once
/// @file Communicator wrapper with explicit ownership.
#include <mpi.h>

#include <string>
#include <vector>

namespace kembed {

/// A communicator that either borrows (MPI_COMM_WORLD) or owns (the result
/// of a split, freed in the destructor) its MPI handle. Move-only.
class Comm {
 public:
  /// Borrows MPI_COMM_WORLD.
  static Comm world() { return Comm(MPI_COMM_WORLD, false); }
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

  // Small typed collectives used throughout kembed.
  double max(double v) const;
  double sum(double v) const;
  long long max(long long v) const;
  long long sum(long long v) const;
  /// In-place elementwise sum over all ranks; bitwise identical on every rank.
  void sum_in_place(std::vector<double>& v) const;
  void barrier() const;
  /// Broadcasts a string from `root`.
  void broadcast(std::string& s, int root = 0) const;

 private:
  Comm(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {}
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool owned_ = false;
};

}  // namespace kembed
