#pragma once
/// @file Checking that a distributed matrix is symmetric.
#include <cstdint>
#include <optional>

#include "kembed/linalg/dist_matrix.hpp"

namespace kembed {

/// An entry (i, j) where A differs from A^T, with both values.
struct Asymmetry {
  std::int64_t i = 0, j = 0;  ///< 0-based, i > j
  double a_ij = 0, a_ji = 0;
};

/// Collective: the first entry in column-major order of the strict lower
/// triangle with |a_ij - a_ji| > tolerance * max|a|, or nothing if `a` is
/// symmetric to that relative tolerance. Uses one transposed copy of `a`.
std::optional<Asymmetry> find_asymmetry(const DistMatrix& a, double tolerance);

}  // namespace kembed
