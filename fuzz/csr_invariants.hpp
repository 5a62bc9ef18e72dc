#pragma once
// What every accepted sparse matrix must satisfy, for the fuzz targets of
// the sparse readers (fuzz_mtx, fuzz_npz): a violated property traps, which
// libFuzzer reports as a crash with the input that caused it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "io/csr_canonical.hpp"
#include "io/csr_row_split.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/csr_rows.hpp"

namespace kembed::fuzz {

inline void require(bool ok) {
  if (!ok) __builtin_trap();
}

/// The shape and row pointers of an accepted matrix: rows + 1 pointers
/// from 0, never decreasing, ending at the entry count.
inline void check_indptr(std::int64_t rows, std::int64_t cols, const std::vector<std::int64_t>& indptr,
                         std::int64_t entries) {
  require(rows >= 0 && cols >= 0 && cols <= std::numeric_limits<std::int32_t>::max());
  require(static_cast<std::int64_t>(indptr.size()) == rows + 1 && indptr.front() == 0);
  for (std::size_t i = 1; i < indptr.size(); ++i) require(indptr[i - 1] <= indptr[i]);
  require(indptr.back() == entries);
}

/// The rows [first, end) of an accepted matrix put into canonical form, as
/// a reader does with one rank's rows: kembed::Error (repeats summing to a
/// non-finite value) is a rejection; an accepted result has sorted, unique
/// columns in range, finite values, and per row exactly the distinct
/// columns of its raw entries.
inline void check_canonical_part(std::int64_t rows, std::int64_t cols, const std::vector<std::int64_t>& indptr,
                                 const std::vector<std::int64_t>& columns, const std::vector<double>& values,
                                 std::int64_t first, std::int64_t end) {
  io::RawCsrRows raw;
  raw.rows = rows;
  raw.cols = cols;
  raw.first_row = first;
  const std::int64_t begin = indptr[static_cast<std::size_t>(first)];
  const std::int64_t stop = indptr[static_cast<std::size_t>(end)];
  raw.offsets.assign(indptr.begin() + first, indptr.begin() + end + 1);
  for (std::int64_t& o : raw.offsets) o -= begin;
  raw.append_columns(columns.data() + begin, static_cast<std::size_t>(stop - begin));
  raw.values.assign(values.begin() + begin, values.begin() + stop);
  io::EntryNames names;
  names.file = names.indices = names.values = "fuzz";
  names.first_entry = begin;
  io::CsrRows out;
  try {
    out = io::canonical_rows(raw, names);
  } catch (const Error&) {
    // Refused only for a column out of range, a non-finite value, or
    // repeated columns of a row (whose sum may overflow).
    bool cause = false;
    for (std::size_t k = 0; k < raw.columns.size(); ++k)
      cause = cause || raw.columns[k] < 0 || raw.columns[k] >= cols || !std::isfinite(raw.values[k]);
    for (std::size_t i = 0; !cause && i + 1 < raw.offsets.size(); ++i) {
      std::vector<std::int64_t> row(raw.columns.begin() + raw.offsets[i], raw.columns.begin() + raw.offsets[i + 1]);
      std::sort(row.begin(), row.end());
      cause = std::adjacent_find(row.begin(), row.end()) != row.end();
    }
    require(cause);
    return;
  }
  // Accepted: every stored column was in range and narrowed unchanged.
  for (std::int64_t k = begin; k < stop; ++k) require(raw.columns[static_cast<std::size_t>(k - begin)] == columns[static_cast<std::size_t>(k)]);
  require(out.rows == rows && out.cols == cols && out.first_row == first);
  require(out.local_rows() == end - first && out.offsets.front() == 0);
  require(out.offsets.back() == out.nonzeros() && out.columns.size() == out.values.size());
  std::vector<std::int64_t> distinct;
  for (std::int64_t i = 0; i < out.local_rows(); ++i) {
    const auto a = static_cast<std::size_t>(out.offsets[static_cast<std::size_t>(i)]);
    const auto b = static_cast<std::size_t>(out.offsets[static_cast<std::size_t>(i) + 1]);
    require(a <= b);
    for (std::size_t k = a; k < b; ++k) {
      require(out.columns[k] >= 0 && out.columns[k] < cols && std::isfinite(out.values[k]));
      if (k > a) require(out.columns[k - 1] < out.columns[k]);
    }
    distinct.assign(raw.columns.begin() + raw.offsets[static_cast<std::size_t>(i)],
                    raw.columns.begin() + raw.offsets[static_cast<std::size_t>(i) + 1]);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    require(distinct.size() == b - a);
    for (std::size_t k = a; k < b; ++k) require(distinct[k - a] == out.columns[k]);
  }
}

/// An accepted matrix split over `parts` ranks as the readers split it:
/// the split covers the rows in order, and each part is canonicalized.
inline void check_split(std::int64_t rows, std::int64_t cols, const std::vector<std::int64_t>& indptr,
                        const std::vector<std::int64_t>& columns, const std::vector<double>& values, int parts) {
  const std::vector<std::int64_t> split = io::split_rows_by_entries(indptr, parts);
  require(static_cast<int>(split.size()) == parts + 1 && split.front() == 0 && split.back() == rows);
  for (int r = 0; r < parts; ++r) {
    require(split[static_cast<std::size_t>(r)] <= split[static_cast<std::size_t>(r) + 1]);
    check_canonical_part(rows, cols, indptr, columns, values, split[static_cast<std::size_t>(r)],
                         split[static_cast<std::size_t>(r) + 1]);
  }
}

}  // namespace kembed::fuzz
