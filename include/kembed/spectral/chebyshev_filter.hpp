#pragma once
/// @file A Chebyshev polynomial filter p(A) of a symmetric operator whose
/// spectrum lies in a known interval [lower, upper]: p damps [lower, cut] to
/// at most 1/T_m(L(upper)) in magnitude and grows steeply and monotonically
/// on [cut, upper], with p(upper) = 1. Its eigenvectors are A's, and its
/// eigenvalues above the cut keep A's order, so the Krylov solver finds
/// A's top pairs from p(A) as long as at least as many of A's eigenvalues as
/// are wanted exceed the cut (checked afterwards: each returned vector's
/// Rayleigh quotient with A must exceed the cut). One product of p(A) costs
/// `degree` products of A and no orthogonalization: for a sparse A, whose
/// products are cheap beside the Krylov basis's Gram-Schmidt, the same
/// polynomial degree then costs far fewer basis vectors. (Zhou and Saad,
/// "Chebyshev-filtered subspace iteration", 2007, the scaled recurrence.)
#include <vector>

#include "kembed/spectral/symmetric_operator.hpp"

namespace kembed::spectral {

struct ChebyshevInterval {
  double lower = -1;  ///< a lower bound of A's spectrum
  double cut = 0;     ///< the top of the damped interval, lower < cut < upper
  double upper = 1;   ///< where p = 1 (A's largest eigenvalue or an upper bound)
};

class ChebyshevFilter final : public SymmetricOperator {
 public:
  /// p(A) = T_m(L(A)) / T_m(L(upper)), L mapping [lower, cut] onto [-1, 1];
  /// m = `degree` >= 1. `a` must outlive the filter.
  ChebyshevFilter(SymmetricOperator& a, int degree, ChebyshevInterval interval);

  std::int64_t order() const override { return a_.order(); }
  const BlacsGrid& grid() const override { return a_.grid(); }
  int block_size() const override { return a_.block_size(); }
  const BlockCyclic1D& rows() const override { return a_.rows(); }
  /// Collective: y = p(A) x, `degree` products of A.
  void apply(const double* x, int ldx, int width, double* y, int ldy) override;
  bool exact_products() const override { return a_.exact_products(); }
  OperatorCost cost(int width) const override;

  /// p(lambda) for a scalar: the same recurrence (for tests and for choosing the degree).
  double value(double lambda) const;
  int degree() const { return degree_; }
  const ChebyshevInterval& interval() const { return interval_; }

 private:
  SymmetricOperator& a_;
  int degree_;
  ChebyshevInterval interval_;
  std::vector<double> prev_, cur_, next_;
};

}  // namespace kembed::spectral
