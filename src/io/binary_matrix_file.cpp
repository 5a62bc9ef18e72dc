#include "io/binary_matrix_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "io/block_cyclic_exchange.hpp"
#include "io/block_cyclic_rows.hpp"
#include "io/read_only_file.hpp"
#include "io/row_ranges.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/npy_header.hpp"

namespace kembed::io {

namespace {

/// Bytes of one read of a run of rows: small enough to stay in a core's
/// cache for the check that follows it, large enough that the calls cost
/// nothing (256 per 256 MB).
constexpr std::int64_t piece_bytes = std::int64_t{1} << 20;

/// Headers numpy writes are well under a kilobyte; anything huge is corrupt.
constexpr std::int64_t max_npy_header_bytes = std::int64_t{1} << 20;

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
  std::int64_t fields[4] = {layout.rows, layout.cols, layout.data_offset, layout.item_size};
  comm.broadcast(fields, 4);
  layout = Layout{fields[0], fields[1], fields[2], fields[3]};
  return std::unique_ptr<BinaryMatrixFile>(new BinaryMatrixFile(comm.dup(), path, layout, format));
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

void BinaryMatrixFile::open_once() {
  if (file_ != MPI_FILE_NULL) return;
  MPI_File opened = MPI_FILE_NULL;
  const int open_rc = MPI_File_open(comm_.get(), path_.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &opened);
  // If some ranks opened the file and others did not, the open handles are
  // left alone: closing is collective and the failed ranks have nothing to close.
  agree(comm_, open_rc == MPI_SUCCESS ? "" : "cannot open '" + path_ + "': " + Comm::error_text(open_rc));
  file_ = opened;
}

std::vector<double> BinaryMatrixFile::read_rows(const std::vector<RowRange>& ranges) {
  const std::int64_t my_rows = total_rows(ranges);
  std::vector<double> values;
  collectively(comm_, [&] {
    const std::string bad = check_row_ranges(ranges, rows_, path_);
    if (!bad.empty()) throw Error(bad);
    values = fresh_values(static_cast<std::size_t>(my_rows * cols_));
  });
  open_once();
  const Landed landed = read_ranges(ranges, values.data());
  agree(comm_, !landed.error.empty() || landed.first_non_finite < 0
                   ? landed.error
                   : non_finite_message(path_, global_row(ranges, landed.first_non_finite / cols_),
                                        landed.first_non_finite % cols_));
  return values;
}

BinaryMatrixFile::Landed BinaryMatrixFile::read_ranges(const std::vector<RowRange>& ranges, double* out) {
  // Independent reads, one run of contiguous rows after another: a rank's
  // rows are whole rows or blocks of rows, each a contiguous piece of the
  // file that the file system streams at full speed. Collective two-phase
  // I/O passes every byte through an aggregator's buffer and a second copy
  // (on the 2-core development VM it read a block of rows per rank at 15-50%
  // of the streaming bandwidth, these reads at 55-90%; bench/io.sh).
  //
  // Each run is read in pieces that fit the core's cache, and each piece is
  // checked for non-finite values (and float32 widened) while it is still
  // there: the check costs no pass over memory of its own, and float32 input
  // needs no second buffer of the whole size. Reading stops at the first
  // non-finite value.
  const std::int64_t piece = piece_bytes / item_size_;  // values per read
  std::vector<float> narrow(item_size_ == 4 ? static_cast<std::size_t>(piece) : 0);
  std::int64_t done = 0;  // values of `out` filled
  // Ranges that touch are read as one run: a rank whose blocks follow one
  // another reads them together.
  for (const RowRange& run : contiguous_runs(ranges)) {
    const std::int64_t first = done;
    const std::int64_t stop = done + run.size() * cols_;
    for (; done < stop;) {
      const std::int64_t count = std::min(piece, stop - done);
      const std::int64_t at = data_offset_ + (run.begin * cols_ + done - first) * item_size_;
      void* into = item_size_ == 4 ? static_cast<void*>(narrow.data()) : static_cast<void*>(out + done);
      const int bytes = static_cast<int>(count * item_size_);
      MPI_Status status;
      const int rc = MPI_File_read_at(file_, static_cast<MPI_Offset>(at), into, bytes, MPI_BYTE, &status);
      if (rc != MPI_SUCCESS) return {"cannot read '" + path_ + "': " + Comm::error_text(rc)};
      int got = 0;
      MPI_Get_count(&status, MPI_BYTE, &got);
      if (got != bytes) return {"cannot read '" + path_ + "': unexpected end of file"};
      if (item_size_ == 4) std::copy(narrow.data(), narrow.data() + count, out + done);
      const std::int64_t bad = first_non_finite(out + done, count);
      if (bad >= 0) return {"", done + bad};
      done += count;
    }
  }
  return {};
}

void BinaryMatrixFile::read_block_cyclic(const BlockCyclicLayout& layout, const LocalRowsSink& sink) {
  if (!exchange_fits(comm_, layout)) {
    MatrixFile::read_block_cyclic(layout, sink);
    return;
  }
  open_once();
  // The exchange names the first non-finite entry in file order over all
  // ranks itself; a read that stops at one leaves the rest of `out` unread,
  // which the exchange then never hands on.
  const auto read = [&](const std::vector<RowRange>& ranges, std::vector<double>& out) {
    return read_ranges(ranges, out.data()).error;
  };
  exchange_block_cyclic(comm_, path_, rows_, cols_, layout, read, sink);
}

}  // namespace kembed::io
