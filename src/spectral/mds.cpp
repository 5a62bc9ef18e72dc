#include "kembed/spectral/mds.hpp"

#include <algorithm>
#include <cmath>

#include "kembed/core/error.hpp"
#include "kembed/distribute/read_distributed.hpp"
#include "kembed/io/format_double.hpp"
#include "kembed/kernel/assemble.hpp"
#include "kembed/kernel/distance_checks.hpp"
#include "kembed/linalg/scalapack.hpp"
#include "kembed/spectral/centered_operator.hpp"
#include "kembed/spectral/centering.hpp"
#include "kembed/spectral/kernel_operator.hpp"
#include "kembed/spectral/input_shape.hpp"
#include "kembed/spectral/spectral_step.hpp"

namespace kembed::spectral {

namespace {

void check_shape(const io::MatrixFile& file, const MdsSettings& s, const Comm& comm) {
  agree(comm, input_shape_error(file, !s.metric, "not a distance matrix: it must be square", "MDS",
                                "points", s.components));
}

// Fills `dmat` with the distance matrix: read (and, when `result` is given,
// validated; symmetrized if asked) or assembled from the points in `file`.
void build_distances(io::MatrixFile& file, const MdsSettings& s, DistMatrix& dmat,
                     PhaseTimer* timer, MdsResult* result) {
  if (timer) timer->start("distribute");
  if (!s.metric) {
    distribute::read_block_cyclic(file, dmat);
    if (timer) timer->start("validate");
    if (result) {
      result->max_asymmetry = kernel::validate_distances(dmat, file.path(), s.symmetrize).max_asymmetry;
    } else if (s.symmetrize) {
      kernel::symmetrize(dmat);
    }
    return;
  }
  const int d = static_cast<int>(file.cols());
  const auto row_panel = distribute::read_panel(file, dmat.row_dist());
  const auto col_panel = distribute::read_panel(file, dmat.col_dist());
  if (result)
    kernel::check_points_for_metric(*s.metric, row_panel, dmat.row_dist(), d, dmat.grid().comm(),
                            file.path());
  if (timer) timer->start("assemble");
  kernel::assemble_distances(*s.metric, row_panel, col_panel, d, dmat);
}

// B = -1/2 J D^(2) J in place of D: center_kernel applied to -1/2 D o D.
// Returns the means of -1/2 D^(2).
CenteringStats double_center(DistMatrix& dmat) {
  kernel::square_distances(dmat, -0.5);
  return center_kernel(dmat);
}

// Everything that needs the whole spectrum of B (evd).
void spectrum_figures(MdsResult& r, int k) {
  double top = 0, absolute = 0, positive = 0;
  std::int64_t negative = 0;
  for (int j = 0; j < k; ++j) top += r.eigenvalues[j];
  for (double v : r.spectrum) {
    absolute += std::abs(v);
    positive += std::max(v, 0.0);
    negative += v < -r.zero_threshold ? 1 : 0;
  }
  r.positive_sum = positive;
  r.gof1 = top / absolute;
  r.gof2 = top / positive;
  r.negative_count = negative;
  r.smallest_eigenvalue = r.spectrum.back();
}

// The means of -1/2 D^(2) scaled back (exactly: a power of two) to those of D^(2).
void record_means(const CenteringStats& stats, MdsResult& result) {
  result.sq_row_means = stats.col_means;
  for (double& v : result.sq_row_means) v *= -2;
  result.sq_grand_mean = -2 * stats.grand_mean;
}

SpectralRequest mds_request(const SpectralRequest& asked) {
  const int k = asked.k;
  SpectralRequest request{k, asked.solver, asked.krylov};
  // Y = V sqrt(Lambda) needs lambda > 0. When fewer than k of the top k are
  // positive, that count is also the number of positive eigenvalues of B.
  request.too_few_positive = [k](const PositiveShortfall& s) {
    const std::string advice =
        s.positive > 0 ? "; use --components " + std::to_string(s.positive) + " or fewer"
                       : "; no embedding exists (are all distances 0?)";
    return "--components " + std::to_string(k) + " asks for more components than the " +
           std::to_string(s.positive) + " positive eigenvalues of B = -1/2 J D^(2) J (eigenvalue " +
           std::to_string(s.positive + 1) + " is " + io::format_double(s.value) + ")" + advice;
  };
  return request;
}

// Figures and the embedding from the spectral step.
void finish_embedding(const SpectralStep& step, int k, MdsResult& result) {
  record_solve(step, result);
  result.trace = step.trace;
  result.frobenius_norm = step.frobenius_norm;
  result.zero_threshold = step.zero_threshold;
  result.eigenvalues = step.values;
  if (!result.spectrum.empty()) {
    spectrum_figures(result, k);
    for (double v : result.eigenvalues) result.explained_ratio.push_back(v / *result.positive_sum);
  } else {
    result.ratio_of_trace = true;
    for (double v : result.eigenvalues) result.explained_ratio.push_back(v / result.trace);
  }
  // Row-major n x k on rank 0: V_k and Y = V_k sqrt(Lambda_k).
  result.vectors = row_major_on_root(step.vectors);
  result.embedding = result.vectors;
  for (std::size_t t = 0; t < result.embedding.size(); ++t)
    result.embedding[t] *= std::sqrt(result.eigenvalues[t % k]);
}

// Collective: B = -1/2 J D^(2) J of the points in float32, each entry of
// -1/2 D^(2) formed in double and rounded once, then centered; solved by krylov.
void fit_single(io::MatrixFile& file, const BlacsGrid& grid, const MdsSettings& settings,
                PhaseTimer& timer, MdsResult& result) {
  const kernel::Metric metric = *settings.metric;
  const int d = static_cast<int>(file.cols()), nb = settings.block_size;
  SingleMatrix b =
      SingleMatrix::uninitialized(grid, result.n, result.n, nb, nb,
                                  result.lower_storage ? Storage::lower_blocks : Storage::full);
  kernel::LocalSums sums;
  {  // The points are freed before the solve, as in double.
    timer.start("distribute");
    const auto row_panel = distribute::read_panel(file, b.row_dist());
    const auto col_panel = distribute::read_panel(file, b.col_dist());
    kernel::check_points_for_metric(metric, row_panel, b.row_dist(), d, grid.comm(), file.path());
    timer.start("assemble");
    kernel::assemble_in_slabs(col_panel, d, b, sums, 0, "entry of -1/2 D^(2)",
                              [&](DistMatrix& slab, const std::vector<double>& slab_panel,
                                  std::int64_t column_offset, kernel::LocalSums& slab_sums) {
                                kernel::assemble_distances(metric, row_panel, slab_panel, d, slab,
                                                           column_offset);
                                kernel::square_distances(slab, -0.5);
                                slab_sums = kernel::local_sums(slab);
                              });
  }
  timer.start("center");
  const CenteringStats stats = center_kernel(b, sums);
  record_means(stats, result);
  SpectralRequest request = mds_request({settings.components, settings.solver, settings.krylov});
  request.known_frobenius_norm = stats.frobenius_norm;
  SpectralStep step = spectral_step(b, request, timer);
  finish_embedding(step, settings.components, result);
}

// Collective: B = -1/2 J D^(2) J of the points as an operator that is never
// stored; the means, trace and ||B||_F from two recomputing passes.
void fit_matrix_free(io::MatrixFile& file, const BlacsGrid& grid, const MdsSettings& settings,
                     PhaseTimer& timer, MdsResult& result) {
  const kernel::Metric metric = *settings.metric;
  const std::int64_t n = result.n;
  const int d = static_cast<int>(file.cols()), nb = settings.block_size;
  timer.start("distribute");
  const BlockCyclic1D rows(n, nb, grid.myrow(), grid.nprow());
  auto row_panel = distribute::read_panel(file, rows);
  auto col_panel = distribute::read_panel(file, BlockCyclic1D(n, nb, grid.mycol(), grid.npcol()));
  kernel::check_points_for_metric(metric, row_panel, rows, d, grid.comm(), file.path());
  PointMatrixOperator a(grid, n, nb, std::move(row_panel), std::move(col_panel), d, metric,
                        settings.single_precision);
  timer.start("center");
  const PointMatrixSums sums = a.sums();
  CenteringStats stats;  // of -1/2 D^(2)
  stats.row_means = sums.row_sums;
  for (double& m : stats.row_means) m /= static_cast<double>(n);
  stats.col_means = stats.row_means;
  stats.grand_mean = sums.total / (static_cast<double>(n) * static_cast<double>(n));
  stats.frobenius_norm = a.centered_frobenius_norm(stats.row_means, stats.grand_mean);
  record_means(stats, result);
  SpectralRequest request = mds_request({settings.components, settings.solver, settings.krylov});
  request.known_frobenius_norm = stats.frobenius_norm;
  CenteredOperator b(a, stats.row_means, stats.grand_mean);
  // trace(J A J) = trace(A) - 1^T A 1 / n.
  SpectralStep step =
      spectral_step(b, sums.trace - sums.total / static_cast<double>(n), request, timer);
  finish_embedding(step, settings.components, result);
  result.passes = a.passes();
}

// The agreed refusals of a storage the fit cannot honour.
void check_storage(const MdsSettings& s, const FitPlan& plan, const Comm& comm) {
  std::string error;
  if (plan.storage == MatrixStorage::none && !s.metric)
    error = "--storage none recomputes the distances from the points; a distance matrix has "
            "none (use --storage auto)";
  else
    error = storage_solver_error(plan, s.solver);
  agree(comm, error);
}

}  // namespace

FitPlan mds_fit_plan(const MdsSettings& s, const ProblemShape& shape, double limit, int ranks) {
  const bool tiled = s.metric && *s.metric != kernel::Metric::manhattan;
  ProblemShape asked = shape;
  asked.solver = s.solver;
  // The additive constant needs the whole stored D (full, in double), and
  // its own matrices beside it (ProblemShape::additive_blocks).
  const bool plain = s.additive == AdditiveMethod::none;
  if (s.additive == AdditiveMethod::cailliez) asked.additive_blocks = 5;
  if (s.additive == AdditiveMethod::lingoes) asked.additive_blocks = 1;
  return plan_fit(s.storage, tiled && plain, s.metric.has_value() && plain, asked, s.krylov, limit,
                  ranks);
}

MdsResult fit_mds(io::MatrixFile& file, const BlacsGrid& grid, const MdsSettings& asked,
                  PhaseTimer& timer) {
  const Comm& comm = grid.comm();
  check_shape(file, asked, comm);
  MdsResult result;
  result.n = file.rows();
  result.d = asked.metric ? file.cols() : 0;
  const int k = asked.components, nb = asked.block_size;
  const std::int64_t n = result.n;
  ProblemShape shape{n, result.d, k, grid.nprow(), grid.npcol(), nb, asked.solver};
  shape.single_precision = asked.single_precision;
  shape.single_precision_available = asked.metric.has_value();
  // Storage, solver, Krylov settings and memory plan are decided here, once;
  // everything below reads them from `settings`, never from the options.
  const double limit =
      asked.max_memory_per_rank > 0 ? asked.max_memory_per_rank : available_memory_per_rank(comm);
  const FitPlan plan = mds_fit_plan(asked, shape, limit, comm.size());
  check_storage(asked, plan, comm);
  MdsSettings settings = asked;
  settings.solver = plan.solver;
  settings.krylov = plan.krylov;
  result.storage = plan.storage;
  result.storage_note = plan.note;
  result.lower_storage = plan.storage == MatrixStorage::lower_blocks;
  result.memory = check_memory(plan.shape, plan.memory, limit, comm);
  if (settings.additive != AdditiveMethod::none)
    agree(comm, result.storage == MatrixStorage::full && !settings.single_precision &&
                        (settings.storage == StorageRequest::automatic ||
                         settings.storage == StorageRequest::full)
                    ? ""
                    : "--add " + additive_method_name(settings.additive) +
                          " needs the n x n dissimilarities stored whole in double (--storage "
                          "full or auto, --precision double)");
  if (result.storage == MatrixStorage::none) {
    fit_matrix_free(file, grid, settings, timer, result);
    timer.stop();
    return result;
  }
  if (settings.single_precision) {
    agree(comm, settings.metric ? ""
                                : "--precision single needs the points (--metric) to compute the "
                                  "distances from; a distance matrix is read in double");
    fit_single(file, grid, settings, timer, result);
    timer.stop();
    return result;
  }

  // Assembly writes every stored entry.
  DistMatrix b = DistMatrix::uninitialized(
      grid, n, n, nb, nb, result.lower_storage ? Storage::lower_blocks : Storage::full);
  build_distances(file, settings, b, &timer, &result);
  if (settings.additive != AdditiveMethod::none) {
    timer.start("additive constant");
    result.additive = settings.additive == AdditiveMethod::cailliez ? cailliez_constant(b)
                                                                    : lingoes_constant(b);
    apply_additive_constant(b, settings.additive, result.additive->constant);
  }
  const double c = result.additive ? result.additive->constant : 0;
  embed_distances(b, {k, settings.solver, settings.krylov}, timer, result, [&](DistMatrix& a) {
    build_distances(file, settings, a, nullptr, nullptr);
    apply_additive_constant(a, settings.additive, c);
  });
  return result;
}

void embed_distances(DistMatrix& b, const SpectralRequest& asked, PhaseTimer& timer,
                     MdsResult& result, const std::function<void(DistMatrix&)>& refill) {
  timer.start("center");
  const CenteringStats stats = double_center(b);
  record_means(stats, result);
  SpectralRequest request = mds_request(asked);
  request.known_frobenius_norm = stats.frobenius_norm;
  request.rebuild = [&](DistMatrix& a) {
    refill(a);
    double_center(a);
  };
  SpectralStep step = spectral_step(b, request, timer);
  finish_embedding(step, asked.k, result);
  timer.stop();
}

std::vector<double> mds_transform(const MdsProjection& model, io::MatrixFile* training,
                                  io::MatrixFile& vectors, io::MatrixFile& points,
                                  const BlacsGrid& grid, int block_size) {
  const Comm& comm = grid.comm();
  const std::int64_t m = points.rows(), n = model.n;
  const int k = model.k;
  std::string error;
  if (model.metric && points.cols() != model.d)
    error = points.path() + ": has " + std::to_string(points.cols()) +
            " columns, but the model was fitted on points with " + std::to_string(model.d) +
            " features";
  else if (!model.metric && points.cols() != n)
    error = points.path() + ": has " + std::to_string(points.cols()) +
            " columns, but the model needs the distances of each new point to its " +
            std::to_string(n) + " training points (m x n)";
  else if (vectors.rows() != n || vectors.cols() != k)
    error = vectors.path() + ": eigenvector matrix has the wrong shape";
  else if (model.metric && !training)
    error = "the model has no training points";
  agree(comm, error);

  const int nb = block_size;
  DistMatrix bstar(grid, m, n, nb, nb);
  if (model.metric) {
    const int d = static_cast<int>(model.d);
    const auto rows = distribute::read_panel(points, bstar.row_dist());
    const auto cols = distribute::read_panel(*training, bstar.col_dist());
    kernel::check_points_for_metric(*model.metric, rows, bstar.row_dist(), d, comm, points.path());
    kernel::assemble_distances(*model.metric, rows, cols, d, bstar);
  } else {
    distribute::read_block_cyclic(points, bstar);
    if (auto e = kernel::find_negative(bstar))
      agree(comm, points.path() + ": entry (" + std::to_string(e->i + 1) + ", " +
                      std::to_string(e->j + 1) + ") is " + io::format_double(e->value) +
                      ", but distances must be non-negative (1-based)");
  }
  return gower_project(model, bstar, vectors, block_size);
}

std::vector<double> gower_project(const MdsProjection& model, DistMatrix& bstar,
                                  io::MatrixFile& vectors, int block_size) {
  const BlacsGrid& grid = bstar.grid();
  const Comm& comm = grid.comm();
  const std::int64_t m = bstar.rows(), n = model.n;
  const int k = model.k, nb = block_size;
  if (model.additive != AdditiveMethod::none)
    for (int lj = 0; lj < bstar.local_cols(); ++lj)
      for (int li = 0; li < bstar.local_rows(); ++li) {
        double& e = bstar.local(li, lj);
        if (e > 0) e = corrected_dissimilarity(model.additive, model.additive_constant, e);
      }
  // Gower: b*_ij = -1/2 (q_ij - r_j - mean_j q_ij + g), q the squared distances.
  kernel::square_distances(bstar, 1.0);
  const CenteringStats q = kernel_means(bstar);
  for (int lj = 0; lj < bstar.local_cols(); ++lj) {
    const double shift = model.sq_grand_mean - model.sq_row_means[bstar.col_dist().to_global(lj)];
    for (int li = 0; li < bstar.local_rows(); ++li) {
      double& e = bstar.local(li, lj);
      e = -0.5 * (e + shift - q.row_means[bstar.row_dist().to_global(li)]);
    }
  }
  DistMatrix v(grid, n, k, nb, nb);
  distribute::read_block_cyclic(vectors, v);
  DistMatrix y(grid, m, k, nb, nb);
  scalapack::gemm('N', 'N', 1.0, bstar, v, 0.0, y);
  const auto full = y.gather_to_root();  // column-major m x k
  std::vector<double> embedding;
  if (comm.is_root()) {
    embedding.resize(full.size());
    for (int j = 0; j < k; ++j) {
      const double scale = 1 / std::sqrt(model.eigenvalues[j]);
      for (std::int64_t i = 0; i < m; ++i)
        embedding[std::size_t(i) * k + j] = full[std::size_t(j) * m + i] * scale;
    }
  }
  return embedding;
}

}  // namespace kembed::spectral
