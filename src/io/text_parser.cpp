#include "kembed/io/text_parser.hpp"

#include <charconv>
#include <cstdint>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "io/read_only_file.hpp"
#include "kembed/core/error.hpp"

namespace kembed::io {

namespace {

enum class Delimiter { comma, tab, whitespace };
enum class CellKind { number, not_a_number, non_finite };

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

/// Separators inside quoted cells do not count ("a,b" in a TSV file).
Delimiter detect_delimiter(std::string_view line) {
  bool quoted = false, tab = false;
  for (const char c : line) {
    if (c == '"') quoted = !quoted;  // a doubled "" toggles twice
    if (quoted) continue;
    if (c == ',') return Delimiter::comma;
    if (c == '\t') tab = true;
  }
  return tab ? Delimiter::tab : Delimiter::whitespace;
}

/// One cell of a line: `text` as written (trimmed, quotes included), and
/// `content`, the text inside the quotes (still with doubled "" escapes).
struct Cell {
  std::string_view text;
  std::string_view content;
  bool quoted = false;
};

/// Why a line could not be split, at which 0-based cell.
struct SplitFailure {
  enum Kind { none, unterminated_quote, text_after_quote } kind = none;
  std::int64_t index = 0;
  std::string_view text;  ///< the offending cell as far as it goes
};

/// Scans a quoted cell starting at line[pos] == '"'; on success sets `close`
/// to the position of the closing quote.
bool find_closing_quote(std::string_view line, std::size_t pos, std::size_t& close) {
  std::size_t i = pos + 1;
  while (true) {
    const std::size_t q = line.find('"', i);
    if (q == std::string_view::npos) return false;
    if (q + 1 < line.size() && line[q + 1] == '"') {
      i = q + 2;
      continue;
    }
    close = q;
    return true;
  }
}

/// Calls `on_cell(cell, index)` (index 0-based) for every cell of `line`.
/// Returns the number of cells visited; a malformed quote stops the walk and
/// is described in `failure`.
template <class F>
std::int64_t for_each_cell(std::string_view line, Delimiter delimiter, SplitFailure& failure, F&& on_cell) {
  std::int64_t index = 0;
  const bool runs = delimiter == Delimiter::whitespace;
  const char sep = delimiter == Delimiter::comma ? ',' : '\t';
  auto is_sep = [&](char c) { return runs ? is_blank(c) : c == sep; };
  // Leading blanks of a cell, but never the separator itself (a tab).
  auto skip_blanks = [&](std::size_t pos) {
    while (pos < line.size() && is_blank(line[pos]) && (runs || line[pos] != sep)) ++pos;
    return pos;
  };
  std::size_t pos = 0;
  while (true) {
    pos = skip_blanks(pos);
    if (runs && pos == line.size()) break;
    Cell cell;
    if (pos < line.size() && line[pos] == '"') {
      std::size_t close = 0;
      if (!find_closing_quote(line, pos, close)) {
        failure = {SplitFailure::unterminated_quote, index, line.substr(pos)};
        return index;
      }
      cell.quoted = true;
      cell.content = line.substr(pos + 1, close - pos - 1);
      cell.text = line.substr(pos, close + 1 - pos);
      std::size_t after = close + 1;
      // Blanks before a comma or tab belong to no cell; in whitespace mode they are the separator.
      if (!runs) after = skip_blanks(after);
      if (after < line.size() && !is_sep(line[after])) {
        std::size_t end = after;
        while (end < line.size() && !is_sep(line[end])) ++end;
        failure = {SplitFailure::text_after_quote, index, line.substr(pos, end - pos)};
        return index;
      }
      pos = after;
    } else {
      std::size_t end = pos;
      if (runs) {
        while (end < line.size() && !is_blank(line[end])) ++end;
      } else {
        end = line.find(sep, pos);
        if (end == std::string_view::npos) end = line.size();
      }
      cell.text = cell.content = trim(line.substr(pos, end - pos));
      pos = end;
    }
    on_cell(cell, index++);
    if (pos == line.size()) break;
    ++pos;  // past the separator
  }
  return index;
}

/// The whole (already trimmed) cell must be one decimal floating-point number.
CellKind parse_cell(std::string_view cell, double& out) {
  const char* first = cell.data();
  const char* last = first + cell.size();
  // from_chars refuses a leading '+', which strtod and most writers accept.
  if (first != last && *first == '+') {
    ++first;
    if (first == last || *first == '+' || *first == '-') return CellKind::not_a_number;
  }
  if (first == last) return CellKind::not_a_number;
  const auto [ptr, ec] = std::from_chars(first, last, out);
  if (ec == std::errc::invalid_argument || ptr != last) return CellKind::not_a_number;
  if (ec == std::errc::result_out_of_range) {
    // Overflow becomes +-inf (an error below); underflow becomes 0 or a subnormal.
    const std::string copy(first, last);
    out = std::strtod(copy.c_str(), nullptr);
  }
  return std::isfinite(out) ? CellKind::number : CellKind::non_finite;
}

/// A cell quoted in a message, shortened so garbage input stays readable.
std::string quoted(std::string_view cell) {
  constexpr std::size_t max_shown = 40;
  std::string shown(cell.substr(0, max_shown));
  if (cell.size() > max_shown) shown += "...";
  return "'" + shown + "'";
}

/// The text of a quoted cell with its doubled "" escapes undone.
std::string unescaped(const Cell& cell) {
  if (!cell.quoted) return std::string(cell.content);
  std::string out;
  out.reserve(cell.content.size());
  for (std::size_t i = 0; i < cell.content.size(); ++i) {
    out += cell.content[i];
    if (cell.content[i] == '"') ++i;  // the second of a pair
  }
  return out;
}

/// Walks the physical lines of a text, tracking 1-based line numbers. A
/// plain value: copying it peeks ahead.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {
    // A UTF-8 byte-order mark (common from spreadsheet exports) is not data.
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") text_.remove_prefix(3);
  }

  /// Next line that is neither blank nor a '#' comment, without its line end.
  bool next_content_line(std::string_view& line) {
    while (pos_ < text_.size()) {
      const std::size_t nl = text_.find('\n', pos_);
      const std::size_t end = nl == std::string_view::npos ? text_.size() : nl;
      line = text_.substr(pos_, end - pos_);
      pos_ = nl == std::string_view::npos ? text_.size() : nl + 1;
      ++line_number_;
      std::size_t first = 0;
      while (first < line.size() && is_blank(line[first])) ++first;
      if (first == line.size() || line[first] == '#') continue;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      return true;
    }
    return false;
  }

  std::int64_t line_number() const { return line_number_; }
  std::size_t remaining_bytes() const { return text_.size() - pos_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::int64_t line_number_ = 0;
};

/// "NAME:LINE: "
std::string where(const std::string& name, std::int64_t line) {
  return name + ":" + std::to_string(line) + ": ";
}

[[noreturn]] void throw_split_failure(const std::string& name, std::int64_t line, const SplitFailure& f) {
  const std::string column = "column " + std::to_string(f.index + 1) + ": ";
  if (f.kind == SplitFailure::unterminated_quote)
    throw Error(where(name, line) + column + "unterminated quote (a quoted cell cannot span lines): " +
                quoted(f.text));
  throw Error(where(name, line) + column + "text after the closing quote: " + quoted(f.text));
}

/// The cells of one line (for the header and the first lines; data rows are
/// walked without copying). Throws on a malformed quote.
std::vector<Cell> split_line(std::string_view line, Delimiter delimiter, const std::string& name,
                             std::int64_t line_number) {
  std::vector<Cell> cells;
  SplitFailure failure;
  for_each_cell(line, delimiter, failure, [&](const Cell& c, std::int64_t) { cells.push_back(c); });
  if (failure.kind != SplitFailure::none) throw_split_failure(name, line_number, failure);
  return cells;
}

/// True when some word of the line is text rather than a number. Words are
/// split at commas, tabs and spaces alike and empty ones are ignored, so a
/// data line with a stray empty cell or mixed separators is not mistaken for
/// a header (which would drop a row silently); it fails later with the
/// cell's position instead. A quoted number counts as a number.
bool has_text_word(std::string_view line) {
  auto separator = [](char c) { return c == ',' || is_blank(c); };
  double ignored = 0;
  std::size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && separator(line[pos])) ++pos;
    if (pos == line.size()) break;
    std::string_view word;
    if (line[pos] == '"') {
      std::size_t close = 0;
      // A broken quote is left for the data parser to report with its column.
      if (!find_closing_quote(line, pos, close)) return false;
      word = trim(line.substr(pos + 1, close - pos - 1));
      pos = close + 1;
      while (pos < line.size() && !separator(line[pos])) ++pos;
    } else {
      const std::size_t start = pos;
      while (pos < line.size() && !separator(line[pos])) ++pos;
      word = line.substr(start, pos - start);
    }
    if (!word.empty() && parse_cell(word, ignored) == CellKind::not_a_number) return true;
  }
  return false;
}

/// pandas writes an unnamed frame's column labels as 0,1,...,c-1, after an
/// empty cell when it also writes the index. Returns c, or 0 when the cells
/// do not read so.
std::size_t pandas_label_count(const std::vector<Cell>& cells) {
  std::size_t first = 0;
  if (cells.size() >= 2 && trim(cells[0].content).empty()) first = 1;
  if (cells.size() <= first) return 0;
  for (std::size_t j = first; j < cells.size(); ++j)
    if (trim(cells[j].content) != std::to_string(j - first)) return 0;
  return cells.size() - first;
}

bool same_contents(const std::vector<Cell>& a, const std::vector<Cell>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t j = 0; j < a.size(); ++j)
    if (trim(a[j].content) != trim(b[j].content)) return false;
  return true;
}

void add_note(std::string& note, const std::string& more) { note += (note.empty() ? "" : "; ") + more; }

/// The line as shown in a note.
std::string shown_line(std::string_view line) { return quoted(trim(line)); }

/// Header names aligned with the C columns of the data lines ("" for a
/// column the header does not name).
struct HeaderLayout {
  std::vector<std::string> names;
  std::int64_t index_cols = 0;
};

HeaderLayout lay_out_header(const std::vector<Cell>& header, std::int64_t header_line, std::int64_t data_cols,
                            std::int64_t data_line, int index_cols, const std::string& name, std::string& note) {
  HeaderLayout layout;
  layout.index_cols = index_cols;
  const auto h = static_cast<std::int64_t>(header.size());
  for (const Cell& c : header) layout.names.push_back(unescaped(c));
  if (index_cols == 0 && h == data_cols && h >= 2 && trim(header[0].content).empty()) {
    layout.index_cols = 1;
    add_note(note, "the header's first cell is empty, so column 1 holds row names (pandas' index, "
                   "R's row names) and is not data");
  } else if (index_cols == 0 && h + 1 == data_cols) {
    layout.index_cols = 1;
    layout.names.insert(layout.names.begin(), std::string());
    add_note(note, "the header has one name fewer than the rows have values, so column 1 holds row "
                   "names (as R's write.table writes them) and is not data");
  } else if (h != data_cols) {
    throw Error(where(name, header_line) + "header has " + std::to_string(h) + " names, but line " +
                std::to_string(data_line) + " has " + std::to_string(data_cols) + " values");
  }
  return layout;
}

/// The 0-based file column of --id-column.
std::int64_t resolve_id_column(const std::string& id, const std::vector<std::string>& names, bool has_header,
                               std::int64_t data_cols, const std::string& name) {
  const bool number = id.find_first_not_of("0123456789") == std::string::npos;
  if (number) {
    const std::int64_t k = id.size() > 12 ? INT64_MAX : std::stoll(id);
    if (k < 1) throw Error(name + ": --id-column " + id + ": column numbers start at 1");
    if (k > data_cols)
      throw Error(name + ": --id-column " + id + ": the file has only " + std::to_string(data_cols) +
                  " columns");
    return k - 1;
  }
  if (!has_header)
    throw Error(name + ": --id-column '" + id +
                "' names a column, but the file has no header line (give its number instead)");
  std::int64_t found = -1, matches = 0;
  for (std::size_t j = 0; j < names.size(); ++j)
    if (names[j] == id) {
      if (found < 0) found = static_cast<std::int64_t>(j);
      ++matches;
    }
  if (matches > 1)
    throw Error(name + ": --id-column '" + id + "': " + std::to_string(matches) +
                " columns of the header have that name (give the column number instead)");
  if (found < 0) {
    std::string list;
    for (const std::string& n : names) {
      if (n.empty()) continue;
      if (list.size() > 60) {
        list += ", ...";
        break;
      }
      list += (list.empty() ? "" : ", ") + n;
    }
    throw Error(name + ": --id-column '" + id + "': no such column in the header (it has: " + list + ")");
  }
  return found;
}

}  // namespace

ParsedText parse_text(std::string_view text, const std::string& name, const TextOptions& options) {
  if (options.index_cols < 0) throw Error(name + ": --index-col must be at least 0");
  ParsedText parsed;
  LineReader reader(text);
  std::string_view line;
  if (!reader.next_content_line(line)) throw Error(name + ": no data rows");

  // Header decision on the first content line (see the header's comment).
  std::string_view header_line;
  std::int64_t header_line_number = 0;
  bool header = options.header == TextOptions::Header::yes;
  if (options.header == TextOptions::Header::automatic) {
    if (has_text_word(line)) {
      header = true;
    } else {
      const Delimiter first_delimiter = detect_delimiter(line);
      const std::vector<Cell> first = split_line(line, first_delimiter, name, reader.line_number());
      if (const std::size_t labels = pandas_label_count(first)) {
        LineReader peek = reader;
        std::string_view next;
        std::vector<Cell> second;
        SplitFailure failure;
        if (peek.next_content_line(next))
          for_each_cell(next, first_delimiter, failure, [&](const Cell& c, std::int64_t) { second.push_back(c); });
        const std::string what = "pandas' column labels 0.." + std::to_string(labels - 1);
        if (failure.kind == SplitFailure::none && same_contents(first, second)) {
          add_note(parsed.note, "first line " + shown_line(line) + " reads like " + what +
                                    ", but so does the next line: read as data (give --header yes "
                                    "if it is a header)");
        } else {
          header = true;
          add_note(parsed.note, "first line " + shown_line(line) + " read as a header (" + what +
                                    "); give --header no if it is data");
        }
      }
    }
  }
  if (header) {
    parsed.has_header = true;
    header_line = line;
    header_line_number = reader.line_number();
    if (!reader.next_content_line(line)) throw Error(name + ": header line but no data rows");
  }

  // The first data line fixes the delimiter and the number of cells C.
  const Delimiter delimiter = detect_delimiter(line);
  const std::int64_t file_cols =
      static_cast<std::int64_t>(split_line(line, delimiter, name, reader.line_number()).size());
  std::vector<std::string> names;
  std::int64_t index_cols = options.index_cols;
  if (header) {
    const HeaderLayout layout =
        lay_out_header(split_line(header_line, delimiter, name, header_line_number), header_line_number,
                       file_cols, reader.line_number(), options.index_cols, name, parsed.note);
    names = layout.names;
    index_cols = layout.index_cols;
  }
  const std::int64_t id_col = options.id_column.empty()
                                  ? -1
                                  : resolve_id_column(options.id_column, names, header, file_cols, name);
  if (index_cols >= file_cols)
    throw Error(where(name, reader.line_number()) + "--index-col " + std::to_string(index_cols) +
                " leaves no data column (the line has " + std::to_string(file_cols) + " values)");
  parsed.index_cols = index_cols;
  parsed.cols = file_cols - index_cols - (id_col >= index_cols ? 1 : 0);
  if (parsed.cols < 1)
    throw Error(where(name, reader.line_number()) + "no data column left besides the index and id columns");
  if (header)
    for (std::int64_t j = index_cols; j < file_cols; ++j)
      if (j != id_col) parsed.column_names.push_back(names[static_cast<std::size_t>(j)]);

  // Rough guess of the total from the first line's length saves regrowth.
  const std::size_t guess_rows = reader.remaining_bytes() / (line.size() + 1) + 1;
  parsed.values.reserve(guess_rows * static_cast<std::size_t>(parsed.cols));
  do {
    const std::int64_t line_number = reader.line_number();
    SplitFailure failure;
    const std::int64_t count = for_each_cell(line, delimiter, failure, [&](const Cell& cell, std::int64_t j) {
      if (j >= file_cols) return;  // extra cells are only counted
      if (j == id_col) {
        parsed.row_ids.push_back(unescaped(cell));
        return;
      }
      if (j < index_cols) return;
      double value = 0;
      const std::string_view number = cell.quoted ? trim(cell.content) : cell.content;
      switch (parse_cell(number, value)) {
        case CellKind::number:
          break;
        case CellKind::not_a_number:
          throw Error(where(name, line_number) + "column " + std::to_string(j + 1) +
                      ": not a number: " + quoted(cell.text));
        case CellKind::non_finite:
          throw Error(where(name, line_number) + "column " + std::to_string(j + 1) +
                      ": non-finite value " + quoted(cell.text));
      }
      parsed.values.push_back(value);
    });
    if (failure.kind != SplitFailure::none) throw_split_failure(name, line_number, failure);
    if (count != file_cols)
      throw Error(where(name, line_number) + "expected " + std::to_string(file_cols) + " values, found " +
                  std::to_string(count));
    ++parsed.rows;
  } while (reader.next_content_line(line));
  parsed.values.shrink_to_fit();
  return parsed;
}

ParsedText parse_text_file(const std::string& path, const TextOptions& options) {
  std::string text;
  const bool standard_input = path == "-";
  {
    ReadOnlyFile file = standard_input ? ReadOnlyFile::standard_input() : ReadOnlyFile(path);
    text = file.read_all();
  }
  return parse_text(text, standard_input ? standard_input_name() : path, options);
}

}  // namespace kembed::io
