#include "io/csr_row_split.hpp"

#include <algorithm>

namespace kembed::io {

std::string indptr_problem(const std::vector<std::int64_t>& indptr, std::int64_t entries, const std::string& where) {
  if (indptr.empty()) return where + ": is empty; it needs rows + 1 values";
  if (indptr.front() != 0) return where + ": starts at " + std::to_string(indptr.front()) + ", not 0";
  for (std::size_t i = 1; i < indptr.size(); ++i)
    if (indptr[i] < indptr[i - 1])
      return where + ": decreases at position " + std::to_string(i) + " (" + std::to_string(indptr[i - 1]) + " then " +
             std::to_string(indptr[i]) + "); row pointers must not decrease";
  if (indptr.back() != entries)
    return where + ": ends at " + std::to_string(indptr.back()) + " but the matrix stores " + std::to_string(entries) +
           " entries";
  return {};
}

std::vector<std::int64_t> split_rows_by_entries(const std::vector<std::int64_t>& indptr, int parts) {
  const auto rows = static_cast<std::int64_t>(indptr.size()) - 1;
  const std::int64_t nnz = indptr.back();
  std::vector<std::int64_t> split(static_cast<std::size_t>(parts) + 1, rows);
  split[0] = 0;
  for (int r = 1; r < parts; ++r) {
    if (nnz == 0) {
      split[static_cast<std::size_t>(r)] = rows / parts * r + rows % parts * r / parts;
      continue;
    }
    // floor(r * nnz / parts) without overflow.
    const std::int64_t target = nnz / parts * r + nnz % parts * r / parts;
    const auto first = std::lower_bound(indptr.begin(), indptr.end(), target) - indptr.begin();
    split[static_cast<std::size_t>(r)] = std::max<std::int64_t>(first, split[static_cast<std::size_t>(r) - 1]);
  }
  return split;
}

}  // namespace kembed::io
