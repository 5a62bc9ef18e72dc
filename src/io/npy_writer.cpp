#include "kembed/io/npy_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>

#include "io/read_only_file.hpp"
#include "kembed/core/error.hpp"

namespace fs = std::filesystem;

namespace kembed::io {

namespace {

/// Largest byte count handed to one MPI-IO call (MPI counts are ints).
constexpr std::int64_t max_chunk_bytes = std::int64_t{1} << 30;

/// Serial (rank 0): the checks that can fail before any data is produced.
void check_npy_output(const std::string& path) {
  if (path.empty()) throw Error("no output file given (--output FILE.npy)");
  const fs::path p(path);
  if (p.extension() != ".npy")
    throw Error("output file '" + path + "' must end in .npy (kembed writes NumPy float64 files)");
  std::error_code ec;
  if (fs::is_directory(p, ec)) throw Error("output file '" + path + "' is a directory");
  // kembed never overwrites a file it cannot tell it wrote.
  if (fs::exists(fs::symlink_status(p, ec)))
    throw Error("output file '" + path + "' exists; kembed does not overwrite files: remove it "
                "or choose another name");
  const fs::path parent = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  if (!fs::is_directory(parent, ec))
    throw Error("cannot write '" + path + "': directory '" + parent.string() + "' does not exist");
  if (::access(parent.c_str(), W_OK | X_OK) != 0)
    throw Error("cannot write '" + path + "': directory '" + parent.string() + "' is not writable");
}

/// Serial: fsync a directory so a rename in it is durable.
void sync_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;  // durability is best effort; the rename itself succeeded
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

namespace {

// The header for a float64 C-order array of shape `shape`, the Python tuple
// text "(37, 5)" or "(3,)".
std::string npy_header_for_shape(const std::string& shape) {
  std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }";
  // magic (6) + version (2) + header length (2) = 10 bytes before the dictionary,
  // which is padded with spaces and ends in '\n'.
  const std::size_t preamble = 10;
  const std::size_t unpadded = preamble + dict.size() + 1;
  const std::size_t total = (unpadded + 63) / 64 * 64;
  dict.append(total - unpadded, ' ');
  dict.push_back('\n');
  const std::size_t header_len = dict.size();  // < 65536 for any int64 shape
  std::string out = "\x93NUMPY";
  out.push_back('\x01');
  out.push_back('\x00');
  out.push_back(static_cast<char>(header_len & 0xff));
  out.push_back(static_cast<char>((header_len >> 8) & 0xff));
  return out + dict;
}

}  // namespace

std::string npy_header_f8(std::int64_t rows, std::int64_t cols) {
  return npy_header_for_shape("(" + std::to_string(rows) + ", " + std::to_string(cols) + ")");
}

std::string npy_vector_header_f8(std::int64_t length) {
  return npy_header_for_shape("(" + std::to_string(length) + ",)");
}

NpyWriter::NpyWriter(const Comm& comm, std::string path, std::int64_t rows, std::int64_t cols)
    : comm_(comm), path_(std::move(path)), rows_(rows), cols_(cols) {
  const std::string header = npy_header_f8(rows_, cols_);
  header_bytes_ = static_cast<std::int64_t>(header.size());
  collectively(comm_, [&] {
    if (rows_ < 0 || cols_ < 1) throw Error(path_ + ": invalid shape");
    if (rows_ > (std::numeric_limits<std::int64_t>::max() - header_bytes_) / 8 / cols_)
      throw Error(path_ + ": " + std::to_string(rows_) + " x " + std::to_string(cols_) + " is too large");
    if (!comm_.is_root()) return;
    if (!host_is_little_endian())
      throw Error(path_ + ": .npy files can only be written on little-endian machines");
    check_npy_output(path_);
    const fs::path p(path_);
    temp_ = (p.parent_path() / ("." + p.filename().string() + ".tmp-" + std::to_string(::getpid()))).string();
    ::unlink(temp_.c_str());  // a stale one from an earlier, killed run
  });
  comm_.broadcast(temp_);

  const int open_rc = MPI_File_open(comm_.get(), temp_.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY,
                                    MPI_INFO_NULL, &file_);
  // If some ranks opened it and others did not, the handles are left alone:
  // closing is collective and the failed ranks have nothing to close.
  if (open_rc != MPI_SUCCESS) file_ = MPI_FILE_NULL;
  const std::string open_error =
      open_rc == MPI_SUCCESS ? "" : "cannot create '" + temp_ + "': " + Comm::error_text(open_rc);
  std::string error;
  try {
    agree(comm_, open_error);
  } catch (const Error&) {
    if (comm_.is_root()) ::unlink(temp_.c_str());
    throw;
  }

  // From here on the destructor cleans up, so every failure can simply throw.
  try {
    const MPI_Offset total = header_bytes_ + rows_ * cols_ * 8;
    const int size_rc = MPI_File_set_size(file_, total);
    agree(comm_, size_rc == MPI_SUCCESS ? "" : "cannot write '" + temp_ + "': " + Comm::error_text(size_rc));
    if (comm_.is_root()) {
      MPI_Status status;
      const int rc = MPI_File_write_at(file_, 0, header.data(), static_cast<int>(header.size()), MPI_BYTE,
                                       &status);
      if (rc != MPI_SUCCESS) error = "cannot write '" + temp_ + "': " + Comm::error_text(rc);
    }
    agree(comm_, error);
  } catch (const Error&) {
    MPI_File_close(&file_);
    if (comm_.is_root()) ::unlink(temp_.c_str());
    throw;
  }
}

NpyWriter::~NpyWriter() {
  if (committed_) return;
  if (file_ != MPI_FILE_NULL) MPI_File_close(&file_);
  if (comm_.is_root() && !temp_.empty()) ::unlink(temp_.c_str());
}

void NpyWriter::write_rows(std::int64_t first_row, const std::vector<double>& values) {
  const auto count = static_cast<std::int64_t>(values.size());
  collectively(comm_, [&] {
    if (committed_) throw Error(path_ + ": write after commit");
    if (count % cols_ != 0 || first_row < 0 || first_row + count / cols_ > rows_)
      throw Error(path_ + ": rows [" + std::to_string(first_row) + ", " +
                  std::to_string(first_row + count / cols_) + ") are outside the matrix of " +
                  std::to_string(rows_) + " rows");
  });
  const std::int64_t bytes = count * 8;
  const char* data = reinterpret_cast<const char*>(values.data());
  const MPI_Offset offset = header_bytes_ + first_row * cols_ * 8;
  std::string error;
  std::int64_t done = 0;
  // Independent writes: each rank's rows are one contiguous piece of the
  // file, which collective two-phase I/O would only copy through an
  // aggregator's buffer once more. Errors are agreed below.
  while (done < bytes) {
    const int n = static_cast<int>(std::min(max_chunk_bytes, bytes - done));
    MPI_Status status;
    const int rc = MPI_File_write_at(file_, offset + done, data + done, n, MPI_BYTE, &status);
    int written = 0;
    if (rc == MPI_SUCCESS) MPI_Get_count(&status, MPI_BYTE, &written);
    if (error.empty() && rc != MPI_SUCCESS) error = "cannot write '" + temp_ + "': " + Comm::error_text(rc);
    if (error.empty() && written != n) error = "cannot write '" + temp_ + "': short write (disk full?)";
    if (!error.empty()) break;
    done += n;
  }
  agree(comm_, error);
}

void NpyWriter::commit() {
  const int sync_rc = MPI_File_sync(file_);
  const int close_rc = MPI_File_close(&file_);
  file_ = MPI_FILE_NULL;
  std::string error;
  if (sync_rc != MPI_SUCCESS) error = "cannot sync '" + temp_ + "': " + Comm::error_text(sync_rc);
  if (error.empty() && close_rc != MPI_SUCCESS)
    error = "cannot close '" + temp_ + "': " + Comm::error_text(close_rc);
  agree(comm_, error);
  // Every rank's data is on disk before rank 0 makes the file visible.
  comm_.barrier();
  collectively(comm_, [&] {
    if (!comm_.is_root()) return;
    // NOREPLACE: a file that appeared at path_ during the run is kept.
    if (::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE) != 0)
      throw Error("cannot rename '" + temp_ + "' to '" + path_ + "': " + std::strerror(errno));
    const fs::path parent = fs::path(path_).parent_path();
    sync_directory(parent.empty() ? fs::path(".") : parent);
  });
  committed_ = true;
}

void write_npy(const Comm& comm, const std::string& path, std::int64_t rows, std::int64_t cols,
               std::int64_t first_row, const std::vector<double>& values) {
  NpyWriter writer(comm, path, rows, cols);
  writer.write_rows(first_row, values);
  writer.commit();
}

}  // namespace kembed::io
