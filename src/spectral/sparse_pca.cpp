#include "kembed/spectral/sparse_pca.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "kembed/core/error.hpp"
#include "kembed/io/format_double.hpp"
#include "kembed/spectral/pca_likelihood.hpp"
#include "kembed/spectral/sign_convention.hpp"
#include "kembed/spectral/sparse_covariance_operator.hpp"
#include "kembed/spectral/spectral_step.hpp"

namespace kembed::spectral {

namespace {

// k, from the rows' shape (agreed; the shape itself is checked by the
// operator, which runs first).
void check_sparse_settings(const io::CsrRows& x, const SparsePcaSettings& s, const Comm& comm,
                           const std::string& source) {
  const std::int64_t most = std::min(x.rows, x.cols);
  std::string error;
  if (s.components < 1 || s.components > most)
    error = "--components " + std::to_string(s.components) +
            " must be between 1 and min(n, d) = " + std::to_string(most) + " for the " +
            std::to_string(x.rows) + " x " + std::to_string(x.cols) + " data in " + source;
  agree(comm, error);
}

// Per column of the local rows x k row-major z: the variance over all n
// rows (n denominator, two passes), on every rank.
std::vector<double> score_variances(const Comm& comm, const std::vector<double>& z,
                                    std::int64_t rows, int k, std::int64_t n) {
  std::vector<double> mean(k, 0.0), squares(k, 0.0);
  for (std::int64_t i = 0; i < rows; ++i)
    for (int j = 0; j < k; ++j) mean[j] += z[std::size_t(i) * k + j];
  comm.sum_in_place(mean);
  for (double& m : mean) m /= static_cast<double>(n);
  for (std::int64_t i = 0; i < rows; ++i)
    for (int j = 0; j < k; ++j) {
      const double e = z[std::size_t(i) * k + j] - mean[j];
      squares[j] += e * e;
    }
  comm.sum_in_place(squares);
  for (double& s : squares) s /= static_cast<double>(n);
  return squares;
}

}  // namespace

SparsePcaResult fit_sparse_pca(const io::CsrRows& x, const BlacsGrid& grid,
                               const SparsePcaSettings& settings, const std::string& source,
                               PhaseTimer& timer) {
  const Comm& comm = grid.comm();
  timer.start("center");
  agree(comm, settings.block_size >= 1
                  ? ""
                  : "--block-size must be positive, got " + std::to_string(settings.block_size));
  SparseCovarianceOperator op(x, grid, settings.block_size, settings.center, settings.standardize,
                              source);
  check_sparse_settings(x, settings, comm, source);
  const std::int64_t n = x.rows, d = x.cols;
  const int k = settings.components;

  SparsePcaResult result;
  result.n = n;
  result.d = d;
  result.k = k;
  result.centered = settings.center;
  result.mean = op.mean();
  result.scale = op.scale();
  result.total_variance = op.total_variance();

  SpectralRequest request{k, Solver::krylov, sparse_krylov(settings.krylov, k, op.order())};
  request.threshold_size = static_cast<double>(std::max(n, d));
  // trace(C) >= ||C||_F for the positive semi-definite C: the residuals and
  // the zero threshold are taken relative to it.
  request.known_frobenius_norm = op.trace();
  request.fix_signs = false;  // the convention belongs to the scores X U
  if (settings.whiten)
    request.too_few_positive = [&](const PositiveShortfall& f) {
      return "component " + std::to_string(f.positive + 1) + " has explained variance " +
             io::format_double(f.value) +
             ", numerically zero; --whiten needs positive variances and the data have at most " +
             std::to_string(f.positive) + " such directions" +
             (f.positive > 0 ? "; use --components " + std::to_string(f.positive) + " or fewer"
                             : "");
    };
  SpectralStep step = spectral_step(op, op.trace(), request, timer);
  result.eigenvalues = step.values;
  result.residuals = step.residuals;
  result.solver_used = step.solver_used;
  result.solver_note = step.solver_note;
  result.iterations = step.krylov_cycles;
  result.matvecs = step.krylov_products;

  // The axes U_k, replicated (d x k is small), row-major for the product.
  std::vector<double> column_major = step.vectors.gather_to_root();
  comm.broadcast(column_major);
  std::vector<double> axes(std::size_t(d) * k);
  for (std::int64_t j = 0; j < d; ++j)
    for (int c = 0; c < k; ++c)
      axes[std::size_t(j) * k + c] = column_major[std::size_t(c) * d + std::size_t(j)];

  // Scores of this rank's rows, Z = Xc S^{-1} U_k, and the sign convention
  // on them; each axis follows its score column.
  std::vector<double> z(std::size_t(x.local_rows()) * k);
  op.centered_product(axes.data(), k, z.data());
  const std::vector<double> sign = fix_signs(comm, x.first_row, x.local_rows(), k, z.data());
  for (std::int64_t j = 0; j < d; ++j)
    for (int c = 0; c < k; ++c) axes[std::size_t(j) * k + c] *= sign[c];

  const double n1 = static_cast<double>(n - 1);
  for (double v : result.eigenvalues)
    result.singular_values.push_back(std::sqrt(std::max(0.0, n1 * v)));
  if (settings.center) {
    result.explained_variance = result.eigenvalues;
    for (double v : result.eigenvalues) result.explained_ratio.push_back(v / result.total_variance);
    result.noise_variance =
        ppca_noise_variance(n, d, result.eigenvalues, result.total_variance, {});
  } else {
    // TruncatedSVD: the scores' variances over the columns', n denominators.
    result.explained_variance = score_variances(comm, z, x.local_rows(), k, n);
    const double total = result.total_variance * n1 / static_cast<double>(n);
    for (double v : result.explained_variance) result.explained_ratio.push_back(v / total);
  }
  if (settings.whiten) {
    std::vector<double> inverse_std(k);
    for (int c = 0; c < k; ++c) inverse_std[c] = 1 / std::sqrt(result.eigenvalues[c]);
    for (std::int64_t i = 0; i < x.local_rows(); ++i)
      for (int c = 0; c < k; ++c) z[std::size_t(i) * k + c] *= inverse_std[c];
  }
  result.scores = std::move(z);
  if (comm.is_root()) result.components = std::move(axes);
  timer.stop();
  return result;
}

}  // namespace kembed::spectral
