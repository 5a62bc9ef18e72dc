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

std::vector<RowRange> contiguous_runs(const std::vector<RowRange>& ranges) {
  std::vector<RowRange> runs;
  for (const RowRange& r : ranges) {
    if (r.size() == 0) continue;
    if (!runs.empty() && runs.back().end == r.begin) runs.back().end = r.end;
    else runs.push_back(r);
  }
  return runs;
}

std::vector<RegularRuns> regular_groups(const std::vector<RowRange>& runs) {
  std::vector<RegularRuns> groups;
  for (std::size_t i = 0; i < runs.size();) {
    RegularRuns g{runs[i].begin, runs[i].size(), runs[i].size(), 1};
    if (i + 1 < runs.size() && runs[i + 1].size() == g.length) {
      g.stride = runs[i + 1].begin - g.first;
      while (i + g.count < runs.size() && runs[i + g.count].size() == g.length &&
             runs[i + g.count].begin == g.first + g.count * g.stride)
        ++g.count;
    }
    groups.push_back(g);
    i += static_cast<std::size_t>(g.count);
  }
  return groups;
}

std::int64_t global_row(const std::vector<RowRange>& ranges, std::int64_t local) {
  for (const RowRange& r : ranges) {
    if (local < r.size()) return r.begin + local;
    local -= r.size();
  }
  return -1;
}

}  // namespace kembed::io
