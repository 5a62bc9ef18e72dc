#pragma once
/// @file Distances between two row panels held as plain row-major arrays
/// (no distributed matrix): the point-to-landmark distances of the landmark
/// methods, with the same formulas and overflow fallbacks as
/// assemble_distances.
#include <vector>

#include "kembed/kernel/distances.hpp"

namespace kembed::kernel {

/// out (x_rows x y_rows, row-major) <- metric(x_i, y_j), where `x` and `y`
/// hold x_rows and y_rows points of `d` coordinates each, row-major.
/// Euclidean, sqeuclidean and cosine use one dgemm (||x||^2 + ||y||^2 -
/// 2 x.y, clamped at 0); rows whose squared norm overflows (and, for the
/// cosine, rows that are badly scaled) are recomputed from their differences;
/// manhattan is summed pair by pair. The cosine distance of a zero vector
/// is undefined and the value returned for it meaningless: callers reject
/// such rows first. No communication.
void cross_distances(Metric metric, const std::vector<double>& x, const std::vector<double>& y,
                     int d, std::vector<double>& out);

}  // namespace kembed::kernel
