#pragma once
/// @file Serial parser for delimited text matrices (CSV, TSV, whitespace),
/// including the files pandas' `to_csv` and R's `write.csv`/`write.table`
/// write by default. No MPI: rank 0 calls it, and tests and fuzzers call it
/// on strings.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kembed::io {

/// How to read a text matrix: what the user said on the command line
/// (--header, --index-col, --id-column). The defaults read plain numeric
/// files, pandas' and R's default output alike.
struct TextOptions {
  /// Whether the first content line is a header. `automatic` decides by the
  /// rules documented at parse_text(); `yes` always takes it as a header,
  /// `no` never does.
  enum class Header { automatic, yes, no };
  Header header = Header::automatic;
  /// Leading columns that are row names, not data (pandas' index, R's row
  /// names); 0 lets a header with an empty first cell declare one.
  int index_cols = 0;
  /// The column whose cells are row ids rather than data: a header name, or
  /// a 1-based column number counted in the file (index columns included).
  /// Empty: none.
  std::string id_column;
};

/// A text matrix after parsing: `rows` x `cols` data values, row-major.
struct ParsedText {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<double> values;
  /// True when the first content line was taken as a header.
  bool has_header = false;
  /// Header names of the `cols` data columns (index and id columns left
  /// out), unquoted; empty without a header.
  std::vector<std::string> column_names;
  /// One id per row (the --id-column cells, unquoted); empty without one.
  std::vector<std::string> row_ids;
  /// Leading columns dropped as row names (given, or declared by the header).
  std::int64_t index_cols = 0;
  /// What was decided about an ambiguous first line or an index column, for
  /// the user ("" when nothing needed saying). Does not start with the name.
  std::string note;
};

/// Parses `text` as a delimited matrix; `name` (usually the path) starts every
/// error message.
///
/// Lines and cells: lines that are blank or whose first non-blank character
/// is '#' are skipped; the delimiter is taken from the first data line (comma
/// if it has one, else tab, else runs of whitespace); spaces around cells,
/// CRLF line ends and a UTF-8 byte-order mark are allowed. A cell may be
/// quoted with double quotes as CSV does ("1.5", "a ""b""", "x,y"); a quoted
/// number is the same number on every line. A quoted cell cannot span lines.
///
/// Header (`--header auto`), decided on the first content line:
///  - it is a header if one of its cells (split at commas, tabs and spaces
///    alike, quotes respected, empty cells ignored) is neither a number nor
///    a quoted number: `x,y`, `"V1","V2"`, `,a,b`;
///  - it is a header if it reads exactly 0,1,...,c-1 (pandas' labels of an
///    unnamed frame), or an empty cell then 0,...,c-1 (the same with
///    pandas' index), unless the next content line reads the same; either
///    way ParsedText::note says what was decided, since both are numbers;
///  - otherwise it is data (a first row of quoted numbers is data).
///
/// Index columns: `index_cols` leading cells of every line (header included)
/// are row names and are never parsed. With `index_cols` 0, a header
/// declares one index column when its first cell is empty ("" or nothing,
/// as pandas' `to_csv` and R's `write.csv` write), or when it has exactly one
/// cell fewer than the data lines (R's `write.table`); the note says so.
/// Otherwise the header must have as many cells as the data lines.
///
/// Id column: `id_column` names a header cell (exact, unquoted match) or is
/// a 1-based column number (all digits); its cells are kept as row ids, not
/// parsed. Cells of index and id columns may be any text, quoted or not.
///
/// Throws kembed::Error:
///   NAME:LINE: expected C values, found F
///   NAME:LINE: column J: not a number: 'CELL'
///   NAME:LINE: column J: non-finite value 'CELL'
///   NAME:LINE: column J: unterminated quote (a quoted cell cannot span lines)
///   NAME:LINE: column J: text after the closing quote: 'CELL'
///   NAME:LINE: header has H names, but line L has C values
///   NAME: no data rows
///   NAME: header line but no data rows
///   NAME: --id-column ..., --index-col ... (no such column, no data left)
/// LINE is the 1-based physical line, J the 1-based cell index in the line
/// (index and id columns counted).
ParsedText parse_text(std::string_view text, const std::string& name, const TextOptions& options = {});

/// Name used in messages for standard input (the path "-").
inline const std::string& standard_input_name() {
  static const std::string name = "<stdin>";
  return name;
}

/// Reads the file at `path` (read-only, to its end: pipes and FIFOs too; "-"
/// is standard input, named "<stdin>" in messages) and parses it with
/// parse_text(). A file that cannot be opened throws Error "cannot open
/// 'PATH': <reason>".
ParsedText parse_text_file(const std::string& path, const TextOptions& options = {});

}  // namespace kembed::io
