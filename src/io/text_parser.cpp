#include "kembed/io/text_parser.hpp"

#include <charconv>
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

Delimiter detect_delimiter(std::string_view line) {
  if (line.find(',') != std::string_view::npos) return Delimiter::comma;
  if (line.find('\t') != std::string_view::npos) return Delimiter::tab;
  return Delimiter::whitespace;
}

/// Calls `on_cell(cell, index)` (index 0-based) for every cell of `line`
/// until it returns false; returns the number of cells visited.
template <class F>
std::int64_t for_each_cell(std::string_view line, Delimiter delimiter, F&& on_cell) {
  std::int64_t index = 0;
  if (delimiter == Delimiter::whitespace) {
    std::size_t pos = 0;
    while (true) {
      while (pos < line.size() && is_blank(line[pos])) ++pos;
      if (pos == line.size()) break;
      const std::size_t start = pos;
      while (pos < line.size() && !is_blank(line[pos])) ++pos;
      if (!on_cell(line.substr(start, pos - start), index++)) break;
    }
    return index;
  }
  const char sep = delimiter == Delimiter::comma ? ',' : '\t';
  std::size_t start = 0;
  while (true) {
    const std::size_t end = line.find(sep, start);
    const std::string_view cell =
        line.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (!on_cell(trim(cell), index++)) break;
    if (end == std::string_view::npos) break;
    start = end + 1;
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

/// Walks the physical lines of a text, tracking 1-based line numbers.
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

/// A header has a word that is not a number. Words are split at commas,
/// tabs and spaces alike, so a data line with a stray empty cell or mixed
/// separators is not mistaken for a header (which would drop a row silently);
/// it fails later with the cell's position instead.
bool is_header(std::string_view line) {
  double ignored = 0;
  std::size_t pos = 0;
  auto separator = [](char c) { return c == ',' || is_blank(c); };
  while (pos < line.size()) {
    while (pos < line.size() && separator(line[pos])) ++pos;
    const std::size_t start = pos;
    while (pos < line.size() && !separator(line[pos])) ++pos;
    if (pos > start && parse_cell(line.substr(start, pos - start), ignored) == CellKind::not_a_number)
      return true;
  }
  return false;
}

}  // namespace

ParsedText parse_text(std::string_view text, const std::string& name) {
  ParsedText parsed;
  LineReader reader(text);
  std::string_view line;
  if (!reader.next_content_line(line)) throw Error(name + ": no data rows");
  if (is_header(line)) {
    parsed.has_header = true;
    if (!reader.next_content_line(line)) throw Error(name + ": header line but no data rows");
  }

  const Delimiter delimiter = detect_delimiter(line);
  bool first_row = true;
  do {
    const std::int64_t line_number = reader.line_number();
    auto where = [&] { return name + ":" + std::to_string(line_number) + ": "; };
    const std::int64_t count = for_each_cell(line, delimiter, [&](std::string_view cell, std::int64_t j) {
      if (!first_row && j >= parsed.cols) return true;  // only counted; reported below
      double value = 0;
      switch (parse_cell(cell, value)) {
        case CellKind::number:
          break;
        case CellKind::not_a_number:
          throw Error(where() + "column " + std::to_string(j + 1) + ": not a number: " + quoted(cell));
        case CellKind::non_finite:
          throw Error(where() + "column " + std::to_string(j + 1) + ": non-finite value " + quoted(cell));
      }
      parsed.values.push_back(value);
      return true;
    });
    if (first_row) {
      parsed.cols = count;
      first_row = false;
      // Rough guess of the total from the first line's length saves regrowth.
      const std::size_t guess_rows = reader.remaining_bytes() / (line.size() + 1) + 1;
      parsed.values.reserve(guess_rows * static_cast<std::size_t>(count));
    } else if (count != parsed.cols) {
      throw Error(where() + "expected " + std::to_string(parsed.cols) + " values, found " +
                  std::to_string(count));
    }
    ++parsed.rows;
  } while (reader.next_content_line(line));
  parsed.values.shrink_to_fit();
  return parsed;
}

ParsedText parse_text_file(const std::string& path) {
  std::string text;
  {
    ReadOnlyFile file(path);
    text = file.read_all();
  }
  return parse_text(text, path);
}

}  // namespace kembed::io
