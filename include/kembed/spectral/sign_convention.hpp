#pragma once
/// @file The sign convention that makes eigenvectors independent of the grid.
#include <cstdint>
#include <vector>

#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::spectral {

/// Relative tolerance within which entries count as tied for largest |v_i|.
inline constexpr double kSignTieTolerance = 1e-8;

/// Collective: flips each column of `v` so that its entry of largest absolute
/// value is positive. Among entries whose magnitude is within a relative
/// kSignTieTolerance of the largest, the first (lowest global row) decides,
/// so round-off differences between grids cannot change the choice.
/// Returns the factor (+1 or -1) applied to each column, on every rank, so
/// that quantities paired with the columns (principal axes) can follow.
std::vector<double> fix_signs(DistMatrix& v);

/// Collective over `comm`: the same rule for an n x k matrix held as one
/// contiguous range of rows per rank (the sparse readers' layout): this
/// rank's `rows` x k row-major `values`, whose row 0 is global row
/// `first_row`. Returns the factors, on every rank.
std::vector<double> fix_signs(const Comm& comm, std::int64_t first_row, std::int64_t rows, int k,
                              double* values);

}  // namespace kembed::spectral
