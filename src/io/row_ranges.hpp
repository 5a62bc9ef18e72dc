#pragma once
/// @file Private: checks on the row ranges that ranks pass to read_rows().
#include <cstdint>
#include <string>
#include <vector>

#include "kembed/io/matrix_file.hpp"

namespace kembed::io {

/// Empty when `ranges` are ascending, disjoint and inside [0, rows);
/// otherwise a message naming `path`, for agree().
std::string check_row_ranges(const std::vector<RowRange>& ranges, std::int64_t rows,
                             const std::string& path);

/// Sum of the sizes of `ranges`.
std::int64_t total_rows(const std::vector<RowRange>& ranges);

/// The non-empty runs of contiguous rows in `ranges` (ascending, disjoint),
/// ranges that touch joined into one.
std::vector<RowRange> contiguous_runs(const std::vector<RowRange>& ranges);

/// `count` runs of `length` rows, the i-th starting at row first + i * stride.
struct RegularRuns {
  std::int64_t first = 0, stride = 0, length = 0, count = 0;
};

/// `runs` (from contiguous_runs()) as regular groups, each as long as it can
/// be, from the first run on: the runs of a block-cyclic layout make one group
/// (two when the last block is short), so a reader that selects rows by
/// regular patterns (HDF5 hyperslabs) makes one or two selections, not one
/// per block.
std::vector<RegularRuns> regular_groups(const std::vector<RowRange>& runs);

/// Global 0-based row of the `local`-th row (0-based) of the concatenated ranges.
/// @pre local < total_rows(ranges)
std::int64_t global_row(const std::vector<RowRange>& ranges, std::int64_t local);

}  // namespace kembed::io
