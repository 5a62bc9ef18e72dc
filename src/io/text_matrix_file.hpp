#pragma once
/// @file Private: a text matrix, parsed whole by rank 0 and scattered on request.
#include <memory>
#include <string>
#include <vector>

#include "kembed/io/matrix_file.hpp"
#include "kembed/io/text_parser.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::io {

/// Text (CSV/TSV/whitespace) matrix. Rank 0 keeps every value in memory;
/// read_rows() gathers the requests there and scatters the rows.
class TextMatrixFile final : public MatrixFile {
 public:
  /// Collective: rank 0 parses `path` ("-": standard input, then named
  /// "<stdin>") with parse_text_file() under `options`; any error is agreed
  /// and thrown on every rank; the shape is broadcast. A note from the parser
  /// (an ambiguous first line, an index column) is printed by rank 0 on
  /// stderr as "kembed: note: PATH: ...".
  static std::unique_ptr<TextMatrixFile> open(const Comm& comm, const std::string& path,
                                              const TextOptions& options = {});

  std::string format() const override { return "text"; }
  std::vector<double> read_rows(const std::vector<RowRange>& ranges) override;
  std::vector<std::string> row_ids() const override { return root_parsed_.row_ids; }
  std::vector<std::string> column_names() const override { return root_parsed_.column_names; }

 private:
  TextMatrixFile(Comm comm, std::string path, std::int64_t rows, std::int64_t cols, ParsedText root_parsed);
  Comm comm_;  ///< private duplicate of the opening communicator
  /// Everything parsed (values, ids, names) on rank 0; empty elsewhere.
  ParsedText root_parsed_;
};

}  // namespace kembed::io
