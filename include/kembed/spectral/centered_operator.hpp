#pragma once
/// @file Centering without the matrix: J A J with J = I - 1 1^T / n as a
/// SymmetricOperator around any symmetric A, given A's row means.
#include <cstdint>
#include <vector>

#include "kembed/spectral/symmetric_operator.hpp"

namespace kembed::spectral {

/// A~ = A - 1 m^T - m 1^T + g 1 1^T = J A J, where m = A 1 / n are the row
/// means of the symmetric A and g = 1^T A 1 / n^2 its grand mean (the
/// centering of spectral/centering.hpp: kernel PCA's K~, MDS's B from
/// A = -1/2 D^(2)). A product: A~ X = A X - 1 (m^T X) - m (1^T X) + g 1 (1^T X),
/// one product with A and one sum over the ranks of 2 w values.
class CenteredOperator final : public SymmetricOperator {
 public:
  /// @pre `a` outlives this operator; row_means has length n (every rank)
  CenteredOperator(SymmetricOperator& a, const std::vector<double>& row_means, double grand_mean);

  std::int64_t order() const override { return a_.order(); }
  const BlacsGrid& grid() const override { return a_.grid(); }
  int block_size() const override { return a_.block_size(); }
  const BlockCyclic1D& rows() const override { return a_.rows(); }
  void apply(const double* x, int ldx, int width, double* y, int ldy) override;
  bool exact_products() const override { return a_.exact_products(); }
  OperatorCost cost(int width) const override;

 private:
  SymmetricOperator& a_;
  std::vector<double> means_;  // m at this rank's rows
  double grand_mean_;
  std::vector<double> sums_;
};

}  // namespace kembed::spectral
