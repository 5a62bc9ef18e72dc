#include "kembed/io/categorical_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>

#include "io/read_only_file.hpp"
#include "kembed/core/error.hpp"

namespace kembed::io {

namespace {

std::string trimmed(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

// Cells of one line split at `delimiter`, quotes respected and removed.
std::vector<std::string> split(std::string_view line, char delimiter, const std::string& where) {
  std::vector<std::string> cells;
  std::string cell;
  bool quoted = false, was_quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch != '"') {
        cell += ch;
      } else if (i + 1 < line.size() && line[i + 1] == '"') {
        cell += '"';
        ++i;
      } else {
        quoted = false;
      }
    } else if (ch == '"' && trimmed(cell).empty()) {
      quoted = was_quoted = true;
      cell.clear();
    } else if (ch == delimiter) {
      cells.push_back(was_quoted ? cell : trimmed(cell));
      cell.clear();
      was_quoted = false;
    } else {
      cell += ch;
    }
  }
  if (quoted) throw Error(where + ": a quoted cell is not closed on its line");
  cells.push_back(was_quoted ? cell : trimmed(cell));
  return cells;
}

bool is_integer(const std::string& s, long long& value) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  value = std::strtoll(s.c_str(), &end, 10);
  return errno == 0 && *end == '\0';
}

// The 0-based column of `id` (a header name, or a 1-based number when all
// digits) among the header's cells.
std::size_t id_column_index(const std::string& id, const std::vector<std::string>& header,
                            const std::string& where) {
  if (id.find_first_not_of("0123456789") == std::string::npos) {
    const std::size_t k = id.size() > 9 ? SIZE_MAX : std::stoul(id);
    if (k < 1 || k > header.size())
      throw Error(where + ": --id-column " + id + ": columns are numbered 1 to " +
                  std::to_string(header.size()));
    return k - 1;
  }
  const auto found = std::find(header.begin(), header.end(), id);
  if (found == header.end()) {
    std::string list;
    for (const std::string& h : header) list += (list.empty() ? "" : ", ") + h;
    throw Error(where + ": --id-column '" + id + "' is not in the header (" + list + ")");
  }
  return std::size_t(found - header.begin());
}

}  // namespace

CategoricalTable parse_categorical(std::string_view text, const std::string& name,
                                   const std::string& id_column) {
  CategoricalTable table;
  // Per variable: each distinct value and the code of its first appearance;
  // the codes are renumbered in sorted order at the end. A cell costs its
  // 4-byte code, not a string of its text (32 bytes and more).
  std::vector<std::unordered_map<std::string, std::int32_t>> seen_values;
  char delimiter = ',';
  std::size_t id_at = SIZE_MAX;  // file column of the ids, if any
  std::int64_t line_number = 0;
  std::size_t pos = 0;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") pos = 3;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    const std::string content = trimmed(line);
    if (content.empty() || content[0] == '#') continue;
    const std::string where = name + ":" + std::to_string(line_number);
    if (table.variables.empty()) {
      if (content.find(',') == std::string::npos && content.find('\t') != std::string::npos)
        delimiter = '\t';
      table.variables = split(line, delimiter, where);
      std::set<std::string> seen;
      for (std::size_t q = 0; q < table.variables.size(); ++q) {
        const std::string& v = table.variables[q];
        if (v.empty())
          throw Error(where + ": the header (variable names) has an empty name in column " +
                      std::to_string(q + 1));
        if (!seen.insert(v).second)
          throw Error(where + ": the header names variable '" + v + "' twice");
      }
      if (!id_column.empty()) {
        id_at = id_column_index(id_column, table.variables, where);
        table.variables.erase(table.variables.begin() + std::ptrdiff_t(id_at));
        if (table.variables.empty())
          throw Error(where + ": the id column is the only column; no variable is left");
      }
      seen_values.resize(table.variables.size());
      continue;
    }
    std::vector<std::string> row = split(line, delimiter, where);
    const std::size_t expected = table.variables.size() + (id_at == SIZE_MAX ? 0 : 1);
    if (row.size() != expected)
      throw Error(where + ": " + std::to_string(row.size()) + " cells, but the header names " +
                  std::to_string(table.variables.size()) + " variables" +
                  (id_at == SIZE_MAX ? "" : " and the id column"));
    if (id_at != SIZE_MAX) {
      table.ids.push_back(std::move(row[id_at]));
      row.erase(row.begin() + std::ptrdiff_t(id_at));
    }
    for (std::size_t q = 0; q < row.size(); ++q)
      if (row[q].empty())
        throw Error(where + ", column " + std::to_string(q + 1 + (q >= id_at ? 1 : 0)) +
                    " (variable '" +
                    table.variables[q] +
                    "'): empty cell; code a missing answer as a category of its own");
    for (std::size_t q = 0; q < row.size(); ++q) {
      auto& values = seen_values[q];
      const auto code = std::int32_t(values.size());
      table.codes.push_back(values.try_emplace(std::move(row[q]), code).first->second);
    }
    ++table.rows;
  }
  if (table.variables.empty() || table.rows == 0)
    throw Error(name + ": no data: a header of variable names and at least one row are needed");

  const std::size_t q_count = table.variables.size();
  table.levels.resize(q_count);
  for (std::size_t q = 0; q < q_count; ++q) {
    bool integers = true;
    std::vector<std::string> levels;
    for (const auto& [value, first] : seen_values[q]) {
      long long ignored = 0;
      levels.push_back(value);
      integers = integers && is_integer(value, ignored);
    }
    std::sort(levels.begin(), levels.end());
    if (integers)
      std::stable_sort(levels.begin(), levels.end(),
                       [](const std::string& a, const std::string& b) {
                         long long x = 0, y = 0;
                         is_integer(a, x);
                         is_integer(b, y);
                         return x < y;
                       });
    // First-appearance code -> position among the sorted levels.
    std::vector<std::int32_t> renumber(levels.size());
    for (std::size_t c = 0; c < levels.size(); ++c)
      renumber[std::size_t(seen_values[q].at(levels[c]))] = std::int32_t(c);
    seen_values[q].clear();
    for (std::size_t at = q; at < table.codes.size(); at += q_count)
      table.codes[at] = renumber[std::size_t(table.codes[at])];
    table.levels[q] = std::move(levels);
  }
  return table;
}

std::unique_ptr<SparseMatrixInput> open_indicator_matrix(const Comm& comm, const std::string& path,
                                                         const std::string& id_column) {
  std::vector<std::int32_t> columns;  // rank 0: each row's Q indicator columns, rows in order
  std::vector<std::string> names, ids;
  long long rows = 0, variables = 0, categories = 0;
  collectively(comm, [&] {
    if (!comm.is_root()) return;
    // ReadOnlyFile refuses devices (/dev/zero would never end) by name.
    CategoricalTable table = parse_categorical(ReadOnlyFile(path).read_all(), path, id_column);
    ids = std::move(table.ids);
    rows = table.rows;
    variables = static_cast<long long>(table.variables.size());
    // The codes become the columns in place: variable q's categories are
    // the columns [offset_q, offset_q + L_q), so each row's are ascending.
    std::vector<std::int64_t> offsets{0};
    for (std::size_t q = 0; q < table.variables.size(); ++q) {
      offsets.push_back(offsets.back() + std::int64_t(table.levels[q].size()));
      for (const auto& level : table.levels[q]) names.push_back(table.variables[q] + ":" + level);
    }
    categories = offsets.back();
    if (categories > INT32_MAX)
      throw Error(path + ": " + std::to_string(categories) +
                  " categories in all; the indicator matrix takes at most 2^31 - 1 columns");
    columns = std::move(table.codes);
    for (std::size_t at = 0; at < columns.size(); ++at)
      columns[at] += std::int32_t(offsets[at % std::size_t(variables)]);
  });
  comm.broadcast(&rows, 1);
  comm.broadcast(&variables, 1);
  comm.broadcast(&categories, 1);

  // Every row stores Q entries, so equal row counts are the sparse readers'
  // split by stored entries; rank 0 sends each rank its rows' columns.
  const int ranks = comm.size();
  const auto first_of = [&](int r) { return rows / ranks * r + rows % ranks * r / ranks; };
  std::vector<std::int64_t> send_counts(static_cast<std::size_t>(ranks), 0);
  if (comm.is_root())
    for (int r = 0; r < ranks; ++r)
      send_counts[std::size_t(r)] = (first_of(r + 1) - first_of(r)) * variables;
  CsrRows csr;
  csr.rows = rows;
  csr.cols = categories;
  csr.first_row = first_of(comm.rank());
  csr.columns = comm.alltoallv(columns, send_counts);
  columns = {};
  const std::int64_t local = first_of(comm.rank() + 1) - csr.first_row;
  csr.offsets.resize(std::size_t(local) + 1);
  for (std::int64_t i = 0; i <= local; ++i) csr.offsets[std::size_t(i)] = i * variables;
  csr.values.assign(csr.columns.size(), 1.0);
  return SparseMatrixInput::from_rows(comm, path, "categorical", std::move(csr), std::move(names),
                                      std::move(ids));
}

}  // namespace kembed::io
