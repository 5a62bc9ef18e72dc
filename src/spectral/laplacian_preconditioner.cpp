#include "kembed/spectral/laplacian_preconditioner.hpp"

#include <algorithm>
#include <cmath>

namespace kembed::spectral {

NormalizedLaplacianPreconditioner::NormalizedLaplacianPreconditioner(graph::GraphMultigrid& mg)
    : mg_(mg) {
  for (double d : mg.degrees()) sqrt_degree_.push_back(std::sqrt(d));
}

void NormalizedLaplacianPreconditioner::apply(const double* r, int ldr, int width, double* z,
                                              int ldz) {
  const int rows = static_cast<int>(sqrt_degree_.size()), ld = std::max(1, rows);
  scaled_.resize(std::size_t(ld) * width);
  for (int c = 0; c < width; ++c)
    for (int i = 0; i < rows; ++i)
      scaled_[i + std::size_t(c) * ld] = sqrt_degree_[i] * r[i + std::size_t(c) * ldr];
  mg_.solve(scaled_.data(), ld, width, z, ldz);
  for (int c = 0; c < width; ++c)
    for (int i = 0; i < rows; ++i) z[i + std::size_t(c) * ldz] *= sqrt_degree_[i];
}

}  // namespace kembed::spectral
