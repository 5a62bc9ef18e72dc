#include "kembed/spectral/additive_constant.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kembed/core/error.hpp"
#include "kembed/kernel/distances.hpp"
#include "kembed/linalg/nonsymmetric_eigenvalues.hpp"
#include "kembed/linalg/scalapack.hpp"
#include "kembed/spectral/centering.hpp"

namespace kembed::spectral {

namespace {

// a <- alpha a over the local block.
void multiply_entries(DistMatrix& a, double alpha) {
  for (int lj = 0; lj < a.local_cols(); ++lj)
    for (int li = 0; li < a.local_rows(); ++li) a.local(li, lj) *= alpha;
}

// -1/2 J D^(2) J (squared) or -1/2 J D J of `d`, on d's grid and blocking.
DistMatrix centered_dissimilarities(const DistMatrix& d, bool squared) {
  const std::int64_t n = d.rows();
  const int nb = d.row_dist().block_size();
  DistMatrix b = DistMatrix::uninitialized(d.grid(), n, n, nb, nb);
  copy(d, 0, 0, n, n, b, 0, 0);
  if (squared)
    kernel::square_distances(b, -0.5);
  else
    multiply_entries(b, -0.5);
  center_kernel(b);
  return b;
}

}  // namespace

std::string additive_method_name(AdditiveMethod method) {
  switch (method) {
    case AdditiveMethod::cailliez:
      return "cailliez";
    case AdditiveMethod::lingoes:
      return "lingoes";
    case AdditiveMethod::none:
      break;
  }
  return "none";
}

AdditiveConstant cailliez_constant(const DistMatrix& d) {
  const std::int64_t n = d.rows();
  // Blocks of at least 8 rows (checked against serial dgeev with 8 and 16):
  // each QR sweep exchanges messages at every block border it crosses.
  const int nb = std::max(d.row_dist().block_size(), 8);
  DistMatrix z(d.grid(), 2 * n, 2 * n, nb, nb);  // zero
  {
    DistMatrix b = centered_dissimilarities(d, true);  // B2
    multiply_entries(b, 2);
    copy(b, 0, 0, n, n, z, 0, n);
    b = centered_dissimilarities(d, false);  // B1
    multiply_entries(b, -4);
    copy(b, 0, 0, n, n, z, n, n);
  }
  for (int lj = 0; lj < z.local_cols(); ++lj) {  // -I below the zero block
    const std::int64_t j = z.col_dist().to_global(lj);
    if (j < n && z.row_dist().is_local(j + n)) z.local(z.row_dist().to_local(j + n), lj) = -1;
  }
  const scalapack::Eigenvalues w = scalapack::nonsymmetric_eigenvalues(z);
  double spread = 0;
  for (std::int64_t i = 0; i < 2 * n; ++i)
    spread = std::max(spread, std::hypot(w.real[i], w.imag[i]));
  const double tolerance = std::sqrt(std::numeric_limits<double>::epsilon()) * spread;
  AdditiveConstant c;
  c.method = AdditiveMethod::cailliez;
  c.largest_real_part = -std::numeric_limits<double>::infinity();
  double real_max = -std::numeric_limits<double>::infinity();
  for (std::int64_t i = 0; i < 2 * n; ++i) {
    c.largest_real_part = std::max(c.largest_real_part, w.real[i]);
    if (std::abs(w.imag[i]) <= tolerance)
      real_max = std::max(real_max, w.real[i]);
    else
      ++c.complex_eigenvalues;
  }
  // The eigenvalues are the same bits on every rank: so is this decision.
  agree(d.grid().comm(), std::isfinite(real_max)
                             ? ""
                             : "--add cailliez: the 2n x 2n matrix has no real eigenvalue "
                               "(within sqrt(eps) of its spectral radius); no constant found");
  c.constant = real_max;
  return c;
}

AdditiveConstant lingoes_constant(const DistMatrix& d) {
  const std::int64_t n = d.rows();
  const int nb = d.row_dist().block_size();
  DistMatrix b = centered_dissimilarities(d, true);
  DistMatrix vectors = DistMatrix::uninitialized(d.grid(), n, n, nb, nb);
  const std::vector<double> smallest = scalapack::syevr(b, 1, 1, vectors);
  AdditiveConstant c;
  c.method = AdditiveMethod::lingoes;
  c.smallest_eigenvalue = smallest.front();
  c.constant = std::max(0.0, -c.smallest_eigenvalue);
  return c;
}

double corrected_dissimilarity(AdditiveMethod method, double c, double d) {
  switch (method) {
    case AdditiveMethod::cailliez:
      return d + c;
    case AdditiveMethod::lingoes:
      return std::sqrt(d * d + 2 * c);
    case AdditiveMethod::none:
      break;
  }
  return d;
}

void apply_additive_constant(DistMatrix& d, AdditiveMethod method, double c) {
  if (method == AdditiveMethod::none) return;
  for (int lj = 0; lj < d.local_cols(); ++lj) {
    const std::int64_t j = d.col_dist().to_global(lj);
    for (int li = 0; li < d.local_rows(); ++li)
      if (d.row_dist().to_global(li) != j)
        d.local(li, lj) = corrected_dissimilarity(method, c, d.local(li, lj));
  }
}

}  // namespace kembed::spectral
