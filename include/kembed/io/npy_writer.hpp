#pragma once
/// @file NumPy .npy files written in parallel: each rank writes its own rows
/// with MPI-IO into a temporary file that is renamed only when complete.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kembed/mpi/comm.hpp"

namespace kembed::io {

/// The full .npy v1.0 header (magic, version, length, dictionary) for a
/// C-ordered little-endian float64 ('<f8') matrix of `rows` x `cols`, padded
/// with spaces and ended by '\n' so that its length, and so the offset of the
/// first value, is a multiple of 64 bytes. @pre rows >= 0, cols >= 0
std::string npy_header_f8(std::int64_t rows, std::int64_t cols);
/// The same header for a 1-D float64 vector of shape (length,), as numpy
/// writes a 1-D array. @pre length >= 0
std::string npy_vector_header_f8(std::int64_t length);

/// Collective writer of a rows x cols float64 .npy file.
///
/// The data go to a hidden temporary file in the same directory
/// (".NAME.tmp-PID", PID of rank 0); commit() renames it to `path` after every
/// rank has written and synced, so readers never see a partial file and a
/// failed run leaves none behind (an uncommitted writer deletes its temporary
/// file). Every error is agreed, so all ranks throw the same kembed::Error.
/// Move-only in spirit: neither copyable nor movable, it owns an MPI_File.
class NpyWriter {
 public:
  /// Collective: checks that `path` ends in .npy, is not a directory and that
  /// its directory exists and is writable; opens the temporary file and has
  /// rank 0 write the header. Requires a little-endian host.
  NpyWriter(const Comm& comm, std::string path, std::int64_t rows, std::int64_t cols);
  NpyWriter(const NpyWriter&) = delete;
  NpyWriter& operator=(const NpyWriter&) = delete;
  /// Collective when not committed (every rank unwinds the same agreed
  /// error): closes and deletes the temporary file.
  ~NpyWriter();

  /// Collective: each rank writes its rows [first_row, first_row +
  /// values.size() / cols) at byte offset header + first_row * cols * 8 with
  /// independent MPI_File_write_at calls (its rows are one contiguous piece),
  /// then the ranks agree on errors. Every rank must call it the same number
  /// of times; a rank with nothing to write passes an empty vector.
  /// @pre values.size() is a multiple of cols; the rows are inside the matrix.
  void write_rows(std::int64_t first_row, const std::vector<double>& values);

  /// Collective: syncs and closes the file, then rank 0 renames it to the
  /// final path after a barrier. Call once, after the last write_rows.
  void commit();

  const std::string& path() const { return path_; }
  std::int64_t header_bytes() const { return header_bytes_; }

 private:
  const Comm& comm_;
  std::string path_;
  std::string temp_;
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  std::int64_t header_bytes_ = 0;
  MPI_File file_ = MPI_FILE_NULL;
  bool committed_ = false;
};

/// Collective convenience: writes the whole matrix when each rank holds one
/// contiguous block of rows starting at `first_row` (possibly empty).
void write_npy(const Comm& comm, const std::string& path, std::int64_t rows, std::int64_t cols,
               std::int64_t first_row, const std::vector<double>& values);

}  // namespace kembed::io
