#include "kembed/approx/nystrom.hpp"

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <limits>

#include "kembed/approx/kmeans_pp.hpp"
#include "kembed/approx/landmarks.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/format_double.hpp"
#include "kembed/kernel/cross_kernel.hpp"
#include "kembed/linalg/lapack.hpp"
#include "kembed/spectral/memory_plan.hpp"
#include "kembed/spectral/sign_convention.hpp"

namespace kembed::approx {

namespace {

constexpr std::int64_t kPanelNumbers = std::int64_t(1) << 22;

// Collective: calls f(range, rows) for consecutive panels of this rank's
// rows `mine`, read through `file`. Every rank takes the same number of
// steps (read_rows is collective; a rank out of rows reads none) and the
// local work of each step runs inside collectively(), so an error on one
// rank stops all of them at the same step.
template <class F>
void stream_panels(io::MatrixFile& file, const Comm& comm, IndexRange mine,
                   std::int64_t panel_rows, F&& f) {
  const auto steps =
      static_cast<std::int64_t>(comm.max(static_cast<long long>((mine.size() + panel_rows - 1) / panel_rows)));
  for (std::int64_t s = 0; s < steps; ++s) {
    const IndexRange range{std::min(mine.end, mine.begin + s * panel_rows),
                           std::min(mine.end, mine.begin + (s + 1) * panel_rows)};
    std::vector<io::RowRange> want;
    if (range.size() > 0) want.push_back(range);
    const std::vector<double> rows = file.read_rows(want);
    collectively(comm, [&] { f(range, rows); });
  }
}

// Collective: the rows `wanted` (ascending, distinct) of `file` on every
// rank, row-major: rank 0 reads them and broadcasts.
std::vector<double> read_rows_everywhere(io::MatrixFile& file, const Comm& comm,
                                         const std::vector<std::int64_t>& wanted) {
  std::vector<io::RowRange> ranges;
  if (comm.is_root())
    for (std::int64_t row : wanted) {
      if (!ranges.empty() && ranges.back().end == row) ++ranges.back().end;
      else ranges.push_back({row, row + 1});
    }
  std::vector<double> rows = file.read_rows(ranges);
  comm.broadcast(rows);
  return rows;
}

// out (rows x k row-major) <- C P - 1 offset^T, with C the rows x m
// column-major kernel block (ld rows) and P row-major m x k.
void project_block(const double* c, int rows, const NystromModel& model, double* out) {
  const int m = static_cast<int>(model.m), k = model.k;
  if (rows == 0) return;
  // Row-major P is the column-major k x m P^T; out^T = P^T C^T is the
  // column-major k x rows matrix that is out in row-major order.
  lapack::gemm('N', 'T', k, rows, m, 1.0, model.projection.data(), k, c, rows, 0.0, out, k);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < k; ++j) out[std::size_t(i) * k + j] -= model.offset[j];
}

// The full symmetric matrix from the lower triangle dsyrk filled.
void mirror_lower(std::vector<double>& a, int n) {
  for (int j = 0; j < n; ++j)
    for (int i = j + 1; i < n; ++i) a[std::size_t(i) * n + j] = a[std::size_t(j) * n + i];
}

// Collective: flips each column of the local rows `z` (rows x k row-major,
// global rows from `first`) so that the entry of largest magnitude is
// positive, with spectral::fix_signs' tie rule (the first row within a
// relative kSignTieTolerance decides). Returns the factors, on every rank.
std::vector<double> fix_embedding_signs(const Comm& comm, std::vector<double>& z, int k,
                                        std::int64_t first) {
  const std::size_t rows = k > 0 ? z.size() / std::size_t(k) : 0;
  std::vector<double> largest(k, 0.0);
  for (std::size_t i = 0; i < rows; ++i)
    for (int j = 0; j < k; ++j) largest[j] = std::max(largest[j], std::abs(z[i * k + j]));
  comm.max_in_place(largest);
  std::vector<long long> row(k, LLONG_MAX);
  for (int j = 0; j < k; ++j)
    for (std::size_t i = 0; i < rows; ++i)
      if (std::abs(z[i * k + j]) >= largest[j] * (1 - spectral::kSignTieTolerance)) {
        row[j] = first + static_cast<long long>(i);
        break;
      }
  comm.min_in_place(row);
  std::vector<double> sign(k, 0.0);
  for (int j = 0; j < k; ++j) {
    const long long i = row[j] - first;
    if (i >= 0 && static_cast<std::size_t>(i) < rows) sign[j] = z[i * k + j] < 0 ? -1.0 : 1.0;
  }
  comm.sum_in_place(sign);  // one owner per column
  for (std::size_t i = 0; i < rows; ++i)
    for (int j = 0; j < k; ++j) z[i * k + j] *= sign[j];
  return sign;
}

}  // namespace

void check_nystrom_request(std::int64_t n, std::int64_t d, const NystromSettings& s,
                           const std::string& source) {
  const std::int64_t m = s.landmarks;
  const std::string k = std::to_string(s.components);
  if (s.kernel.type == kernel::KernelType::precomputed)
    throw Error("--approx nystrom needs the samples to evaluate the kernel at the landmarks; a "
                "precomputed kernel has none (use the exact path: leave out --approx)");
  if (d < 1)
    throw Error("--approx nystrom needs the samples: give --cols D (not a precomputed kernel)");
  if (n < 2) throw Error(source + ": kernel PCA needs at least 2 samples, found " +
                         std::to_string(n));
  if (s.components < 1) throw Error("--components must be at least 1");
  if (m < 1 || m > n)
    throw Error("--landmarks " + std::to_string(m) + " must be between 1 and the number of " +
                "samples n = " + std::to_string(n));
  if (m < s.components)
    throw Error("--landmarks " + std::to_string(m) + " is fewer than --components " + k +
                ": the approximation has at most as many components as landmarks");
  if (!(s.rcond >= 0 && s.rcond < 1))
    throw Error("--landmark-rcond must be in [0, 1), got " + std::to_string(s.rcond));
  if (s.panel_rows < 0) throw Error("--panel-rows must be at least 1");
}

LandmarkSelection parse_landmark_selection(const std::string& name) {
  if (name == "uniform") return LandmarkSelection::uniform;
  if (name == "kmeans++") return LandmarkSelection::kmeanspp;
  throw Error("--landmark-selection expects uniform or kmeans++, got '" + name + "'");
}

std::string landmark_selection_name(LandmarkSelection selection) {
  return selection == LandmarkSelection::uniform ? "uniform" : "kmeans++";
}

std::int64_t default_panel_rows(std::int64_t m, std::int64_t d) {
  return std::max<std::int64_t>(64, kPanelNumbers / std::max<std::int64_t>({m, d, 1}));
}

IndexRange block_rows(std::int64_t n, int rank, int size) {
  const std::int64_t base = n / size, extra = n % size;
  const std::int64_t begin = rank * base + std::min<std::int64_t>(rank, extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

std::vector<std::pair<std::string, double>> nystrom_memory(std::int64_t n, std::int64_t d,
                                                           std::int64_t m, int k, int ranks,
                                                           std::int64_t panel_rows,
                                                           LandmarkSelection selection) {
  const double w = 8, md = double(m), local = double((n + ranks - 1) / ranks);
  // A panel never holds more rows than the rank has.
  const double panel =
      std::min(double(panel_rows > 0 ? panel_rows : default_panel_rows(m, d)), std::max(local, 1.0));
  std::vector<std::pair<std::string, double>> items = {
      {"landmarks L (m x d), replicated", w * md * double(d)},
      {"W, its eigenvectors and dsyevd workspace (about 4 m^2), replicated", w * 4 * md * md},
      {"B = Q_r s_r^-1/2 and the m x m accumulator (2 m^2), replicated", w * 2 * md * md},
      {"panel: rows, C = K(panel, L) and F (panel x (d + 2 m))",
       w * panel * (double(d) + 2 * md)},
      {"local embedding rows (n / P x k)", w * local * k},
      {"gathered embedding (n x k), rank 0", w * double(n) * k},
  };
  if (selection == LandmarkSelection::kmeanspp)
    items.push_back({"k-means++: the rank's rows and distances (n / P x (d + 2))",
                     w * local * (double(d) + 2)});
  return items;
}

double nystrom_memory_total(std::int64_t n, std::int64_t d, std::int64_t m, int k, int ranks,
                            std::int64_t panel_rows, LandmarkSelection selection) {
  double total = 0;
  for (const auto& item : nystrom_memory(n, d, m, k, ranks, panel_rows, selection))
    total += item.second;
  return total;
}

NystromResult fit_nystrom(io::MatrixFile& file, const Comm& comm, const NystromSettings& settings,
                          PhaseTimer& timer) {
  check_nystrom_request(file.rows(), file.cols(), settings, file.path());
  NystromResult result;
  result.memory_limit = settings.max_memory_per_rank > 0
                            ? settings.max_memory_per_rank
                            : spectral::available_memory_per_rank(comm);
  agree(comm, spectral::streamed_shortfall(
                  [&](int ranks) {
                    return nystrom_memory_total(file.rows(), file.cols(), settings.landmarks,
                                                settings.components, ranks, settings.panel_rows,
                                                settings.selection);
                  },
                  comm.size(), result.memory_limit));
  NystromModel& model = result.model;
  const std::int64_t n = file.rows();
  const int d = static_cast<int>(file.cols()), k = settings.components;
  const int m = static_cast<int>(settings.landmarks);
  result.n = n;
  model.kernel = settings.kernel.with_default_gamma(d);
  model.m = m;
  model.d = d;
  model.k = k;
  result.panel_rows = settings.panel_rows > 0 ? settings.panel_rows : default_panel_rows(m, d);
  const IndexRange mine = block_rows(n, comm.rank(), comm.size());

  timer.start("landmarks");
  if (settings.selection == LandmarkSelection::uniform) {
    result.landmark_rows = uniform_landmarks(n, m, settings.seed);
    model.landmarks = read_rows_everywhere(file, comm, result.landmark_rows);
  } else {
    const std::vector<double> local =
        file.read_rows(mine.size() > 0 ? std::vector<io::RowRange>{mine}
                                       : std::vector<io::RowRange>{});
    PickedPoints picked = kmeans_pp_landmarks(comm, local, mine, n, d, m, settings.seed);
    result.landmark_rows = std::move(picked.rows);
    model.landmarks = std::move(picked.points);
    result.passes = 3;
  }
  kernel::CrossKernel cross(comm, model.kernel, model.landmarks, d);

  // W = Q diag(s) Q^T on rank 0, shared: every rank must use the same bits.
  std::vector<double> q(std::size_t(m) * m), s(m);
  collectively(comm, [&] {
    if (!comm.is_root()) return;
    const double* w = cross.evaluate(model.landmarks, m);
    for (int j = 0; j < m; ++j)
      for (int i = 0; i < m; ++i)
        q[std::size_t(j) * m + i] = 0.5 * (w[std::size_t(j) * m + i] + w[std::size_t(i) * m + j]);
    s = lapack::syevd(q, m);
  });
  comm.broadcast(q.data(), q.size());
  comm.broadcast(s.data(), s.size());
  result.w_largest = s[m - 1];
  if (!(result.w_largest > 0))
    throw Error("the landmark kernel matrix W = K(L, L) has no positive eigenvalue (largest " +
                std::to_string(result.w_largest) + "); the kernel is not positive semidefinite "
                "on these landmarks");
  // Kept directions, largest first; B = Q_r diag(s_r^{-1/2}), column-major m x r.
  std::vector<int> kept;
  for (int i = m - 1; i >= 0; --i)
    if (s[i] > settings.rcond * result.w_largest) kept.push_back(i);
  const int r = static_cast<int>(kept.size());
  result.kept = r;
  result.dropped = m - r;
  result.w_smallest_kept = s[kept.back()];
  if (r < k)
    throw Error("--components " + std::to_string(k) + " exceeds the " + std::to_string(r) +
                " directions of the landmark kernel matrix above --landmark-rcond (" +
                std::to_string(m - r) + " of " + std::to_string(m) +
                " dropped); use more or other landmarks" +
                (r > 0 ? ", or --components " + std::to_string(r) + " or fewer" : ""));
  std::vector<double> b(std::size_t(m) * r);
  for (int j = 0; j < r; ++j) {
    const double scale = 1 / std::sqrt(s[kept[j]]);
    for (int i = 0; i < m; ++i) b[std::size_t(j) * m + i] = q[std::size_t(kept[j]) * m + i] * scale;
  }
  q = std::vector<double>();
  result.gram_route = result.w_largest / result.w_smallest_kept <= kGramRouteCondition;

  // Pass 1: F^T F and F^T 1 (or C^T C and C^T 1), summed over the ranks.
  timer.start("pass1");
  const int width = result.gram_route ? m : r;
  std::vector<double> gram(std::size_t(width) * width, 0.0), sums(width, 0.0), f;
  stream_panels(file, comm, mine, result.panel_rows, [&](IndexRange range, const std::vector<double>& rows) {
    const int count = static_cast<int>(range.size());
    if (count == 0) return;
    const double* c = cross.evaluate(rows, count);
    const double* block = c;
    if (!result.gram_route) {
      f.resize(std::size_t(count) * r);
      lapack::gemm('N', 'N', count, r, m, 1.0, c, count, b.data(), m, 0.0, f.data(), count);
      block = f.data();
    }
    for (int j = 0; j < width; ++j) {
      double t = 0;
      for (int i = 0; i < count; ++i) t += block[std::size_t(j) * count + i];
      sums[j] += t;
    }
    lapack::syrk_lower_transposed(width, count, 1.0, block, count, 1.0, gram.data(), width);
  });
  f = std::vector<double>();
  comm.sum_in_place(gram);
  comm.sum_in_place(sums);
  mirror_lower(gram, width);
  std::vector<double> ftf, fsum;
  if (result.gram_route) {
    // F^T F = B^T (C^T C) B and F^T 1 = B^T (C^T 1).
    std::vector<double> gb(std::size_t(m) * r);
    lapack::gemm('N', 'N', m, r, m, 1.0, gram.data(), m, b.data(), m, 0.0, gb.data(), m);
    ftf.resize(std::size_t(r) * r);
    lapack::gemm('T', 'N', r, r, m, 1.0, b.data(), m, gb.data(), m, 0.0, ftf.data(), r);
    fsum.resize(r);
    lapack::gemm('T', 'N', r, 1, m, 1.0, b.data(), m, sums.data(), m, 0.0, fsum.data(), r);
  } else {
    ftf = std::move(gram);
    fsum = std::move(sums);
  }
  gram = std::vector<double>();

  // S = F^T F - n mu mu^T, mu = F^T 1 / n; its top k eigenpairs (rank 0, shared).
  timer.start("solve");
  const double nn = static_cast<double>(n);
  std::vector<double> mu(r);
  for (int j = 0; j < r; ++j) mu[j] = fsum[j] / nn;
  std::vector<double> cov(std::size_t(r) * r);
  for (int j = 0; j < r; ++j)
    for (int i = 0; i < r; ++i) {
      // Symmetric by construction: the lower triangle's formula on both sides.
      const int lo = std::max(i, j), hi = std::min(i, j);
      cov[std::size_t(j) * r + i] = ftf[std::size_t(hi) * r + lo] - nn * mu[lo] * mu[hi];
    }
  double frobenius = 0;
  result.trace = 0;
  for (int j = 0; j < r; ++j) {
    result.trace += cov[std::size_t(j) * r + j];
    for (int i = 0; i < r; ++i) frobenius += cov[std::size_t(j) * r + i] * cov[std::size_t(j) * r + i];
  }
  frobenius = std::sqrt(frobenius);
  std::vector<double> lambda(r);
  collectively(comm, [&] {
    if (comm.is_root()) lambda = lapack::syevd(cov, r);
  });
  comm.broadcast(cov.data(), cov.size());
  comm.broadcast(lambda.data(), lambda.size());
  // As the exact path: a component needs lambda > n eps max(lambda_1, ||S||_F).
  const double floor = nn * DBL_EPSILON * std::max(lambda[r - 1], frobenius);
  int positive = 0;
  while (positive < r && lambda[r - 1 - positive] > floor) ++positive;
  if (positive < k)
    throw Error("--components " + std::to_string(k) + " asks for more components than the " +
                std::to_string(positive) +
                " positive eigenvalues of the centered Nystrom kernel (eigenvalue " +
                std::to_string(positive + 1) + " is " + io::format_double(lambda[r - 1 - positive]) +
                ")" +
                (positive > 0 ? "; use --components " + std::to_string(positive) + " or fewer"
                              : "; no component exists: the approximate kernel is constant "
                                "after centering (all samples alike under this kernel, or a "
                                "--gamma so small or so large that every pair gets the same "
                                "value)"));
  model.projection.assign(std::size_t(m) * k, 0.0);
  model.offset.assign(k, 0.0);
  for (int j = 0; j < k; ++j) {
    const double* u = &cov[std::size_t(r - 1 - j) * r];
    result.eigenvalues.push_back(lambda[r - 1 - j]);
    result.explained_ratio.push_back(lambda[r - 1 - j] / result.trace);
    for (int t = 0; t < r; ++t) model.offset[j] += mu[t] * u[t];
    for (int i = 0; i < m; ++i) {
      double p = 0;
      for (int t = 0; t < r; ++t) p += b[std::size_t(t) * m + i] * u[t];
      model.projection[std::size_t(i) * k + j] = p;
    }
  }

  // Pass 2: this rank's embedding rows, then the sign convention.
  timer.start("pass2");
  std::vector<double> local(std::size_t(mine.size()) * k);
  stream_panels(file, comm, mine, result.panel_rows, [&](IndexRange range, const std::vector<double>& rows) {
    const int count = static_cast<int>(range.size());
    if (count == 0) return;
    project_block(cross.evaluate(rows, count), count, model,
                  &local[std::size_t(range.begin - mine.begin) * k]);
  });
  const std::vector<double> sign = fix_embedding_signs(comm, local, k, mine.begin);
  for (int j = 0; j < k; ++j) {
    model.offset[j] *= sign[j];
    for (int i = 0; i < m; ++i) model.projection[std::size_t(i) * k + j] *= sign[j];
  }
  // Rank order is row order, so the concatenation is the n x k embedding.
  result.embedding = comm.gatherv(local);
  timer.stop();
  return result;
}

std::vector<double> nystrom_transform(const NystromModel& model, io::MatrixFile& points,
                                      const Comm& comm, std::int64_t panel_rows) {
  if (points.cols() != model.d)
    throw Error(points.path() + ": has " + std::to_string(points.cols()) +
                " columns, but the model was fitted on " + std::to_string(model.d));
  const std::int64_t rows = points.rows();
  const IndexRange mine = block_rows(rows, comm.rank(), comm.size());
  if (panel_rows <= 0) panel_rows = default_panel_rows(model.m, model.d);
  kernel::CrossKernel cross(comm, model.kernel, model.landmarks, static_cast<int>(model.d));
  std::vector<double> local(std::size_t(mine.size()) * model.k);
  stream_panels(points, comm, mine, panel_rows, [&](IndexRange range, const std::vector<double>& x) {
    const int count = static_cast<int>(range.size());
    if (count == 0) return;
    project_block(cross.evaluate(x, count), count, model,
                  &local[std::size_t(range.begin - mine.begin) * model.k]);
  });
  return comm.gatherv(local);
}

}  // namespace kembed::approx
