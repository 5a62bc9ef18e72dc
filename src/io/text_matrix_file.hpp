#pragma once
/// @file Private: a text matrix, parsed whole by rank 0 and scattered on request.
#include <memory>
#include <string>
#include <vector>

#include "kembed/io/matrix_file.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::io {

/// Text (CSV/TSV/whitespace) matrix. Rank 0 keeps every value in memory;
/// read_rows() gathers the requests there and scatters the rows.
class TextMatrixFile final : public MatrixFile {
 public:
  /// Collective: rank 0 parses `path` with parse_text_file(); any error is
  /// agreed and thrown on every rank; the shape is broadcast.
  static std::unique_ptr<TextMatrixFile> open(const Comm& comm, const std::string& path);

  std::string format() const override { return "text"; }
  std::vector<double> read_rows(const std::vector<RowRange>& ranges) override;

 private:
  TextMatrixFile(Comm comm, std::string path, std::int64_t rows, std::int64_t cols,
                 std::vector<double> root_values);
  Comm comm_;  ///< private duplicate of the opening communicator
  std::vector<double> root_values_;  ///< whole matrix on rank 0, empty elsewhere
};

}  // namespace kembed::io
