#pragma once
/// @file Dense matrices stored in files: text (CSV/TSV/whitespace), NumPy .npy, raw .bin.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kembed/core/index_range.hpp"
#include "kembed/io/text_parser.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::io {

/// Half-open range [begin, end) of global, 0-based row indices.
using RowRange = IndexRange;

/// What the file itself cannot say: the shape of a headerless .bin file, the
/// dataset of an HDF5 file (--dataset), and how to read a text file
/// (--header, --index-col, --id-column).
struct FileHints {
  FileHints() = default;
  /// `{rows, cols}` keeps meaning the shape alone.
  FileHints(std::int64_t rows_, std::int64_t cols_, TextOptions text_ = {})
      : rows(rows_), cols(cols_), text(std::move(text_)) {}
  std::int64_t rows = -1;
  std::int64_t cols = -1;
  TextOptions text;
  std::string dataset;  ///< HDF5 dataset path; empty: the file's only dataset
};

/// A 2-D block-cyclic layout (ScaLAPACK's, source process (0, 0)) as seen
/// from the process at (myrow, mycol) of an nprow x npcol grid.
struct BlockCyclicLayout {
  int row_block = 1, col_block = 1;
  int nprow = 1, npcol = 1;
  int myrow = 0, mycol = 0;
};

/// Receives a group of consecutive local rows of a block-cyclic read:
/// (first local row, number of rows m, the values column-major, m x local
/// columns with leading dimension m), the layout of a ScaLAPACK local block.
using LocalRowsSink = std::function<void(std::int64_t, std::int64_t, const double*)>;

/// Collective handle to an n x d matrix in a file. Shape known on every rank.
class MatrixFile {
 public:
  virtual ~MatrixFile() = default;
  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  const std::string& path() const { return path_; }
  /// Short format name for reports: "text", "npy", "bin" or "h5".
  virtual std::string format() const = 0;

  /// Collective: every rank passes the ranges it wants (ascending, disjoint,
  /// possibly none) and receives those rows row-major (sum of sizes x cols()).
  /// Non-finite values are agreed errors naming the file, row and column.
  virtual std::vector<double> read_rows(const std::vector<RowRange>& ranges) = 0;

  /// Collective: this rank's entries of the matrix distributed as `layout`
  /// says, handed to `sink` in groups of whole local rows (each local row
  /// exactly once, groups of at most about 64 MB). Binary and HDF5 files read each entry of the file once
  /// over all ranks; the default reads each stripe of row blocks with
  /// read_rows() and keeps this rank's columns. Non-finite values are agreed
  /// errors naming the file, row and column.
  virtual void read_block_cyclic(const BlockCyclicLayout& layout, const LocalRowsSink& sink);

  /// Row ids (one per row, in row order) from a text file's --id-column, on
  /// rank 0 only; empty on other ranks, without --id-column and for binary
  /// formats. Not collective.
  virtual std::vector<std::string> row_ids() const { return {}; }
  /// Names of the cols() data columns from a text file's header (index and
  /// id columns left out), on rank 0 only; empty on other ranks, without a
  /// header and for binary formats. Not collective.
  virtual std::vector<std::string> column_names() const { return {}; }

 protected:
  MatrixFile(std::string path, std::int64_t rows, std::int64_t cols)
      : path_(std::move(path)), rows_(rows), cols_(cols) {}
  std::string path_;
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
};

/// Splits "FILE.h5:/DATASET" (also .hdf5, .he5, .hdf) into the file and the
/// dataset path; any other path comes back whole with an empty dataset.
std::pair<std::string, std::string> split_dataset(const std::string& path);

/// Serial, best effort: `reads` (paths a run reads, "FILE.h5:/DATASET"
/// allowed) with the files reached through them added: FILE itself for
/// "FILE.h5:/DATASET", and for each HDF5 file the files its external links,
/// virtual datasets and external storage lead to (hdf5_files_behind), so
/// that an output check protects the data a run actually reads.
std::vector<std::string> with_linked_files(const std::vector<std::string>& reads);

/// Collective: opens `path` read-only and validates its shape. The format is
/// chosen by extension (.npy, .bin, .h5/.hdf5 when built with HDF5, where
/// "FILE.h5:/DATASET" also names the dataset; anything else is text, unless
/// its first bytes say it is a compressed, archived or other binary file,
/// which is refused with what it is and how to convert it); "-" is standard
/// input (text, read by rank 0, "<stdin>" in messages), and a FIFO is read
/// to its end; a character or block device or a socket is refused by name
/// before anything is read. Every error (missing file, bad
/// header, ragged row, non-numeric cell with file:line:column, text options
/// given for a .npy/.bin file, ...) is thrown as the same kembed::Error on all
/// ranks. Notes about how a text file was read go to stderr on rank 0.
std::unique_ptr<MatrixFile> open_matrix_file(const Comm& comm, const std::string& path,
                                             const FileHints& hints = {});

}  // namespace kembed::io
