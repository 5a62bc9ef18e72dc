#include "io/binary_matrix_file.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>

#include "io/mpi_datatype.hpp"
#include "io/read_only_file.hpp"
#include "io/row_ranges.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/npy_header.hpp"

namespace kembed::io {

namespace {

/// Largest byte count handed to one MPI-IO call or one block of a file view
/// (MPI counts are ints).
constexpr std::int64_t max_chunk_bytes = std::int64_t{1} << 30;

/// Headers numpy writes are well under a kilobyte; anything huge is corrupt.
constexpr std::int64_t max_npy_header_bytes = std::int64_t{1} << 20;

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<std::size_t>(std::max(length, 0)));
}

void require_little_endian_host(const std::string& path) {
  if (!host_is_little_endian())
    throw Error(path + ": binary matrices can only be read on little-endian machines");
}

}  // namespace

std::unique_ptr<BinaryMatrixFile> BinaryMatrixFile::open_npy(const Comm& comm, const std::string& path) {
  Layout layout;
  collectively(comm, [&] {
    if (!comm.is_root()) return;
    require_little_endian_host(path);
    const ReadOnlyFile file(path);
    std::string bytes(static_cast<std::size_t>(std::min<std::int64_t>(file.size(), npy_preamble_max)), '\0');
    file.read_at(0, bytes.data(), static_cast<std::int64_t>(bytes.size()));
    const std::int64_t header_size = npy_header_size(bytes, path);
    if (header_size > file.size())
      throw Error(path + ": truncated .npy header (needs " + std::to_string(header_size) +
                  " bytes, file has " + std::to_string(file.size()) + ")");
    if (header_size > max_npy_header_bytes)
      throw Error(path + ": .npy header of " + std::to_string(header_size) + " bytes is implausibly large");
    bytes.resize(static_cast<std::size_t>(header_size));
    file.read_at(0, bytes.data(), header_size);
    const NpyHeader header = parse_npy_header(bytes, path);
    const std::int64_t expected = header.data_offset + header.rows * header.cols * header.item_size;
    if (file.size() != expected)
      throw Error(path + ": .npy file has " + std::to_string(file.size()) + " bytes, but its header (" +
                  std::to_string(header.rows) + " x " + std::to_string(header.cols) + ", '" + header.descr +
                  "') needs " + std::to_string(expected) + " bytes (file " +
                  (file.size() < expected ? "truncated" : "has extra data") + ")");
    layout = Layout{header.rows, header.cols, header.data_offset, header.item_size};
  });
  return share(comm, path, layout, "npy");
}

std::unique_ptr<BinaryMatrixFile> BinaryMatrixFile::open_bin(const Comm& comm, const std::string& path,
                                                             const FileHints& hints) {
  Layout layout;
  collectively(comm, [&] {
    if (!comm.is_root()) return;
    if (hints.rows <= 0 || hints.cols <= 0)
      throw Error(path + ": .bin input needs --rows and --cols (both > 0)");
    require_little_endian_host(path);
    if (hints.rows > std::numeric_limits<std::int64_t>::max() / 8 / hints.cols)
      throw Error(path + ": --rows " + std::to_string(hints.rows) + " --cols " + std::to_string(hints.cols) +
                  " is too large");
    const ReadOnlyFile file(path);
    const std::int64_t expected = hints.rows * hints.cols * 8;
    if (file.size() != expected)
      throw Error(path + ": .bin file has " + std::to_string(file.size()) + " bytes, but --rows " +
                  std::to_string(hints.rows) + " --cols " + std::to_string(hints.cols) + " needs " +
                  std::to_string(expected) + " bytes (rows x cols x 8)");
    layout = Layout{hints.rows, hints.cols, 0, 8};
  });
  return share(comm, path, layout, "bin");
}

std::unique_ptr<BinaryMatrixFile> BinaryMatrixFile::share(const Comm& comm, const std::string& path,
                                                          Layout layout, const std::string& format) {
  long long fields[4] = {layout.rows, layout.cols, layout.data_offset, layout.item_size};
  MPI_Bcast(fields, 4, MPI_LONG_LONG, 0, comm.get());
  layout = Layout{fields[0], fields[1], fields[2], fields[3]};
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(comm.get(), &dup);
  return std::unique_ptr<BinaryMatrixFile>(new BinaryMatrixFile(Comm::adopt(dup), path, layout, format));
}

BinaryMatrixFile::BinaryMatrixFile(Comm comm, std::string path, const Layout& layout, std::string format)
    : MatrixFile(std::move(path), layout.rows, layout.cols),
      comm_(std::move(comm)),
      data_offset_(layout.data_offset),
      item_size_(layout.item_size),
      format_(std::move(format)) {}

BinaryMatrixFile::~BinaryMatrixFile() {
  // Every rank destroys the file together (errors are agreed), so this
  // collective close cannot hang.
  if (file_ != MPI_FILE_NULL) MPI_File_close(&file_);
}

std::vector<double> BinaryMatrixFile::read_rows(const std::vector<RowRange>& ranges) {
  const std::int64_t my_rows = total_rows(ranges);
  const std::int64_t bytes = my_rows * cols_ * item_size_;
  std::vector<double> values;
  std::vector<float> singles;
  collectively(comm_, [&] {
    const std::string bad = check_row_ranges(ranges, rows_, path_);
    if (!bad.empty()) throw Error(bad);
    values.resize(static_cast<std::size_t>(my_rows * cols_));
    if (item_size_ == 4) singles.resize(values.size());
  });

  char* target = item_size_ == 4 ? reinterpret_cast<char*>(singles.data()) : reinterpret_cast<char*>(values.data());
  read_bytes(ranges, target, bytes);

  collectively(comm_, [&] {
    if (item_size_ == 4) {
      std::copy(singles.begin(), singles.end(), values.begin());
      singles = {};
    }
    const auto bad = std::find_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); });
    if (bad == values.end()) return;
    const auto index = static_cast<std::int64_t>(bad - values.begin());
    throw Error(path_ + ": row " + std::to_string(global_row(ranges, index / cols_) + 1) + ", column " +
                std::to_string(index % cols_ + 1) + " (1-based): non-finite value");
  });
  return values;
}

void BinaryMatrixFile::read_bytes(const std::vector<RowRange>& ranges, char* out, std::int64_t bytes) {
  if (file_ == MPI_FILE_NULL) {
    MPI_File opened = MPI_FILE_NULL;
    const int open_rc = MPI_File_open(comm_.get(), path_.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &opened);
    // If some ranks opened the file and others did not, the open handles are
    // left alone: closing is collective and the failed ranks have nothing to close.
    agree(comm_, open_rc == MPI_SUCCESS ? "" : "cannot open '" + path_ + "': " + mpi_error_text(open_rc));
    file_ = opened;
  }
  const MPI_File file = file_;

  // The file view lists this rank's row blocks as (offset, length) in bytes,
  // ascending as MPI-IO requires; long blocks are split to keep int lengths.
  std::vector<int> lengths;
  std::vector<MPI_Aint> offsets;
  collectively(comm_, [&] {
    const std::int64_t row_bytes = cols_ * item_size_;
    for (const RowRange& r : ranges) {
      std::int64_t at = data_offset_ + r.begin * row_bytes;
      const std::int64_t end = data_offset_ + r.end * row_bytes;
      for (; at < end; at += max_chunk_bytes) {
        offsets.push_back(static_cast<MPI_Aint>(at));
        lengths.push_back(static_cast<int>(std::min(max_chunk_bytes, end - at)));
      }
    }
    if (lengths.size() > static_cast<std::size_t>(INT_MAX))
      throw Error(path_ + ": too many row ranges in one request");
  });

  MPI_Datatype view_type = MPI_BYTE;
  if (!lengths.empty())
    MPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(), offsets.data(), MPI_BYTE,
                             &view_type);
  // A rank without rows keeps the plain byte view and reads nothing.
  const auto view = lengths.empty() ? std::unique_ptr<MpiDatatype>() : std::make_unique<MpiDatatype>(view_type);
  char representation[] = "native";
  const int view_rc = MPI_File_set_view(file, 0, MPI_BYTE, view ? view->get() : MPI_BYTE, representation,
                                        MPI_INFO_NULL);
  agree(comm_, view_rc == MPI_SUCCESS ? "" : "cannot read '" + path_ + "': " + mpi_error_text(view_rc));

  // Every rank calls the collective read the same number of times.
  const long long my_calls = (bytes + max_chunk_bytes - 1) / max_chunk_bytes;
  const long long calls = comm_.max(my_calls);
  std::string error;
  std::int64_t done = 0;
  for (long long call = 0; call < calls; ++call) {
    const int count = static_cast<int>(std::min(max_chunk_bytes, bytes - done));
    MPI_Status status;
    const int rc = MPI_File_read_all(file, out + done, count, MPI_BYTE, &status);
    int got = 0;
    if (rc == MPI_SUCCESS) MPI_Get_count(&status, MPI_BYTE, &got);
    if (error.empty() && rc != MPI_SUCCESS) error = "cannot read '" + path_ + "': " + mpi_error_text(rc);
    if (error.empty() && got != count) error = "cannot read '" + path_ + "': unexpected end of file";
    done += count;
  }
  agree(comm_, error);
}

}  // namespace kembed::io
