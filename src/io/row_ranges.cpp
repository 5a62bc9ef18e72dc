#include "io/row_ranges.hpp"

namespace kembed::io {

std::string check_row_ranges(const std::vector<RowRange>& ranges, std::int64_t rows,
                             const std::string& path) {
  std::int64_t previous_end = 0;
  for (const RowRange& r : ranges) {
    const std::string shown = "[" + std::to_string(r.begin) + ", " + std::to_string(r.end) + ")";
    if (r.begin < 0 || r.end < r.begin || r.end > rows)
      return path + ": requested rows " + shown + " are outside the matrix of " + std::to_string(rows) +
             " rows";
    if (r.begin < previous_end)
      return path + ": requested rows " + shown + " overlap or precede an earlier range";
    previous_end = r.end;
  }
  return {};
}

std::int64_t total_rows(const std::vector<RowRange>& ranges) {
  std::int64_t total = 0;
  for (const RowRange& r : ranges) total += r.size();
  return total;
}

std::int64_t global_row(const std::vector<RowRange>& ranges, std::int64_t local) {
  for (const RowRange& r : ranges) {
    if (local < r.size()) return r.begin + local;
    local -= r.size();
  }
  return -1;
}

}  // namespace kembed::io
