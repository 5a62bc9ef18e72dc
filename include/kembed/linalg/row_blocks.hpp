#pragma once
/// @file A distributed matrix as consecutive whole rows per rank: the layout
/// of a row-major file that every rank writes its own part of.
#include <cstdint>
#include <vector>

#include "kembed/linalg/dist_matrix.hpp"

namespace kembed {

/// One rank's consecutive rows of a matrix, row-major.
struct RowBlock {
  std::int64_t first_row = 0;
  std::int64_t rows = 0;
  std::vector<double> values;  ///< rows x cols
};

/// Collective: `a` redistributed (pdgemr2d onto a P x 1 grid) so that rank
/// r holds rows [r b, (r + 1) b) with b = ceil(m / P) (the last ranks fewer
/// or none), row-major. Each rank holds about m n / P values; none holds all.
RowBlock contiguous_rows(const DistMatrix& a);

}  // namespace kembed
