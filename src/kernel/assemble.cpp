#include "kembed/kernel/assemble.hpp"

#include <algorithm>
#include <cmath>

#include "kembed/kernel/local_blocks.hpp"
#include "kembed/kernel/vector_exp.hpp"

namespace kembed {

namespace {

// base^exponent by repeated squaring: at most 2 log2(exponent) products, each
// rounded once, so within a few ulp of std::pow for the small degrees of
// polynomial kernels, and several times faster.
double integer_power(double base, int exponent) {
  if (exponent < 0) return std::pow(base, exponent);
  double result = 1;
  for (; exponent > 0; exponent >>= 1) {
    if (exponent & 1) result *= base;
    base *= base;
  }
  return result;
}

}  // namespace

std::vector<double> read_panel(io::MatrixFile& file, const BlockCyclic1D& dist) {
  return file.read_rows(dist.owned_ranges());
}


void assemble_kernel(const Kernel& kernel, const std::vector<double>& row_panel,
                     const std::vector<double>& col_panel, int d, DistMatrix& k) {
  const double gamma = kernel.gamma, coef0 = kernel.coef0;
  const int degree = kernel.degree;
  if (kernel.type == KernelType::laplacian) {
    local_l1_distances(row_panel, col_panel, d, k);
    map_local_exp(k, [&](double s, int, int) { return -gamma * s; });
    return;
  }
  local_gram(row_panel, col_panel, d, k);
  switch (kernel.type) {
    case KernelType::linear:
      break;
    case KernelType::poly:
      map_local(k, [&](double g, int, int) { return integer_power(gamma * g + coef0, degree); });
      break;
    case KernelType::sigmoid:
      map_local(k, [&](double g, int, int) { return std::tanh(gamma * g + coef0); });
      break;
    case KernelType::rbf: {
      const auto xn = row_norms_squared(row_panel, k.local_rows(), d);
      const auto yn = row_norms_squared(col_panel, k.local_cols(), d);
      // exp(-gamma max(0, ||x||^2 + ||y||^2 - 2 x.y)), the clamp against
      // cancellation, a column at a time in SIMD lanes.
      for (int lj = 0; lj < k.local_cols(); ++lj)
        exp_neg_squared_distances(k.data() + std::size_t(lj) * k.ld(), xn.data(), yn[lj], gamma,
                                  std::size_t(k.local_rows()));
      break;
    }
    case KernelType::cosine: {
      auto xn = row_norms_squared(row_panel, k.local_rows(), d);
      auto yn = row_norms_squared(col_panel, k.local_cols(), d);
      for (auto* v : {&xn, &yn})
        for (double& s : *v) s = s > 0 ? 1 / std::sqrt(s) : 0;  // zero rows give 0
      map_local(k, [&](double g, int li, int lj) { return g * xn[li] * yn[lj]; });
      break;
    }
    case KernelType::laplacian:
    case KernelType::precomputed:
      break;
  }
}

void read_block_cyclic(io::MatrixFile& file, DistMatrix& k) {
  const auto& rows = k.row_dist();
  const auto& cols = k.col_dist();
  const int nb = rows.block_size();
  const std::int64_t n = k.rows(), stride = std::int64_t{nb} * k.grid().nprow();
  // Every rank takes part in every read (collective); a rank whose blocks are
  // exhausted asks for nothing.
  const std::int64_t steps = (n + stride - 1) / stride;
  for (std::int64_t step = 0; step < steps; ++step) {
    const std::int64_t begin = step * stride + std::int64_t{k.grid().myrow()} * nb;
    std::vector<io::RowRange> want;
    if (begin < n) want.push_back({begin, std::min(begin + nb, n)});
    const auto stripe = file.read_rows(want);
    if (want.empty()) continue;
    const int local_row0 = rows.to_local(begin);
    for (std::int64_t i = 0; i < want[0].size(); ++i)
      for (int lj = 0; lj < k.local_cols(); ++lj)
        k.local(local_row0 + static_cast<int>(i), lj) =
            stripe[std::size_t(i) * k.cols() + cols.to_global(lj)];
  }
}

}  // namespace kembed
