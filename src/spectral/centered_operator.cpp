#include "kembed/spectral/centered_operator.hpp"

namespace kembed::spectral {

CenteredOperator::CenteredOperator(SymmetricOperator& a, const std::vector<double>& row_means,
                                   double grand_mean)
    : a_(a), grand_mean_(grand_mean) {
  const BlockCyclic1D& rows = a.rows();
  means_.resize(rows.local_size());
  for (int l = 0; l < rows.local_size(); ++l) means_[l] = row_means[rows.to_global(l)];
}

void CenteredOperator::apply(const double* x, int ldx, int width, double* y, int ldy) {
  a_.apply(x, ldx, width, y, ldy);
  const int rows = static_cast<int>(means_.size());
  // 1^T X and m^T X over all ranks.
  sums_.assign(2 * std::size_t(width), 0.0);
  for (int j = 0; j < width; ++j) {
    const double* column = x + std::size_t(j) * ldx;
    double ones = 0, means = 0;
    for (int l = 0; l < rows; ++l) {
      ones += column[l];
      means += means_[l] * column[l];
    }
    sums_[j] = ones;
    sums_[width + j] = means;
  }
  grid().comm().sum_in_place(sums_);
  for (int j = 0; j < width; ++j) {
    const double ones = sums_[j], shift = grand_mean_ * ones - sums_[width + j];
    double* column = y + std::size_t(j) * ldy;
    for (int l = 0; l < rows; ++l) column[l] += shift - means_[l] * ones;
  }
}

OperatorCost CenteredOperator::cost(int width) const {
  OperatorCost c = a_.cost(width);
  c.held_bytes += means_.size() * sizeof(double);
  c.work_bytes += 2 * std::size_t(width) * sizeof(double);
  c.flops += 6.0 * double(means_.size()) * width;
  return c;
}

}  // namespace kembed::spectral
