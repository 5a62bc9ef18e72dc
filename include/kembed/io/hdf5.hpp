#pragma once
/// @file What kembed does with HDF5 outside reading (reading is
/// open_matrix_file's): its version, and matrices written in parallel.
/// Without HDF5 (KEMBED_WITH_HDF5=OFF or no parallel HDF5 found) the
/// version is "" and creating a writer throws.
#include <cstdint>
#include <string>
#include <vector>

#include "kembed/mpi/comm.hpp"

namespace kembed::io {

/// The version of the parallel HDF5 library kembed was built with ("1.10.8"),
/// or "" when it was built without HDF5 (.h5 input and output unavailable).
std::string hdf5_version();

/// Collective writer of a rows x cols float64 dataset in a new HDF5 file,
/// through the MPI-IO driver, as io::NpyWriter writes .npy: into a hidden
/// temporary file beside `path` (".NAME.tmp-PID") that commit() renames to
/// `path` without replacing anything; an uncommitted writer deletes it.
/// Every error is agreed, so all ranks throw the same kembed::Error.
class Hdf5Writer {
 public:
  /// Collective: checks that `path` ends in .h5 or .hdf5, does not exist and
  /// that its directory is writable; creates the file and `dataset` (with
  /// its parent groups, e.g. "/X" or "/results/embedding").
  Hdf5Writer(const Comm& comm, std::string path, std::string dataset, std::int64_t rows, std::int64_t cols);
  Hdf5Writer(const Hdf5Writer&) = delete;
  Hdf5Writer& operator=(const Hdf5Writer&) = delete;
  /// Collective when not committed: closes and deletes the temporary file.
  ~Hdf5Writer();

  /// Collective: each rank writes its rows [first_row, first_row +
  /// values.size() / cols) in one collective H5Dwrite; a rank with nothing
  /// to write passes an empty vector. Every rank calls it equally often.
  void write_rows(std::int64_t first_row, const std::vector<double>& values);
  /// Collective: closes the file (HDF5 flushes it), then rank 0 renames it
  /// into place after a barrier. Call once, after the last write_rows.
  void commit();

 private:
  void close();
  const Comm& comm_;
  std::string path_, dataset_, temp_;
  std::int64_t rows_ = 0, cols_ = 0;
  std::int64_t file_ = -1, set_ = -1;  ///< HDF5 identifiers (hid_t)
  bool committed_ = false;
};

/// Collective convenience: writes the whole matrix when each rank holds one
/// contiguous block of rows starting at `first_row` (possibly empty).
void write_hdf5_matrix(const Comm& comm, const std::string& path, const std::string& dataset,
                       std::int64_t rows, std::int64_t cols, std::int64_t first_row,
                       const std::vector<double>& values);

/// Serial (one rank): makes the result file `path` (an existing .h5 that
/// kembed wrote) self-contained: the run report as the text attribute
/// "run.json" of its root group and, when not empty, the eigenvalues as the
/// 1-D dataset "/eigenvalues". Throws Error naming the file.
void annotate_hdf5_result(const std::string& path, const std::string& report,
                          const std::vector<double>& eigenvalues);

}  // namespace kembed::io
