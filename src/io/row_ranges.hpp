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

/// Global 0-based row of the `local`-th row (0-based) of the concatenated ranges.
/// @pre local < total_rows(ranges)
std::int64_t global_row(const std::vector<RowRange>& ranges, std::int64_t local);

}  // namespace kembed::io
