#include "kembed/spectral/input_shape.hpp"

namespace kembed::spectral {

std::string input_shape_error(const io::MatrixFile& file, bool square_matrix,
                              const std::string& not_square, const std::string& method,
                              const std::string& items, int components) {
  const auto n = file.rows();
  if (square_matrix && file.rows() != file.cols())
    return file.path() + ": " + not_square + ", found " + std::to_string(file.rows()) + " x " +
           std::to_string(file.cols());
  if (n < 2)
    return file.path() + ": " + method + " needs at least 2 " + items + ", found " +
           std::to_string(n);
  if (components > n)
    return "--components " + std::to_string(components) + " exceeds the number of " + items +
           " (" + std::to_string(n) + ") in " + file.path();
  return {};
}

}  // namespace kembed::spectral
