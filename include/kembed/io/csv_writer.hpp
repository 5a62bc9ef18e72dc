#pragma once
/// @file CSV text of result tables, in full double precision.
#include <string>
#include <vector>

namespace kembed::io {

/// A header line with the given column names, then `rows` lines of the
/// row-major `values` (rows x header.size()), each value printed "%.17g" so
/// that it reads back as the same double.
std::string format_csv(const std::vector<std::string>& header, const std::vector<double>& values);

/// Column names prefix1, prefix2, ..., prefixK.
std::vector<std::string> numbered_columns(const std::string& prefix, int k);

}  // namespace kembed::io
