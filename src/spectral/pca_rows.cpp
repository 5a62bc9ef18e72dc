#include "kembed/spectral/pca_rows.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

#include "kembed/linalg/lapack.hpp"

namespace kembed::spectral {

namespace {

std::int64_t panel_rows(std::int64_t n, int nprow) { return (n + nprow - 1) / nprow; }

}  // namespace

bool uses_row_panels(const BlacsGrid& grid, std::int64_t n, std::int64_t d) {
  return grid.npcol() == 1 && d <= kRowPanelMaxCols && panel_rows(n, grid.nprow()) <= INT_MAX;
}

RowPanel read_row_panel(io::MatrixFile& file, const BlacsGrid& grid) {
  RowPanel x;
  x.n = file.rows();
  x.d = file.cols();
  x.block = static_cast<int>(std::max<std::int64_t>(1, panel_rows(x.n, grid.nprow())));
  x.first = std::min(x.n, std::int64_t{grid.myrow()} * x.block);
  x.rows = std::min(x.n, x.first + x.block) - x.first;
  x.values = file.read_rows(x.rows > 0 ? std::vector<io::RowRange>{{x.first, x.first + x.rows}}
                                       : std::vector<io::RowRange>{});
  return x;
}

ColumnStats column_stats(const RowPanel& x, const Comm& comm, bool standardize,
                         const std::string& source) {
  const auto d = static_cast<std::size_t>(x.d);
  ColumnStats stats{std::vector<double>(d, 0.0), std::vector<double>(d, 1.0)};
  // Row by row into d accumulators: the inner loop runs along a row, so it
  // vectorizes over the columns and reads the panel once, in order.
  double* sum = stats.mean.data();
  for (std::int64_t i = 0; i < x.rows; ++i) {
    const double* row = x.values.data() + i * x.d;
    for (std::size_t j = 0; j < d; ++j) sum[j] += row[j];
  }
  comm.sum_in_place(stats.mean);
  for (double& m : stats.mean) m /= static_cast<double>(x.n);
  if (!standardize) return stats;

  std::vector<double> low(d, std::numeric_limits<double>::infinity());
  std::vector<double> high(d, -std::numeric_limits<double>::infinity());
  std::vector<double> squares(d, 0.0);
  const double* mean = stats.mean.data();
  for (std::int64_t i = 0; i < x.rows; ++i) {
    const double* row = x.values.data() + i * x.d;
    for (std::size_t j = 0; j < d; ++j) {
      const double v = row[j];
      low[j] = std::min(low[j], v);
      high[j] = std::max(high[j], v);
      squares[j] += (v - mean[j]) * (v - mean[j]);
    }
  }
  finish_scales(comm, x.n, std::move(low), std::move(high), std::move(squares), source, stats);
  return stats;
}

ColumnSquares standardize_columns(RowPanel& x, const std::vector<double>& mean,
                                  const std::vector<double>& scale) {
  const auto d = static_cast<std::size_t>(x.d);
  std::vector<double> inverse(d), squares(d, 0.0), largest(d, 0.0);
  for (std::size_t j = 0; j < d; ++j) inverse[j] = 1 / scale[j];
  // Per column accumulators again, so the loop over a row vectorizes.
  for (std::int64_t i = 0; i < x.rows; ++i) {
    double* row = x.values.data() + i * x.d;
    for (std::size_t j = 0; j < d; ++j) {
      const double v = (row[j] - mean[j]) * inverse[j];
      row[j] = v;
      squares[j] += v * v;
      largest[j] = std::max(largest[j], std::abs(v));
    }
  }
  ColumnSquares written;
  for (std::size_t j = 0; j < d; ++j) {
    written.sum_squares += squares[j];
    written.largest = std::max(written.largest, largest[j]);
  }
  return written;
}

void scatter_matrix(const RowPanel& x, double alpha, DistMatrix& c) {
  const int d = static_cast<int>(x.d);
  std::vector<double> sums(std::size_t(d) * d, 0.0);
  // The row-major panel is X_p^T column-major (d x rows, leading dimension
  // d): X_p^T X_p = A A^T, the lower triangle by dsyrk, mirrored.
  if (x.rows > 0)
    lapack::syrk_lower(d, static_cast<int>(x.rows), alpha, x.values.data(), d, 0.0, sums.data(), d);
  for (int j = 0; j < d; ++j)
    for (int i = j + 1; i < d; ++i) sums[std::size_t(i) * d + j] = sums[std::size_t(j) * d + i];
  c.grid().comm().sum_in_place(sums);
  c.fill([&](std::int64_t i, std::int64_t j) { return sums[std::size_t(j) * d + i]; });
}

DistMatrix project_rows(const RowPanel& x, const DistMatrix& u, int nb) {
  const BlacsGrid& grid = u.grid();
  const int d = static_cast<int>(x.d), k = static_cast<int>(u.cols());
  // U (d x k) is small: gathered and broadcast, column-major.
  std::vector<double> replicated = u.gather_to_root();
  grid.comm().broadcast(replicated);
  DistMatrix z = DistMatrix::uninitialized(grid, x.n, k, x.block, nb);
  // Z_p = X_p U = (A)^T U for the column-major d x rows A of the panel.
  if (x.rows > 0 && k > 0)
    lapack::gemm('T', 'N', static_cast<int>(x.rows), k, d, 1.0, x.values.data(), d,
                 replicated.data(), d, 0.0, z.data(), z.ld());
  return z;
}

}  // namespace kembed::spectral
