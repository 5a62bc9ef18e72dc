#pragma once
/// @file Private: a 2-D float64 or float32 dataset of an HDF5 file, read by
/// every rank in parallel through HDF5's MPI-IO driver (each rank reads only
/// the hyperslabs of its rows), and the matching parallel writer. Every HDF5
/// call of kembed is in hdf5_matrix_file.cpp.
#include <memory>
#include <string>
#include <vector>

#include "kembed/io/matrix_file.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::io {

/// Collective handle to one dataset. The first read opens the file and keeps
/// it open (block-cyclic layouts read stripe after stripe, and opening is a
/// collective metadata read each time); destruction closes it, collectively.
class Hdf5MatrixFile final : public MatrixFile {
 public:
  /// Collective: opens `path` and checks `dataset` (rank 2, floating point
  /// of 4 or 8 bytes). An empty `dataset` means the file's only dataset.
  /// Errors (not HDF5, missing dataset with the ones the file has, a dangling
  /// soft or external link with its target, wrong rank or type, never
  /// written, a filter this HDF5 cannot decode, a virtual dataset's missing
  /// source file) name the file and the dataset and are agreed step by step,
  /// so no rank is ever left alone inside a collective HDF5 call.
  static std::unique_ptr<Hdf5MatrixFile> open(const Comm& comm, const std::string& path, std::string dataset);

  std::string format() const override { return "h5"; }
  /// Collective: one collective H5Dread of this rank's rows (an independent
  /// one for the datasets parallel HDF5 cannot read collectively), selected
  /// as one regular hyperslab per group of evenly spaced runs
  /// (regular_groups()), converted to float64 by HDF5. Chunks never written
  /// read as the dataset's fill value, as h5py reads them.
  std::vector<double> read_rows(const std::vector<RowRange>& ranges) override;
  /// Collective: the ranks of a process row each read a contiguous piece of
  /// its rows (read_rows) and exchange the columns, so each entry of the
  /// dataset is read once over all ranks.
  void read_block_cyclic(const BlockCyclicLayout& layout, const LocalRowsSink& sink) override;
  ~Hdf5MatrixFile() override;

 private:
  Hdf5MatrixFile(Comm comm, std::string path, std::string dataset, std::int64_t rows, std::int64_t cols,
                 bool independent);
  Comm comm_;  ///< private duplicate of the opening communicator
  std::string dataset_;
  /// Each rank reads through its own POSIX handle instead of one collective
  /// MPI-IO read: virtual datasets, chunks never written, filters, external
  /// raw files (parallel HDF5 1.10 fails on them through MPI-IO).
  bool independent_ = false;
  std::int64_t file_ = -1, set_ = -1;  ///< HDF5 identifiers (hid_t) once read_rows opened them
};

/// Serial, best effort: the files other than `path` that HDF5 reads when it
/// reads `dataset` of `path` (every dataset of the file when empty): the
/// files external links on the way lead to (as HDF5 found them), the source
/// files of a virtual dataset and the raw files of external storage (each
/// where HDF5 may look for it), those that exist. Nothing is thrown; what
/// cannot be opened is left out (opening the input reports it).
std::vector<std::string> hdf5_files_behind(const std::string& path, const std::string& dataset);

}  // namespace kembed::io
