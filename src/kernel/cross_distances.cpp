#include "kembed/kernel/cross_distances.hpp"

#include <algorithm>
#include <cmath>

#include "kembed/kernel/local_blocks.hpp"
#include "kembed/kernel/scaled_distances.hpp"
#include "kembed/linalg/lapack.hpp"

namespace kembed::kernel {

namespace {

// out(i, j) <- f(i, j) for the pairs with a row of x in `rows` or a row of y
// in `cols`: the pairs the fast path cannot be trusted with.
template <class F>
void refill(std::vector<double>& out, int ny, const std::vector<int>& rows,
            const std::vector<int>& cols, F&& f) {
  const int nx = ny > 0 ? static_cast<int>(out.size() / ny) : 0;
  for (int i : rows)
    for (int j = 0; j < ny; ++j) out[std::size_t(i) * ny + j] = f(i, j);
  for (int j : cols)
    for (int i = 0; i < nx; ++i) out[std::size_t(i) * ny + j] = f(i, j);
}

}  // namespace

void cross_distances(Metric metric, const std::vector<double>& x, const std::vector<double>& y,
                     int d, std::vector<double>& out) {
  const int nx = d > 0 ? static_cast<int>(x.size() / d) : 0;
  const int ny = d > 0 ? static_cast<int>(y.size() / d) : 0;
  out.assign(std::size_t(nx) * ny, 0.0);
  if (nx == 0 || ny == 0) return;
  const auto pair = [&](int i, int j) {
    return std::make_pair(&x[std::size_t(i) * d], &y[std::size_t(j) * d]);
  };
  if (metric == Metric::manhattan) {
    const double safe = safe_l1_magnitude(d);
    const auto x_max = row_max_magnitudes(x, nx, d);
    const auto y_max = row_max_magnitudes(y, ny, d);
    for (int i = 0; i < nx; ++i)
      for (int j = 0; j < ny; ++j) {
        const auto [a, b] = pair(i, j);
        double s = 0;
        if (!(x_max[i] <= safe && y_max[j] <= safe)) {
          s = l1_distance_scaled(a, b, d).value();
        } else {
          for (int t = 0; t < d; ++t) s += std::abs(a[t] - b[t]);
        }
        out[std::size_t(i) * ny + j] = s;
      }
    return;
  }
  // Row-major nx x ny is column-major ny x nx: Y^T X with both panels read
  // as column-major d x rows matrices.
  lapack::gemm('T', 'N', ny, nx, d, 1.0, y.data(), d, x.data(), d, 0.0, out.data(), ny);
  auto xn = row_norms_squared(x, nx, d);
  auto yn = row_norms_squared(y, ny, d);
  const auto huge = [](double norm) { return !(norm <= kSafeSquaredNorm); };
  const auto x_huge = rows_where(xn, huge), y_huge = rows_where(yn, huge);
  const auto map = [&](auto&& f) {
    for (int i = 0; i < nx; ++i)
      for (int j = 0; j < ny; ++j) {
        double& v = out[std::size_t(i) * ny + j];
        v = f(v, i, j);
      }
  };
  switch (metric) {
    case Metric::euclidean:
      map([&](double g, int i, int j) { return std::sqrt(std::max(0.0, xn[i] + yn[j] - 2 * g)); });
      refill(out, ny, x_huge, y_huge, [&](int i, int j) {
        const auto [a, b] = pair(i, j);
        const Scaled s = squared_distance_scaled(a, b, d);
        return std::ldexp(std::sqrt(s.mantissa), s.exponent / 2);
      });
      break;
    case Metric::sqeuclidean:
      map([&](double g, int i, int j) { return std::max(0.0, xn[i] + yn[j] - 2 * g); });
      refill(out, ny, x_huge, y_huge, [&](int i, int j) {
        const auto [a, b] = pair(i, j);
        return squared_distance_scaled(a, b, d).value();
      });
      break;
    case Metric::cosine: {
      const auto x_max = row_max_magnitudes(x, nx, d);
      const auto y_max = row_max_magnitudes(y, ny, d);
      const auto x_bad = badly_scaled_rows(xn, x_max), y_bad = badly_scaled_rows(yn, y_max);
      for (auto* v : {&xn, &yn})
        for (double& s : *v) s = 1 / std::sqrt(s);
      map([&](double g, int i, int j) { return std::max(0.0, 1 - g * xn[i] * yn[j]); });
      refill(out, ny, x_bad, y_bad, [&](int i, int j) {
        const auto [a, b] = pair(i, j);
        return std::max(0.0, 1 - cosine_scaled(a, b, d));
      });
      break;
    }
    case Metric::manhattan:
      break;
  }
}

}  // namespace kembed::kernel
