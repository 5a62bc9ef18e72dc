#pragma once
/// @file Data too large for PCA's sums: an error before they overflow.
#include <cstdint>
#include <string>

#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::spectral {

/// Largest |x_ij| of n x d data for which PCA's column means, centered
/// cross products (covariance d x d or Gram n x n, each entry a sum of n or d
/// products of centered values up to 2 |x|) and their norms stay finite:
/// sqrt(DBL_MAX / (16 n max(n, d))).
double largest_pca_magnitude(std::int64_t n, std::int64_t d);

/// Collective: an agreed Error naming `source` and the first entry (row-major,
/// 1-based row and column) of the data matrix `x` whose magnitude exceeds
/// largest_pca_magnitude(rows, cols), with its value: "values too large".
void check_pca_magnitude(const DistMatrix& x, const std::string& source);

/// Collective: the same check and message for n x d data of which every rank
/// holds the contiguous row-major rows [first_row, first_row + rows) in
/// `values` (row panels).
void check_pca_magnitude(const Comm& comm, const double* values, std::int64_t rows,
                         std::int64_t first_row, std::int64_t n, std::int64_t d,
                         const std::string& source);

}  // namespace kembed::spectral
