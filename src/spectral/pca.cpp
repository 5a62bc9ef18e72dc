#include "kembed/spectral/pca.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "kembed/core/error.hpp"
#include "kembed/distribute/read_distributed.hpp"
#include "kembed/io/format_double.hpp"
#include "kembed/kernel/assemble.hpp"
#include "kembed/linalg/cross_product.hpp"
#include "kembed/linalg/lapack.hpp"
#include "kembed/linalg/reductions.hpp"
#include "kembed/linalg/scalapack.hpp"
#include "kembed/spectral/magnitude.hpp"
#include "kembed/spectral/pca_likelihood.hpp"
#include "kembed/spectral/pca_rows.hpp"
#include "kembed/spectral/sign_convention.hpp"
#include "kembed/spectral/spectral_step.hpp"

namespace kembed::spectral {

PcaRoute parse_pca_route(const std::string& name) {
  if (name == "auto") return PcaRoute::automatic;
  if (name == "covariance") return PcaRoute::covariance;
  if (name == "gram") return PcaRoute::gram;
  throw Error("unknown --route '" + name + "' (expected auto, covariance or gram)");
}

std::string pca_route_name(PcaRoute route) {
  switch (route) {
    case PcaRoute::automatic:
      return "auto";
    case PcaRoute::covariance:
      return "covariance";
    case PcaRoute::gram:
      return "gram";
  }
  return "auto";
}

namespace {

void check_settings(const io::MatrixFile& file, const PcaSettings& s, const Comm& comm) {
  const std::int64_t n = file.rows(), d = file.cols(), most = std::min(n, d);
  std::string error;
  if (n < 2)
    error = file.path() + ": PCA needs at least 2 samples, found " + std::to_string(n);
  else if (s.variance != 0 && !(s.variance > 0 && s.variance < 1))
    error = "--variance must be strictly between 0 and 1, got " + io::format_double(s.variance);
  else if (s.variance > 0 && s.solver != Solver::evd && s.solver != Solver::automatic)
    error = "--variance chooses k from the full spectrum, which --solver " + solver_name(s.solver) +
            " does not compute; use --solver evd (the default) or give "
            "--components";
  else if (s.variance == 0 && (s.components < 1 || s.components > most))
    error = "--components " + std::to_string(s.components) +
            " must be between 1 and min(n, d) = " + std::to_string(most) + " for the " +
            std::to_string(n) + " x " + std::to_string(d) + " data in " + file.path();
  agree(comm, error);
}

// Multiplies local column j of `a` by factor[j]. No communication.
void scale_columns(DistMatrix& a, const std::vector<double>& factor) {
  for (int lj = 0; lj < a.local_cols(); ++lj) {
    const double f = factor[a.col_dist().to_global(lj)];
    for (int li = 0; li < a.local_rows(); ++li) a.local(li, lj) *= f;
  }
}

// The symmetric matrix whose eigenvalues are the explained variances:
// C = Xc^T Xc / (n-1) (d x d) or G = Xc Xc^T / (n-1) (n x n).
void form_scatter(const DistMatrix& xc, PcaRoute route, DistMatrix& s) {
  const double alpha = 1.0 / static_cast<double>(xc.rows() - 1);
  cross_product(route == PcaRoute::covariance ? 'T' : 'N', alpha, xc, s);
}

// Smallest k whose cumulative ratio is strictly greater than `threshold`
// (at most `most`).
int select_by_variance(const std::vector<double>& spectrum, double total, double threshold,
                       int most) {
  double cumulative = 0;
  for (int j = 0; j < most; ++j) {
    cumulative += spectrum[j] / total;
    if (cumulative > threshold) return j + 1;
  }
  return most;
}

}  // namespace

ColumnStats column_stats(const DistMatrix& x, bool standardize, const std::string& source) {
  const Comm& comm = x.grid().comm();
  const std::int64_t n = x.rows();
  const auto d = static_cast<std::size_t>(x.cols());
  ColumnStats stats{std::vector<double>(d, 0.0), std::vector<double>(d, 1.0)};
  for (int lj = 0; lj < x.local_cols(); ++lj) {
    double& sum = stats.mean[x.col_dist().to_global(lj)];
    for (int li = 0; li < x.local_rows(); ++li) sum += x.local(li, lj);
  }
  comm.sum_in_place(stats.mean);
  for (double& m : stats.mean) m /= static_cast<double>(n);
  if (!standardize) return stats;

  // Constancy is decided exactly (min == max), not from a rounded variance.
  std::vector<double> low(d, std::numeric_limits<double>::infinity());
  std::vector<double> high(d, -std::numeric_limits<double>::infinity());
  std::vector<double> squares(d, 0.0);
  for (int lj = 0; lj < x.local_cols(); ++lj) {
    const auto j = x.col_dist().to_global(lj);
    for (int li = 0; li < x.local_rows(); ++li) {
      const double v = x.local(li, lj);
      low[j] = std::min(low[j], v);
      high[j] = std::max(high[j], v);
      squares[j] += (v - stats.mean[j]) * (v - stats.mean[j]);
    }
  }
  finish_scales(comm, n, std::move(low), std::move(high), std::move(squares), source, stats);
  return stats;
}

void finish_scales(const Comm& comm, std::int64_t n, std::vector<double> low,
                   std::vector<double> high, std::vector<double> squares,
                   const std::string& source, ColumnStats& stats) {
  comm.min_in_place(low);
  comm.max_in_place(high);
  comm.sum_in_place(squares);
  std::string error;
  for (std::size_t j = 0; j < squares.size(); ++j) {
    stats.scale[j] = std::sqrt(squares[j] / static_cast<double>(n - 1));
    if (error.empty() && (low[j] == high[j] || !(stats.scale[j] > 0)))
      error = source + ": column " + std::to_string(j + 1) +
              " (1-based, not counting a header) is constant (every value is " + io::format_double(low[j]) +
              "); --standardize cannot divide it by its zero standard deviation. Drop the "
              "column or run without --standardize";
  }
  agree(comm, error);
}

void standardize_columns(DistMatrix& x, const std::vector<double>& mean,
                         const std::vector<double>& scale) {
  for (int lj = 0; lj < x.local_cols(); ++lj) {
    const auto j = x.col_dist().to_global(lj);
    const double m = mean[j], inverse = 1 / scale[j];
    for (int li = 0; li < x.local_rows(); ++li) x.local(li, lj) = (x.local(li, lj) - m) * inverse;
  }
}

PcaRoute resolve_route(PcaRoute route, std::int64_t n, std::int64_t d) {
  if (route != PcaRoute::automatic) return route;
  return n >= d ? PcaRoute::covariance : PcaRoute::gram;
}

ProblemShape pca_problem_shape(std::int64_t n, std::int64_t d, const PcaSettings& settings,
                               int nprow, int npcol) {
  const bool gram = resolve_route(settings.route, n, d) == PcaRoute::gram;
  const std::int64_t m = gram ? n : d;
  // --variance needs the full spectrum (evd) and may keep up to min(n, d).
  const bool variance = settings.variance > 0;
  const int k = variance ? static_cast<int>(std::min(n, d)) : settings.components;
  ProblemShape shape{m, 0, k, nprow, npcol, settings.block_size,
                     variance ? Solver::evd : settings.solver};
  shape.data_rows = n;
  shape.data_cols = d;
  return shape;
}

PcaResult fit_pca(io::MatrixFile& file, const BlacsGrid& grid, const PcaSettings& settings,
                  PhaseTimer& timer) {
  const Comm& comm = grid.comm();
  check_settings(file, settings, comm);
  PcaResult result;
  const std::int64_t n = file.rows(), d = file.cols();
  const int nb = settings.block_size;
  const int most = static_cast<int>(std::min(n, d));
  result.n = n;
  result.d = d;
  result.route = resolve_route(settings.route, n, d);
  const bool gram = result.route == PcaRoute::gram;
  const MemoryCheck memory =
      check_memory(pca_problem_shape(n, d, settings, grid.nprow(), grid.npcol()),
                   settings.max_memory_per_rank, comm);
  result.estimated_peak_bytes = memory.estimate;
  result.memory_limit_bytes = memory.limit;

  // Tall data on one process column: row panels (pca_rows.hpp), no
  // block-cyclic copy of X. Otherwise X block-cyclic on the grid.
  const bool panels = !gram && uses_row_panels(grid, n, d);
  std::optional<RowPanel> rows;
  std::optional<DistMatrix> xc;
  timer.start("distribute");
  if (panels)
    rows = read_row_panel(file, grid);
  else
    distribute::read_block_cyclic(file, xc.emplace(grid, n, d, nb, nb));
  // Values too large for the sums, and the fingerprint models keep.
  timer.start("check");
  if (panels) {
    check_pca_magnitude(comm, rows->values.data(), rows->rows, rows->first, n, d, file.path());
    result.data_fingerprint = data_fingerprint(comm, rows->values.data(), rows->rows, rows->first, d);
  } else {
    check_pca_magnitude(*xc, file.path());
    result.data_fingerprint = data_fingerprint(*xc);
  }

  timer.start("center");
  ColumnStats stats = panels ? column_stats(*rows, comm, settings.standardize, file.path())
                             : column_stats(*xc, settings.standardize, file.path());
  double norm = 0;
  if (panels) {
    const ColumnSquares written = standardize_columns(*rows, stats.mean, stats.scale);
    norm = frobenius_norm(comm, rows->values.data(), rows->rows * d, written);
  } else {
    standardize_columns(*xc, stats.mean, stats.scale);
    norm = frobenius_norm(*xc);
  }
  result.mean = std::move(stats.mean);
  result.scale = std::move(stats.scale);
  result.total_variance = norm * norm / static_cast<double>(n - 1);
  if (!(result.total_variance > 0))
    agree(comm, file.path() + ": every column is constant; there is no variance to analyse");

  timer.start(gram ? "gram" : "covariance");
  const std::int64_t m = gram ? n : d;
  DistMatrix s(grid, m, m, nb, nb);
  if (panels)
    scatter_matrix(*rows, 1.0 / static_cast<double>(n - 1), s);
  else
    form_scatter(*xc, result.route, s);

  SpectralRequest request{settings.components, settings.solver, settings.krylov};
  if (settings.variance > 0)
    request.choose_k = [&](const std::vector<double>& spectrum) {
      return select_by_variance(spectrum, result.total_variance, settings.variance, most);
    };
  request.threshold_size = static_cast<double>(std::max(n, d));
  // The Gram route divides by sqrt(eigenvalue), and so does whitening: those
  // components need numerically positive variance.
  if (gram || settings.whiten)
    request.too_few_positive = [&](const PositiveShortfall& f) {
      const int available = f.total.value_or(f.positive);
      return "component " + std::to_string(f.positive + 1) + " has explained variance " +
             io::format_double(f.value) + ", numerically zero; " + (gram ? "the Gram route" : "--whiten") +
             " needs positive variances and the data have " + (f.total ? "" : "at most ") +
             std::to_string(available) + " such directions" +
             (available > 0 ? "; use --components " + std::to_string(available) + " or fewer"
                            : ": every sample is the same after centering, so no component "
                              "exists");
    };
  request.keep_copy = true;  // m x m is at most n x d: cheaper than a second product
  request.fix_signs = gram;  // the covariance route signs the embedding Xc U instead
  SpectralStep step = spectral_step(s, request, timer);
  const int k = static_cast<int>(step.values.size());
  result.k = k;
  record_solve(step, result);
  result.explained_variance = step.values;
  for (double v : step.values) result.explained_ratio.push_back(v / result.total_variance);

  // Probabilistic PCA (Tipping & Bishop) as scikit-learn estimates it: the
  // mean of the min(n, d) - k discarded eigenvalues (pca_likelihood.hpp).
  result.noise_variance =
      ppca_noise_variance(n, d, step.values, result.total_variance, step.spectrum);

  const double n1 = static_cast<double>(n - 1);
  DistMatrix axes(grid, d, k, nb, nb);
  std::optional<DistMatrix> embedding;
  if (gram) {
    // V has unit columns with G V = V diag(ev), G = Xc Xc^T / (n-1):
    // Z = V sqrt((n-1) ev) and U = Xc^T V / sqrt((n-1) ev).
    std::vector<double> up(k), down(k);
    for (int j = 0; j < k; ++j) {
      up[j] = std::sqrt(n1 * step.values[j]);
      down[j] = 1 / up[j];
    }
    scalapack::gemm('T', 'N', 1.0, *xc, step.vectors, 0.0, axes);
    scale_columns(axes, down);
    embedding.emplace(grid, n, k, nb, nb);
    copy(step.vectors, 0, 0, n, k, *embedding, 0, 0);
    scale_columns(*embedding, up);
  } else {
    copy(step.vectors, 0, 0, d, k, axes, 0, 0);
    if (panels) {
      embedding = project_rows(*rows, axes, nb);
    } else {
      embedding.emplace(grid, n, k, nb, nb);
      scalapack::gemm('N', 'N', 1.0, *xc, axes, 0.0, *embedding);
    }
    scale_columns(axes, fix_signs(*embedding));  // the axis follows its embedding column
  }
  DistMatrix& z = *embedding;
  if (settings.whiten) {
    std::vector<double> inverse_std(k);
    for (int j = 0; j < k; ++j) inverse_std[j] = 1 / std::sqrt(step.values[j]);
    scale_columns(z, inverse_std);
  }
  result.components = row_major_on_root(axes);
  result.embedding = std::move(z);
  timer.stop();
  return result;
}

std::string model_shape_error(const PcaProjection& model, const io::MatrixFile& components) {
  const std::int64_t rows = model.axes_as_rows ? model.k : model.d;
  const std::int64_t cols = model.axes_as_rows ? model.d : model.k;
  if (components.rows() != rows || components.cols() != cols)
    return components.path() + ": expected the " + std::to_string(rows) + " x " +
           std::to_string(cols) + " principal axes, found " +
           std::to_string(components.rows()) + " x " + std::to_string(components.cols());
  if (model.mean.size() != std::size_t(model.d) || model.scale.size() != std::size_t(model.d) ||
      model.explained_variance.size() != std::size_t(model.k))
    return "model arrays do not match its shape (d = " + std::to_string(model.d) +
           ", k = " + std::to_string(model.k) + ")";
  return {};
}

PcaTransformed pca_transform(const PcaProjection& model, io::MatrixFile& components,
                             io::MatrixFile& points, const Comm& comm, bool score,
                             std::int64_t piece_bytes) {
  std::string error;
  if (points.cols() != model.d)
    error = points.path() + ": has " + std::to_string(points.cols()) +
            " columns, but the model was fitted on " + std::to_string(model.d) + " features";
  else
    error = model_shape_error(model, components);
  PpcaParameters ppca{model.d, model.explained_variance, model.noise_variance.value_or(0)};
  if (error.empty() && score) {
    if (!model.noise_variance)
      error =
          "--score: the model has no noise_variance (written by a kembed that did not "
          "score samples): refit it";
    else if (const std::string why = ppca_undefined_reason(ppca); !why.empty())
      error = "--score: " + why + "; refit with fewer components";
  }
  agree(comm, error);

  const std::vector<double> axes = components.read_rows({{0, components.rows()}});
  // Rows [first, end) of the points on this rank (the panels of
  // pca_rows.hpp, one per rank), read, centered, scaled and projected in
  // pieces of at most piece_bytes: the rank holds one piece of its
  // rows at a time (a sparse file's rows arrive densified), not all of them.
  // Every rank reads the same number of pieces (read_rows is collective).
  const std::int64_t m = points.rows(), d = model.d;
  const int k = model.k, p = comm.size(), r = comm.rank();
  const std::int64_t first = m * r / p, end = m * (r + 1) / p;
  const std::int64_t piece =
      std::max<std::int64_t>(1, piece_bytes / (std::int64_t(sizeof(double)) * d));
  const std::int64_t pieces = comm.max(static_cast<long long>((end - first + piece - 1) / piece));
  std::vector<double> z(std::size_t(k) * std::size_t(end - first)), log_likelihood;
  for (std::int64_t q = 0; q < pieces; ++q) {
    const std::int64_t from = std::min(end, first + q * piece), to = std::min(end, from + piece);
    RowPanel y{m, d, 1, from, to - from, {}};
    y.values = points.read_rows(to > from ? std::vector<io::RowRange>{{from, to}}
                                          : std::vector<io::RowRange>{});
    standardize_columns(y, model.mean, model.scale);
    // The row-major rows are Y^T column-major (d x rows), and Z^T (k x rows,
    // column-major) is the row-major Z: Z^T = U^T Y^T. Format 2 stores U^T
    // row-major (k x d), which is U column-major; format 1 stores U row-major
    // (d x k), which is U^T column-major.
    if (y.rows == 0) continue;
    double* zq = z.data() + std::size_t(k) * std::size_t(from - first);
    lapack::gemm(model.axes_as_rows ? 'T' : 'N', 'N', k, static_cast<int>(y.rows),
                 static_cast<int>(d), 1.0, axes.data(), model.axes_as_rows ? int(d) : k,
                 y.values.data(), static_cast<int>(d), 0.0, zq, k);
    // Scored before whitening: the likelihood is of the data, whatever scale
    // the embedding is given.
    if (score) {
      const std::vector<double> projected(zq, zq + std::size_t(k) * std::size_t(y.rows));
      const std::vector<double> scored =
          ppca_score_rows(ppca, axes, model.axes_as_rows, y.values, projected, y.rows);
      log_likelihood.insert(log_likelihood.end(), scored.begin(), scored.end());
    }
  }
  PcaTransformed out;
  if (score) out.log_likelihood = comm.gatherv(log_likelihood);
  if (model.whiten) {
    std::vector<double> inverse_std(k);
    for (int j = 0; j < k; ++j) inverse_std[j] = 1 / std::sqrt(model.explained_variance[j]);
    for (std::int64_t i = 0; i < end - first; ++i)
      for (int j = 0; j < k; ++j) z[std::size_t(i) * k + j] *= inverse_std[j];
  }
  out.embedding = comm.gatherv(z);
  return out;
}

}  // namespace kembed::spectral
