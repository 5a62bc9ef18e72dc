#pragma once
/// @file Validating a distributed distance matrix, in parallel.
#include <cstdint>
#include <optional>
#include <string>

#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::kernel {

/// Relative tolerance (of max |d_ij|) within which a distance matrix counts
/// as symmetric and its diagonal as zero.
inline constexpr double kDistanceTolerance = 1e-10;

/// One entry of a distributed matrix that breaks a rule.
struct Offender {
  std::int64_t i = 0, j = 0;  ///< 0-based global indices
  double value = 0;
};

/// Collective: the first diagonal entry (lowest i) with |d_ii| > tolerance,
/// or nothing. @pre square
std::optional<Offender> find_nonzero_diagonal(const DistMatrix& d, double tolerance);

/// Collective: the first negative entry in row-major order, or nothing.
std::optional<Offender> find_negative(const DistMatrix& d);

/// Largest |d_ij| whose square MDS can take and sum over n entries (the row
/// sums of -1/2 D^(2) in double centering) without overflow: sqrt(DBL_MAX / (4 n)).
double largest_squarable_distance(std::int64_t n);

/// Collective: an agreed Error naming `source` and the first entry (1-based,
/// row-major) of `d` that is not finite or exceeds
/// largest_squarable_distance(max(rows, cols)), with its value; d's column 0
/// is column `column_offset` of the matrix the message names.
void check_squares(const DistMatrix& d, const std::string& source,
                   std::int64_t column_offset = 0);

/// Collective: d <- (d + d^T) / 2 (one pdtran). Returns max |d_ij - d_ji|
/// before averaging, on every rank. @pre square
double symmetrize(DistMatrix& d);

/// What validation found out beyond pass or fail.
struct DistanceCheck {
  double largest = 0;                   ///< max |d_ij|
  std::optional<double> max_asymmetry;  ///< max |d_ij - d_ji| when symmetrized
};

/// Collective: checks that the square `d` read from `source` is a distance
/// matrix: zero diagonal (to kDistanceTolerance * max|d|), non-negative, and
/// symmetric to the same tolerance, in that order. Each violation is an
/// agreed Error naming `source`, the first offending (i, j) (1-based) and
/// its value. With `symmetrize_input`, asymmetry is not an error: d is
/// replaced by (d + d^T) / 2 instead. Finiteness is the readers' job; last,
/// entries too large to square and sum are an error (check_squares).
DistanceCheck validate_distances(DistMatrix& d, const std::string& source, bool symmetrize_input);

}  // namespace kembed::kernel
