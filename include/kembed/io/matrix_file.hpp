#pragma once
/// @file Dense matrices stored in files: text (CSV/TSV/whitespace), NumPy .npy, raw .bin.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kembed/core/index_range.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::io {

/// Half-open range [begin, end) of global, 0-based row indices.
using RowRange = IndexRange;

/// What the file itself cannot say: the shape of a headerless .bin file.
struct FileHints {
  std::int64_t rows = -1;
  std::int64_t cols = -1;
};

/// Collective handle to an n x d matrix in a file. Shape known on every rank.
class MatrixFile {
 public:
  virtual ~MatrixFile() = default;
  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  const std::string& path() const { return path_; }
  /// Short format name for reports: "text", "npy" or "bin".
  virtual std::string format() const = 0;

  /// Collective: every rank passes the ranges it wants (ascending, disjoint,
  /// possibly none) and receives those rows row-major (sum of sizes x cols()).
  /// Non-finite values are agreed errors naming the file, row and column.
  virtual std::vector<double> read_rows(const std::vector<RowRange>& ranges) = 0;

 protected:
  MatrixFile(std::string path, std::int64_t rows, std::int64_t cols)
      : path_(std::move(path)), rows_(rows), cols_(cols) {}
  std::string path_;
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
};

/// Collective: opens `path` read-only and validates its shape. The format is
/// chosen by extension (.npy, .bin, anything else is text). Every error
/// (missing file, bad header, ragged row, non-numeric cell with
/// file:line:column, ...) is thrown as the same kembed::Error on all ranks.
std::unique_ptr<MatrixFile> open_matrix_file(const Comm& comm, const std::string& path,
                                             const FileHints& hints = {});

}  // namespace kembed::io
