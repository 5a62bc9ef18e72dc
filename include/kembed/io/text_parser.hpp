#pragma once
/// @file Serial parser for delimited text matrices (CSV, TSV, whitespace).
/// No MPI: rank 0 calls it, and tests and fuzzers call it on strings.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kembed::io {

/// A text matrix after parsing: `rows` x `cols` values, row-major.
struct ParsedText {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<double> values;
  /// True when the first non-comment line was a header (some word not a number).
  bool has_header = false;
};

/// Parses `text` as a delimited matrix; `name` (usually the path) starts every
/// error message. Rules: lines that are blank or whose first non-blank
/// character is '#' are skipped; the first remaining line is a header if any
/// of its words (split at commas, tabs and spaces alike) is not a number; the
/// delimiter is taken from the first data line (comma if it has one, else tab,
/// else runs of whitespace); spaces around cells and CRLF line ends are allowed. Throws kembed::Error:
///   NAME:LINE: expected C values, found F
///   NAME:LINE: column J: not a number: 'CELL'
///   NAME:LINE: column J: non-finite value 'CELL'
///   NAME: no data rows
///   NAME: header line but no data rows
/// LINE is the 1-based physical line, J the 1-based cell index.
ParsedText parse_text(std::string_view text, const std::string& name);

/// Reads the file at `path` (read-only) and parses it with parse_text(); a
/// file that cannot be opened throws Error "cannot open 'PATH': <reason>".
ParsedText parse_text_file(const std::string& path);

}  // namespace kembed::io
