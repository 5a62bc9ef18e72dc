#pragma once
/// @file The shape checks every n x n method makes on its input first.
#include <string>

#include "kembed/io/matrix_file.hpp"

namespace kembed::spectral {

/// What an n x n method (kernel PCA, MDS, ...) finds wrong with its input's
/// shape, or "" when nothing: `square_matrix` when the file is the n x n
/// matrix itself (not the points), then `not_square` starts the message
/// (e.g. "a precomputed kernel must be square"); at least 2 `items` (samples,
/// points) for `method`; `components` at most n. Local: agree on it.
std::string input_shape_error(const io::MatrixFile& file, bool square_matrix,
                              const std::string& not_square, const std::string& method,
                              const std::string& items, int components);

}  // namespace kembed::spectral
