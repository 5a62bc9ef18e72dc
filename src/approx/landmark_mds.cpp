#include "kembed/approx/landmark_mds.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kembed/approx/landmarks.hpp"
#include "kembed/core/error.hpp"
#include "kembed/core/splitmix64.hpp"
#include "kembed/io/format_double.hpp"
#include "kembed/io/synthetic.hpp"
#include "kembed/kernel/cross_distances.hpp"
#include "kembed/kernel/distance_checks.hpp"
#include "kembed/linalg/lapack.hpp"
#include "kembed/spectral/memory_plan.hpp"
#include "kembed/spectral/sign_convention.hpp"

namespace kembed::approx {

namespace {

std::string entry(std::int64_t i, std::int64_t j) {
  return "(" + std::to_string(i + 1) + ", " + std::to_string(j + 1) + ")";
}

// Sorted, distinct rows as the fewest ascending ranges.
std::vector<io::RowRange> ranges_of(const std::vector<std::int64_t>& rows) {
  std::vector<io::RowRange> ranges;
  for (std::int64_t r : rows) {
    if (!ranges.empty() && ranges.back().end == r)
      ++ranges.back().end;
    else
      ranges.push_back({r, r + 1});
  }
  return ranges;
}

// Under the cosine metric, an agreed Error naming `source` and the first
// zero vector (lowest global row over all ranks) among the panel's rows,
// whose global indices are `global_rows`.
void check_cosine_rows(kernel::Metric metric, const std::vector<double>& panel, int d,
                       const std::vector<std::int64_t>& global_rows, const Comm& comm,
                       const std::string& source) {
  if (metric != kernel::Metric::cosine) return;
  long long first = std::numeric_limits<long long>::max();
  for (std::size_t l = 0; l < global_rows.size(); ++l) {
    const double* x = &panel[l * std::size_t(d)];
    if (std::all_of(x, x + d, [](double v) { return v == 0; }))
      first = std::min<long long>(first, global_rows[l]);
  }
  first = comm.min(first);
  std::string error;
  if (first != std::numeric_limits<long long>::max())
    error = source + ": row " + std::to_string(first + 1) +
            " is the zero vector, whose cosine distance to any point is undefined";
  agree(comm, error);
}

// delta <- dist o dist - 1 delta_mean^T (dist: rows x M row-major, from
// global row `first`; `squared`: dist holds squared distances already). A
// distance too large to square is an Error naming `source` and the entry.
void center_squares(std::vector<double>& dist, bool squared, const std::vector<double>& delta_mean,
                    std::int64_t first, const std::string& source) {
  const auto m = static_cast<std::int64_t>(delta_mean.size());
  const double limit = kernel::largest_squarable_distance(m);
  const double square_limit = limit * limit;
  bool bad = false;
  for (std::size_t e = 0; e < dist.size(); e += m) {
    double* row = &dist[e];
    for (std::int64_t j = 0; j < m; ++j) {
      const double v = row[j];
      const double sq = squared ? v : v * v;
      bad |= !(sq <= square_limit);  // also NaN
      row[j] = sq - delta_mean[j];
    }
  }
  if (!bad) return;
  // The first offender, for the message: the square is the centred value
  // plus the mean again (inf and NaN stay what they were).
  for (std::size_t e = 0; e < dist.size(); ++e) {
    const double sq = dist[e] + delta_mean[e % m];
    if (!(sq <= square_limit))
      throw Error(source + ": entry " +
                  entry(first + std::int64_t(e) / m, std::int64_t(e) % m) + " (1-based) is " +
                  io::format_double(std::sqrt(sq)) +
                  ": landmark MDS squares the distances, which overflows above " +
                  io::format_double(limit) + " (values too large; rescale the data)");
  }
  throw Error(source + ": a distance to a landmark is too large to square (values too large; "
                       "rescale the data)");
}

// Distances from the panel's rows to the landmarks, rows x M; returns
// whether they are squared already (Euclidean points: the squared distance
// is computed directly, without a square root to undo).
bool panel_distances(const LandmarkModel& model, const std::vector<double>& panel,
                     std::int64_t first, const std::string& source, std::vector<double>& dist) {
  if (model.metric) {
    const bool euclidean = *model.metric == kernel::Metric::euclidean;
    kernel::cross_distances(euclidean ? kernel::Metric::sqeuclidean : *model.metric, panel,
                            model.landmark_points, static_cast<int>(model.d), dist);
    return euclidean;
  }
  for (std::size_t e = 0; e < panel.size(); ++e)
    if (panel[e] < 0)
      throw Error(source + ": entry " +
                  entry(first + std::int64_t(e) / model.m, std::int64_t(e) % model.m) +
                  " (1-based) is " + io::format_double(panel[e]) +
                  ", but distances to the landmarks must be non-negative");
  dist = panel;
  return false;
}

}  // namespace

void triangulate_rows(const LandmarkModel& model, std::vector<double>& dist, bool squared,
                      std::int64_t first, const std::string& source, double* out) {
  center_squares(dist, squared, model.delta_mean, first, source);
  const int k = model.k, m = static_cast<int>(model.m);
  const auto rows = static_cast<int>(dist.size() / std::size_t(m));
  // Row-major rows x M is column-major M x rows, L# (k x M row-major) is
  // column-major M x k: the rows' k x rows column-major block is
  // -1/2 (L#)^T-as-stored times delta.
  if (rows > 0)
    lapack::gemm('T', 'N', k, rows, m, -0.5, model.pseudo_inverse.data(), m, dist.data(), m, 0.0,
                 out, k);
}

void square_landmark_distances(std::vector<double>& delta, std::int64_t m,
                               const std::string& source) {
  // d(l, l) = 0 and d(l, l') = d(l', l) exactly: the Gram trick (points) or
  // the order of a path's additions (geodesics) leaves round-off on the
  // diagonal and between the triangles.
  for (std::int64_t i = 0; i < m; ++i) {
    delta[std::size_t(i) * m + i] = 0;
    for (std::int64_t j = i + 1; j < m; ++j) {
      const double v = 0.5 * (delta[std::size_t(i) * m + j] + delta[std::size_t(j) * m + i]);
      delta[std::size_t(i) * m + j] = delta[std::size_t(j) * m + i] = v;
    }
  }
  center_squares(delta, false, std::vector<double>(std::size_t(m), 0.0), 0, source);
}

namespace {

// The sign convention of exact MDS on the embedding columns (its rows split
// over the ranks in blocks, this rank's from global row `first`): the entry
// of largest magnitude of each column positive, ties within a relative
// kSignTieTolerance to the lowest row. Flips `local` and returns the signs.
std::vector<double> fix_column_signs(std::vector<double>& local, int k, std::int64_t first,
                                     const Comm& comm) {
  const std::size_t rows = k > 0 ? local.size() / k : 0;
  std::vector<double> largest(k, 0.0);
  for (std::size_t i = 0; i < rows; ++i)
    for (int j = 0; j < k; ++j) largest[j] = std::max(largest[j], std::abs(local[i * k + j]));
  comm.max_in_place(largest);
  std::vector<long long> tie(k, std::numeric_limits<long long>::max());
  for (std::size_t i = 0; i < rows; ++i)
    for (int j = 0; j < k; ++j)
      if (std::abs(local[i * k + j]) >= largest[j] * (1 - spectral::kSignTieTolerance))
        tie[j] = std::min<long long>(tie[j], first + static_cast<long long>(i));
  comm.min_in_place(tie);
  std::vector<double> sign(k, 0.0);
  for (int j = 0; j < k; ++j) {
    const long long i = tie[j] - first;
    if (i >= 0 && i < static_cast<long long>(rows))
      sign[j] = local[std::size_t(i) * k + j] < 0 ? -1.0 : 1.0;
  }
  comm.sum_in_place(sign);  // exactly one owner per column
  for (int j = 0; j < k; ++j)
    if (sign[j] < 0)
      for (std::size_t i = 0; i < rows; ++i) local[i * k + j] = -local[i * k + j];
  return sign;
}

}  // namespace

// Classical MDS of the landmarks from their M x M squared distances `delta`
// (row-major, symmetric; the same on every rank): delta_mean, the spectrum
// of B_L and L#. The eigensolver runs on rank 0 and its results are
// broadcast, so every rank holds the same bits.
void fit_landmark_configuration(const std::vector<double>& delta, const Comm& comm,
                                LandmarkMdsResult& r) {
  LandmarkModel& model = r.model;
  const int m = static_cast<int>(model.m), k = model.k;
  model.delta_mean.assign(m, 0.0);
  double grand = 0;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < m; ++j) model.delta_mean[j] += delta[std::size_t(i) * m + j] / m;
  }
  for (int j = 0; j < m; ++j) grand += model.delta_mean[j] / m;
  std::vector<double> values, vectors;
  std::string error;
  if (comm.is_root()) {
    try {
      std::vector<double> b(std::size_t(m) * m);
      double frobenius = 0;
      for (int j = 0; j < m; ++j)
        for (int i = 0; i < m; ++i) {
          const double v = -0.5 * (delta[std::size_t(i) * m + j] - model.delta_mean[i] -
                                   model.delta_mean[j] + grand);
          b[std::size_t(j) * m + i] = v;
          frobenius += v * v;
        }
      frobenius = std::sqrt(frobenius);
      const std::vector<double> ascending = lapack::syevd(b, m);
      values.assign(ascending.rbegin(), ascending.rend());
      vectors.resize(std::size_t(m) * k);
      for (int j = 0; j < k; ++j)
        std::copy_n(&b[std::size_t(m - 1 - j) * m], m, &vectors[std::size_t(j) * m]);
      values.push_back(static_cast<double>(m) * std::numeric_limits<double>::epsilon() *
                       std::max(std::abs(values[0]), frobenius));
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  agree(comm, error);
  comm.broadcast(values);
  comm.broadcast(vectors);
  r.zero_threshold = values.back();
  values.pop_back();
  r.landmark_spectrum = values;
  r.negative_count = std::count_if(values.begin(), values.end(),
                                   [&](double v) { return v < -r.zero_threshold; });
  int positive = 0;
  while (positive < m && values[positive] > r.zero_threshold) ++positive;
  if (positive < k)
    throw Error("landmark MDS: --components " + std::to_string(k) + " needs " +
                std::to_string(k) + " positive eigenvalues of B = -1/2 J Delta J of the " +
                std::to_string(m) + " landmarks, but only " + std::to_string(positive) +
                " are above " + io::format_double(r.zero_threshold) +
                " (eigenvalue " + std::to_string(positive + 1) + " is " +
                io::format_double(values[positive]) + "); ask for at most " +
                std::to_string(positive) + " components, or use more landmarks");
  r.eigenvalues.assign(values.begin(), values.begin() + k);
  model.pseudo_inverse.assign(std::size_t(k) * m, 0.0);
  for (int j = 0; j < k; ++j) {
    const double scale = 1 / std::sqrt(r.eigenvalues[j]);
    for (int i = 0; i < m; ++i)
      model.pseudo_inverse[std::size_t(j) * m + i] = vectors[std::size_t(j) * m + i] * scale;
  }
}

void sign_landmark_embedding(std::vector<double>& local, std::int64_t first, const Comm& comm,
                             LandmarkModel& model) {
  const std::vector<double> sign = fix_column_signs(local, model.k, first, comm);
  const auto m = static_cast<std::size_t>(model.m);
  for (int j = 0; j < model.k; ++j)
    for (std::size_t i = 0; i < m; ++i) model.pseudo_inverse[std::size_t(j) * m + i] *= sign[j];
}

namespace {

// This rank's rows of the triangulated embedding, rows x k row-major:
// x_a = -1/2 L# (delta_a - delta_mean), panel by panel.
std::vector<double> triangulate_local(const LandmarkModel& model, io::MatrixFile& file,
                                      const Comm& comm, std::int64_t panel_rows) {
  const std::int64_t n = file.rows();
  const IndexRange mine = io::block_of_rows(n, comm.rank(), comm.size());
  const std::int64_t panels =
      comm.max(static_cast<long long>((mine.size() + panel_rows - 1) / panel_rows));
  const int k = model.k;
  const std::string source = model.metric ? "distances of " + file.path() + " to the landmarks"
                                          : file.path();
  std::vector<double> local(std::size_t(mine.size()) * k);
  std::vector<double> delta;  // reused by every panel
  for (std::int64_t p = 0; p < panels; ++p) {
    const std::int64_t begin = std::min(mine.end, mine.begin + p * panel_rows);
    const std::int64_t end = std::min(mine.end, begin + panel_rows);
    std::vector<io::RowRange> ranges;
    if (end > begin) ranges.push_back({begin, end});
    const std::vector<double> panel = file.read_rows(ranges);
    if (model.metric) {
      std::vector<std::int64_t> rows;
      for (std::int64_t i = begin; i < end; ++i) rows.push_back(i);
      check_cosine_rows(*model.metric, panel, static_cast<int>(model.d), rows, comm, file.path());
    }
    collectively(comm, [&] {
      const bool squared = panel_distances(model, panel, begin, source, delta);
      triangulate_rows(model, delta, squared, begin, source,
                       &local[std::size_t(begin - mine.begin) * k]);
    });
  }
  return local;
}

// The sampled pairs (i < j): every pair when there are at most `wanted`,
// else `wanted` pairs drawn uniformly (with replacement) from the seed.
std::vector<std::pair<std::int64_t, std::int64_t>> stress_sample(std::int64_t n,
                                                                 std::int64_t wanted,
                                                                 std::uint64_t seed) {
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
  const double all = 0.5 * double(n) * double(n - 1);
  if (all <= double(wanted)) {
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = i + 1; j < n; ++j) pairs.emplace_back(i, j);
    return pairs;
  }
  SplitMix64 rng{seed ^ 0x7374726573732121ull};
  for (std::int64_t p = 0; p < wanted; ++p) {
    const auto i = static_cast<std::int64_t>(rng.below(std::uint64_t(n)));
    auto j = static_cast<std::int64_t>(rng.below(std::uint64_t(n - 1)));
    if (j >= i) ++j;
    pairs.emplace_back(std::min(i, j), std::max(i, j));
  }
  return pairs;
}

// Kruskal's stress-1 of the sample: sqrt(sum (d - dhat)^2 / sum d^2), with
// d the metric distance of the points and dhat the Euclidean distance of
// their embeddings (`embedding`: all n x k rows, on every rank). The pairs
// are dealt round-robin over the ranks; each reads the points it needs.
double sample_stress(io::MatrixFile& points, kernel::Metric metric,
                     const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
                     const std::vector<double>& embedding, int k, const Comm& comm) {
  const int d = static_cast<int>(points.cols());
  std::vector<std::int64_t> rows;
  for (std::size_t p = comm.rank(); p < pairs.size(); p += comm.size()) {
    rows.push_back(pairs[p].first);
    rows.push_back(pairs[p].second);
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  const std::vector<double> x = points.read_rows(ranges_of(rows));
  std::vector<double> sums(2, 0.0);
  collectively(comm, [&] {
    std::vector<double> a(d), b(d), dist;
    for (std::size_t p = comm.rank(); p < pairs.size(); p += comm.size()) {
      const auto [i, j] = pairs[p];
      const auto li = std::lower_bound(rows.begin(), rows.end(), i) - rows.begin();
      const auto lj = std::lower_bound(rows.begin(), rows.end(), j) - rows.begin();
      std::copy_n(&x[std::size_t(li) * d], d, a.begin());
      std::copy_n(&x[std::size_t(lj) * d], d, b.begin());
      kernel::cross_distances(metric, a, b, d, dist);
      double fitted = 0;
      for (int c = 0; c < k; ++c) {
        const double t = embedding[std::size_t(i) * k + c] - embedding[std::size_t(j) * k + c];
        fitted += t * t;
      }
      fitted = std::sqrt(fitted);
      sums[0] += (dist[0] - fitted) * (dist[0] - fitted);
      sums[1] += dist[0] * dist[0];
    }
  });
  comm.sum_in_place(sums);
  return sums[1] > 0 ? std::sqrt(sums[0] / sums[1]) : 0.0;
}

}  // namespace

void check_landmark_request(std::int64_t n, std::int64_t m, int k) {
  if (m < 1) throw Error("--landmarks must be at least 1, got " + std::to_string(m));
  if (m > n)
    throw Error("--landmarks " + std::to_string(m) + " exceeds the number of points (" +
                std::to_string(n) + ")");
  if (m < std::int64_t(k) + 1)
    throw Error("--landmarks " + std::to_string(m) + " is too few for --components " +
                std::to_string(k) + ": classical MDS of M landmarks has at most M - 1 "
                "dimensions, so M must be at least " + std::to_string(k + 1));
}

namespace {

// Collective: an agreed Error when the fit does not fit in the memory limit.
void check_landmark_memory(const LandmarkMdsSettings& s, LandmarkMdsResult& r, const Comm& comm) {
  const LandmarkModel& model = r.model;
  r.memory_estimate =
      landmark_mds_memory(r.n, model.d, model.m, model.k, comm.size(), s.panel_rows);
  r.memory_limit = s.max_memory_per_rank > 0 ? s.max_memory_per_rank
                                             : spectral::available_memory_per_rank(comm);
  agree(comm, spectral::streamed_shortfall(
                  [&](int ranks) {
                    return landmark_mds_memory(r.n, model.d, model.m, model.k, ranks,
                                               s.panel_rows);
                  },
                  comm.size(), r.memory_limit));
}

// The steps after the landmark configuration, shared by both inputs:
// triangulation, signs (folded into L#), gathering.
std::vector<double> embed_all(io::MatrixFile& file, const LandmarkMdsSettings& s,
                              const Comm& comm, PhaseTimer& timer, LandmarkMdsResult& r) {
  timer.start("triangulate");
  std::vector<double> local = triangulate_local(r.model, file, comm, s.panel_rows);
  const IndexRange mine = io::block_of_rows(r.n, comm.rank(), comm.size());
  sign_landmark_embedding(local, mine.begin, comm, r.model);
  timer.start("gather");
  return local;
}

}  // namespace

double landmark_mds_memory(std::int64_t n, std::int64_t d, std::int64_t m, int k, int ranks,
                           std::int64_t panel_rows) {
  const double local_rows = std::ceil(double(n) / std::max(ranks, 1));
  const double panel = std::min(double(panel_rows), local_rows);
  // Landmark points; Delta, B and its eigenvectors (rank 0); L#; a panel of
  // points, its distances and their squares; the local rows of the
  // embedding and, for the sampled stress, the n x k embedding on every rank.
  const double values = double(m) * double(d) + 3.0 * double(m) * double(m) + double(k) * m +
                        panel * (double(d) + 2.0 * double(m)) + local_rows * k +
                        2.0 * double(n) * k;
  return 8 * values;
}

LandmarkMdsResult landmark_mds_points(io::MatrixFile& points, kernel::Metric metric,
                                      const LandmarkMdsSettings& s, const Comm& comm,
                                      PhaseTimer& timer) {
  LandmarkMdsResult r;
  r.n = points.rows();
  LandmarkModel& model = r.model;
  model.metric = metric;
  model.d = points.cols();
  model.m = s.landmarks;
  model.k = s.components;
  check_landmark_request(r.n, model.m, model.k);
  check_landmark_memory(s, r, comm);

  timer.start("landmarks");
  r.landmark_rows = uniform_landmarks(r.n, model.m, s.seed);
  model.landmark_points = points.read_rows(ranges_of(r.landmark_rows));
  check_cosine_rows(metric, model.landmark_points, static_cast<int>(model.d), r.landmark_rows,
                    comm, points.path());

  timer.start("landmark_mds");
  std::vector<double> delta;
  collectively(comm, [&] {
    kernel::cross_distances(metric, model.landmark_points, model.landmark_points,
                            static_cast<int>(model.d), delta);
    square_landmark_distances(delta, model.m,
                              "distances among the landmarks of " + points.path());
  });
  fit_landmark_configuration(delta, comm, r);
  delta = {};

  std::vector<double> local = embed_all(points, s, comm, timer, r);
  std::vector<double> all = comm.allgatherv(local);
  local = {};
  if (s.stress_pairs > 0) {
    timer.start("stress");
    const auto pairs = stress_sample(r.n, s.stress_pairs, s.seed);
    r.stress_pairs = static_cast<std::int64_t>(pairs.size());
    r.sample_stress = sample_stress(points, metric, pairs, all, model.k, comm);
  }
  if (comm.is_root()) r.embedding = std::move(all);
  r.scaled_eigenvalues = r.eigenvalues;
  for (double& v : r.scaled_eigenvalues) v *= double(r.n) / double(model.m);
  return r;
}

LandmarkMdsResult landmark_mds_distances(io::MatrixFile& to_landmarks,
                                         io::MatrixFile& among_landmarks,
                                         const LandmarkMdsSettings& s, const Comm& comm,
                                         PhaseTimer& timer) {
  LandmarkMdsResult r;
  r.n = to_landmarks.rows();
  LandmarkModel& model = r.model;
  model.m = to_landmarks.cols();
  model.k = s.components;
  const std::string& lpath = among_landmarks.path();
  if (among_landmarks.rows() != among_landmarks.cols())
    throw Error(lpath + ": the landmark distances must be square (M x M), found " +
                std::to_string(among_landmarks.rows()) + " x " +
                std::to_string(among_landmarks.cols()));
  if (among_landmarks.rows() != model.m)
    throw Error(lpath + " holds the distances among " + std::to_string(among_landmarks.rows()) +
                " landmarks, but " + to_landmarks.path() + " has " + std::to_string(model.m) +
                " columns (one per landmark)");
  if (s.landmarks > 0 && s.landmarks != model.m)
    throw Error("--landmarks " + std::to_string(s.landmarks) + " does not match the " +
                std::to_string(model.m) + " landmarks of " + lpath);
  check_landmark_request(r.n, model.m, model.k);
  check_landmark_memory(s, r, comm);

  timer.start("landmarks");
  std::vector<double> delta =
      among_landmarks.read_rows(comm.is_root() ? std::vector<io::RowRange>{{0, model.m}}
                                               : std::vector<io::RowRange>{});
  collectively(comm, [&] {
    if (!comm.is_root()) return;
    const std::int64_t m = model.m;
    double largest = 0;
    for (double v : delta) largest = std::max(largest, std::abs(v));
    const double bound = kernel::kDistanceTolerance * largest;
    const auto at = [&](std::int64_t i, std::int64_t j) -> double& {
      return delta[std::size_t(i) * m + j];
    };
    for (std::int64_t i = 0; i < m; ++i)
      if (!(std::abs(at(i, i)) <= bound))
        throw Error(lpath + ": not a distance matrix: diagonal entry " + entry(i, i) + " is " +
                    io::format_double(at(i, i)) +
                    ", but the distance of a landmark to itself must be 0 (1-based)");
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < m; ++j)
        if (at(i, j) < 0)
          throw Error(lpath + ": not a distance matrix: entry " + entry(i, j) + " is " +
                      io::format_double(at(i, j)) +
                      ", but distances must be non-negative (1-based)");
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = i + 1; j < m; ++j)
        if (!(std::abs(at(i, j) - at(j, i)) <= bound))
          throw Error(lpath + ": not a distance matrix: entry " + entry(i, j) + " is " +
                      io::format_double(at(i, j)) + " but " + entry(j, i) + " is " +
                      io::format_double(at(j, i)) + " (1-based), not symmetric within a relative " +
                      io::format_double(kernel::kDistanceTolerance));
    square_landmark_distances(delta, m, lpath);
  });
  comm.broadcast(delta);

  timer.start("landmark_mds");
  fit_landmark_configuration(delta, comm, r);
  delta = {};
  std::vector<double> local = embed_all(to_landmarks, s, comm, timer, r);
  r.embedding = comm.gatherv(local);
  r.scaled_eigenvalues = r.eigenvalues;
  for (double& v : r.scaled_eigenvalues) v *= double(r.n) / double(model.m);
  return r;
}

std::vector<double> triangulate(const LandmarkModel& model, io::MatrixFile& points,
                                const Comm& comm, std::int64_t panel_rows) {
  const std::int64_t expected = model.metric ? model.d : model.m;
  if (points.cols() != expected)
    throw Error(points.path() + " has " + std::to_string(points.cols()) + " columns, but the " +
                "landmark MDS model expects " + std::to_string(expected) +
                (model.metric ? " (the training points' coordinates)"
                              : " (distances to each of its landmarks)"));
  return comm.gatherv(triangulate_local(model, points, comm, panel_rows));
}

}  // namespace kembed::approx
