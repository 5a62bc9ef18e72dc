// The Matrix Market coordinate format: banner, comments, size line and
// entries, parsed from text into CSR (serial; see mtx_parser.hpp).
#include "io/mtx_parser.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "kembed/core/error.hpp"

namespace kembed::io {

namespace {

std::string mtx_lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// Bounded, printable rendering of a token for messages.
std::string mtx_shown(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 30)) out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  return "'" + out + (s.size() > 30 ? "...'" : "'");
}

/// Lines of the text, numbered from 1, split into whitespace-separated mtx_tokens.
class MtxLines {
 public:
  /// From byte `pos` of `text`, the line before it numbered `number`.
  explicit MtxLines(std::string_view text, std::size_t pos = 0, std::int64_t number = 0)
      : text_(text), pos_(pos), number_(number) {}
  /// The next line; false at the end of the text.
  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    const std::size_t end = std::min(text_.find('\n', pos_), text_.size());
    line = text_.substr(pos_, end - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = end + 1;
    ++number_;
    return true;
  }
  std::int64_t number() const { return number_; }
  /// The offset where the next line starts.
  std::size_t pos() const { return pos_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::int64_t number_ = 0;
};

std::vector<std::string_view> mtx_tokens(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    const std::size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

bool mtx_blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

bool mtx_integer(std::string_view s, std::int64_t& value) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && end == s.data() + s.size();
}

bool mtx_real(std::string_view s, double& value) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

MtxHeader parse_mtx_header(std::string_view text, const std::string& path, std::int64_t max_rows) {
  MtxLines lines(text);
  std::string_view line;
  const auto at = [&](std::int64_t number) { return path + ": line " + std::to_string(number) + ": "; };
  const std::string expected = "expected '%%MatrixMarket matrix coordinate real|integer|pattern general|symmetric'";
  if (!lines.next(line)) throw Error(path + ": empty file; not a Matrix Market file (" + expected + ")");
  const std::vector<std::string_view> banner = mtx_tokens(line);
  if (banner.empty() || mtx_lowered(banner[0]) != "%%matrixmarket")
    throw Error(at(1) + "not a Matrix Market file (no %%MatrixMarket banner; " + expected + ")");
  if (banner.size() != 5) throw Error(at(1) + "the banner has " + std::to_string(banner.size()) + " words; " + expected);
  const std::string object = mtx_lowered(banner[1]), format = mtx_lowered(banner[2]), field = mtx_lowered(banner[3]),
                    symmetry = mtx_lowered(banner[4]);
  if (object != "matrix") throw Error(at(1) + "object " + mtx_shown(banner[1]) + " is not supported; " + expected);
  if (format == "array")
    throw Error(at(1) + "a dense 'array' file is not read as a sparse matrix; write it in 'coordinate' format "
                        "(scipy: scipy.io.mmwrite(out, scipy.sparse.coo_matrix(scipy.io.mmread(in))))");
  if (format != "coordinate") throw Error(at(1) + "format " + mtx_shown(banner[2]) + " is not supported; " + expected);
  if (field == "complex") throw Error(at(1) + "complex values are not supported; " + expected);
  if (field != "real" && field != "integer" && field != "pattern")
    throw Error(at(1) + "field " + mtx_shown(banner[3]) + " is not supported; " + expected);
  if (symmetry == "hermitian" || symmetry == "skew-symmetric")
    throw Error(at(1) + "'" + symmetry + "' matrices are not supported; " + expected);
  if (symmetry != "general" && symmetry != "symmetric")
    throw Error(at(1) + "symmetry " + mtx_shown(banner[4]) + " is not supported; " + expected);
  const bool pattern = field == "pattern";
  const bool symmetric = symmetry == "symmetric";

  // Comments and mtx_blank lines, then the size line "rows columns entries".
  std::vector<std::string_view> size;
  while (lines.next(line)) {
    if (mtx_blank(line) || line.front() == '%') continue;
    size = mtx_tokens(line);
    break;
  }
  if (size.empty()) throw Error(path + ": ends before the size line 'rows columns entries'");
  const std::int64_t size_line = lines.number();
  std::int64_t rows = 0, cols = 0, entries = 0;
  if (size.size() != 3 || !mtx_integer(size[0], rows) || !mtx_integer(size[1], cols) ||
      !mtx_integer(size[2], entries) || rows < 0 || cols < 0 || entries < 0)
    throw Error(at(size_line) + "expected the size line 'rows columns entries' (three non-negative integers)");
  if (rows > max_rows)
    throw Error(at(size_line) + std::to_string(rows) + " rows is more than kembed supports (" +
                (max_rows == mtx_max_rows ? std::string("2^62") : std::to_string(max_rows)) + ")");
  if (cols > std::numeric_limits<std::int32_t>::max())
    throw Error(at(size_line) + std::to_string(cols) + " columns is more than kembed supports (2^31 - 1)");
  if (symmetric && rows != cols)
    throw Error(at(size_line) + "a symmetric matrix must be square; the size line says " + std::to_string(rows) +
                " x " + std::to_string(cols));
  MtxHeader header;
  header.rows = rows;
  header.cols = cols;
  header.entries = entries;
  header.pattern = pattern;
  header.symmetric = symmetric;
  header.size_line = size_line;
  header.body = std::min(lines.pos(), text.size());
  return header;
}

MtxMatrix parse_mtx(std::string_view text, const std::string& path, std::int64_t max_rows) {
  const MtxHeader header = parse_mtx_header(text, path, max_rows);
  const std::int64_t rows = header.rows, cols = header.cols, entries = header.entries;
  const bool pattern = header.pattern, symmetric = header.symmetric;
  MtxLines lines(text, header.body, header.size_line);
  std::string_view line;
  const auto at = [&](std::int64_t number) { return path + ": line " + std::to_string(number) + ": "; };

  // Read as coordinates first: the rows are counted before CSR is built.
  const std::size_t guess = static_cast<std::size_t>(std::min<std::int64_t>(entries, static_cast<std::int64_t>(text.size() / 4)));
  std::vector<std::int64_t> row_of, col_of;
  std::vector<double> value_of;
  row_of.reserve(guess);
  col_of.reserve(guess);
  value_of.reserve(guess);
  const std::size_t fields = pattern ? 2 : 3;
  std::int64_t seen = 0;
  while (lines.next(line)) {
    if (mtx_blank(line) || line.front() == '%') continue;
    const std::vector<std::string_view> t = mtx_tokens(line);
    if (seen == entries)
      throw Error(at(lines.number()) + "more entries than the " + std::to_string(entries) + " the size line declares");
    if (t.size() != fields)
      throw Error(at(lines.number()) + "expected " + (pattern ? "'row column'" : "'row column value'") + ", found " +
                  std::to_string(t.size()) + " fields");
    std::int64_t i = 0, j = 0;
    double v = 1.0;
    if (!mtx_integer(t[0], i)) throw Error(at(lines.number()) + "row " + mtx_shown(t[0]) + " is not an integer");
    if (!mtx_integer(t[1], j)) throw Error(at(lines.number()) + "column " + mtx_shown(t[1]) + " is not an integer");
    if (i < 1 || i > rows)
      throw Error(at(lines.number()) + "row " + std::to_string(i) + " is outside 1.." + std::to_string(rows));
    if (j < 1 || j > cols)
      throw Error(at(lines.number()) + "column " + std::to_string(j) + " is outside 1.." + std::to_string(cols));
    if (!pattern) {
      if (!mtx_real(t[2], v)) throw Error(at(lines.number()) + "value " + mtx_shown(t[2]) + " is not a number");
      if (!std::isfinite(v)) throw Error(at(lines.number()) + "non-finite value " + mtx_shown(t[2]));
    }
    row_of.push_back(i - 1);
    col_of.push_back(j - 1);
    value_of.push_back(v);
    ++seen;
  }
  if (seen < entries)
    throw Error(path + ": ends after " + std::to_string(seen) + " of the " + std::to_string(entries) +
                " entries the size line declares (truncated?)");

  MtxMatrix m;
  m.rows = rows;
  m.cols = cols;
  // A symmetric file stores one triangle: each entry off the diagonal
  // stands for itself and its mirror (as scipy.io.mmread reads it).
  std::vector<std::int64_t> count(static_cast<std::size_t>(rows) + 1, 0);
  for (std::size_t k = 0; k < row_of.size(); ++k) {
    ++count[static_cast<std::size_t>(row_of[k]) + 1];
    if (symmetric && row_of[k] != col_of[k]) ++count[static_cast<std::size_t>(col_of[k]) + 1];
  }
  for (std::size_t r = 1; r < count.size(); ++r) count[r] += count[r - 1];
  m.indptr = count;
  m.columns.resize(static_cast<std::size_t>(count.back()));
  m.values.resize(static_cast<std::size_t>(count.back()));
  const auto put = [&](std::int64_t r, std::int64_t c, double v) {
    const auto k = static_cast<std::size_t>(count[static_cast<std::size_t>(r)]++);
    m.columns[k] = static_cast<std::int32_t>(c);
    m.values[k] = v;
  };
  for (std::size_t k = 0; k < row_of.size(); ++k) {
    put(row_of[k], col_of[k], value_of[k]);
    if (symmetric && row_of[k] != col_of[k]) put(col_of[k], row_of[k], value_of[k]);
  }
  return m;
}

}  // namespace kembed::io
