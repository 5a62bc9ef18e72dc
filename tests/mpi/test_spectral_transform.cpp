// The out-of-sample Laplacian eigenmap (Nystrom extension of M =
// D^(-1/2) W D^(-1/2)): training points fed back reproduce the fit's
// embedding (rbf, and knn where the rebuilt affinity row is the fit's row of
// W, checked entry by entry against a brute-force W), and new points against
// a serial reference built here: W from the definitions, LAPACK's
// eigenvectors of the dense M, then the formula written out.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "kembed/graph/kd_tree.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/spectral/laplacian_eigenmaps.hpp"
#include "kembed/spectral/spectral_transform.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using namespace kembed;

namespace {

using spectral::Affinity;

// A noisy swiss roll of n points (row-major, d = 3).
std::vector<double> swiss_roll(int n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> x;
  for (int i = 0; i < n; ++i) {
    const double t = 1.5 * M_PI * (1 + 2 * u(gen));
    x.insert(x.end(), {t * std::cos(t), 21 * u(gen), t * std::sin(t)});
  }
  return x;
}

double sq_distance(const double* a, const double* b, int d) {
  double s = 0;
  for (int t = 0; t < d; ++t) s += (a[t] - b[t]) * (a[t] - b[t]);
  return s;
}

struct Fitted {
  spectral::LaplacianEigenmapsResult result;
  spectral::SpectralExtension model;  // on every rank
};

// Fits `x` and builds the extension from the fit as `kembed spectral` saves
// it: v = y sqrt(degree), mu_2 .. mu_(k+1), the last listed neighbours.
Fitted fit(const Comm& comm, const std::string& name, const std::vector<double>& x, int n, int d,
           Affinity affinity, int k) {
  const auto dir = test::scratch_dir(comm, "spectral_transform_" + name);
  auto file = io::open_matrix_file(comm, test::write_bin(comm, dir, "x.bin", x), {n, d});
  BlacsGrid grid(comm);
  spectral::LaplacianEigenmapsSettings settings;
  settings.affinity = affinity;
  settings.gamma = 0.05;
  settings.neighbors = 8;
  settings.components = k;
  settings.solver = affinity == Affinity::rbf ? spectral::Solver::evd : spectral::Solver::krylov;
  settings.block_size = 8;
  PhaseTimer timer(comm);
  Fitted f;
  f.result = spectral::fit_laplacian_eigenmaps(*file, grid, settings, timer);
  spectral::SpectralExtension& e = f.model;
  e.n = n;
  e.d = d;
  e.k = k;
  e.affinity = affinity;
  e.gamma = f.result.gamma;
  e.neighbors = f.result.neighbors;
  e.points = x;
  e.eigenvalues.assign(f.result.affinity_eigenvalues.begin() + 1,
                       f.result.affinity_eigenvalues.end());
  std::vector<double> y = f.result.embedding,
                      last(f.result.neighbor_last.begin(), f.result.neighbor_last.end());
  e.degrees = f.result.degrees;
  e.neighbor_radius = f.result.neighbor_radius;
  comm.broadcast(y);
  comm.broadcast(e.degrees);
  comm.broadcast(e.neighbor_radius);
  comm.broadcast(last);
  for (double t : last) e.neighbor_last.push_back(static_cast<std::int64_t>(t));
  e.vectors.resize(y.size());
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < k; ++c)
      e.vectors[std::size_t(i) * k + c] = y[std::size_t(i) * k + c] * std::sqrt(e.degrees[i]);
  return f;
}

std::vector<double> transform(const Comm& comm, const std::string& name,
                              const spectral::SpectralExtension& model,
                              const std::vector<double>& points, int m) {
  const auto dir = test::scratch_dir(comm, "spectral_transform_new_" + name);
  const int d = static_cast<int>(model.d);
  auto file = io::open_matrix_file(comm, test::write_bin(comm, dir, "new.bin", points), {m, d});
  return spectral::spectral_transform(model, *file, comm);
}

// W = 1/2 (C + C^T) without its diagonal, C_ij = 1 for the K - 1 nearest
// others of i (ties to the lower index), by sorting all distances.
test::Dense knn_affinity(const std::vector<double>& x, int n, int d, int others) {
  test::Dense w{n, std::vector<double>(std::size_t(n) * n, 0.0)};
  for (int i = 0; i < n; ++i) {
    std::vector<std::pair<double, int>> all;
    for (int j = 0; j < n; ++j)
      if (j != i)
        all.emplace_back(std::sqrt(sq_distance(&x[std::size_t(i) * d], &x[std::size_t(j) * d], d)),
                         j);
    std::sort(all.begin(), all.end());
    for (int t = 0; t < others; ++t) {
      w(i, all[t].second) += 0.5;
      w(all[t].second, i) += 0.5;
    }
  }
  return w;
}

// The serial Laplacian eigenmap of the dense W: degrees, the top k + 1
// eigenpairs of D^(-1/2) W D^(-1/2) by LAPACK (dsyevd), kept pairs 2..k+1
// with each embedding column's largest |entry| positive.
struct SerialEigenmap {
  std::vector<double> degree, mu;
  std::vector<double> v;  // n x k row-major, signed as the embedding
};

SerialEigenmap serial_eigenmap(const test::Dense& w, int k) {
  const int n = w.n;
  SerialEigenmap s;
  s.degree.assign(n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) s.degree[i] += w(i, j);
  test::Dense m = w, vectors;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) m(i, j) /= std::sqrt(s.degree[i] * s.degree[j]);
  const auto lambda = test::serial_eigh(m, vectors);  // ascending
  s.v.assign(std::size_t(n) * k, 0.0);
  for (int c = 0; c < k; ++c) {
    s.mu.push_back(lambda[n - 2 - c]);
    int arg = 0;
    for (int i = 0; i < n; ++i)
      if (std::abs(vectors(i, n - 2 - c) / std::sqrt(s.degree[i])) >
          std::abs(vectors(arg, n - 2 - c) / std::sqrt(s.degree[arg])))
        arg = i;
    const double sign = vectors(arg, n - 2 - c) < 0 ? -1 : 1;
    for (int i = 0; i < n; ++i) s.v[std::size_t(i) * k + c] = sign * vectors(i, n - 2 - c);
  }
  return s;
}

// y_c(x) = (1/mu_c) sum_i w_i v_ic / sqrt(d(x) d_i) / sqrt(d(x)), written out.
std::vector<double> serial_extension(const SerialEigenmap& s, const std::vector<double>& w, int k) {
  const int n = static_cast<int>(s.degree.size());
  double dx = 0;
  for (double t : w) dx += t;
  std::vector<double> y(k, 0.0);
  for (int c = 0; c < k; ++c) {
    double sum = 0;
    for (int i = 0; i < n; ++i)
      sum += w[i] * s.v[std::size_t(i) * k + c] / std::sqrt(dx * s.degree[i]);
    y[c] = sum / s.mu[c] / std::sqrt(dx);
  }
  return y;
}

}  // namespace

// rbf: every training point fed back as a new point has the fit's affinity
// row (its own, zero-distance entry left out), so the extension gives back
// the training embedding; to 1e-10 on every rank count.
TEST(SpectralTransform, RbfTrainingPointsReproduceEmbedding) {
  const Comm comm = Comm::world();
  const int n = 70, d = 3, k = 3;
  const auto x = swiss_roll(n, 11);
  const Fitted f = fit(comm, "rbf", x, n, d, Affinity::rbf, k);
  const auto y = transform(comm, "rbf", f.model, x, n);
  if (comm.is_root()) {
    ASSERT_EQ(y.size(), f.result.embedding.size());
    EXPECT_LT(test::max_abs_diff(y, f.result.embedding), 1e-10);
  }
}

// knn: affinity_row of a training point equals row j of the brute-force
// W = 1/2 (C + C^T) exactly (weights 0, 1/2, 1), and so does the k-d tree's
// sparse row (also for 20 new points); that row fed to extend_row
// reproduces the embedding, and so does the whole collective transform.
TEST(SpectralTransform, KnnTrainingRowsReproduceEmbedding) {
  const Comm comm = Comm::world();
  const int n = 80, d = 3, k = 2;
  const auto x = swiss_roll(n, 5);
  const Fitted f = fit(comm, "knn", x, n, d, Affinity::knn, k);
  const test::Dense w = knn_affinity(x, n, d, 7);
  bool rows_equal = true;
  double worst = 0;
  std::vector<double> row, yj(k);
  std::vector<double> embedding = f.result.embedding;
  comm.broadcast(embedding);
  // The k-d tree's sparse rows (what transform uses at d = 3) against the scan's.
  const graph::KdTree tree(x, d, kernel::Metric::euclidean);
  const double max_radius =
      *std::max_element(f.model.neighbor_radius.begin(), f.model.neighbor_radius.end());
  std::vector<spectral::AffinityEntry> sparse;
  const auto tree_row_is = [&](const double* p, const std::vector<double>& dense) {
    spectral::tree_affinity_row(f.model, tree, max_radius, p, sparse);
    std::vector<double> expanded(n, 0.0);
    for (const auto& [i, weight] : sparse) expanded[i] = weight;
    return expanded == dense;
  };
  const auto fresh = swiss_roll(20, 6);
  for (int p = 0; p < 20; ++p) {
    spectral::affinity_row(f.model, &fresh[std::size_t(p) * d], row);
    rows_equal = rows_equal && tree_row_is(&fresh[std::size_t(p) * d], row);
  }
  for (int j = 0; j < n; ++j) {
    spectral::affinity_row(f.model, &x[std::size_t(j) * d], row);
    rows_equal = rows_equal && tree_row_is(&x[std::size_t(j) * d], row);
    for (int i = 0; i < n; ++i) rows_equal = rows_equal && row[i] == w(j, i);
    std::vector<double> fit_row(n);
    for (int i = 0; i < n; ++i) fit_row[i] = w(j, i);
    spectral::extend_row(f.model, fit_row.data(), yj.data());
    for (int c = 0; c < k; ++c)
      worst = std::max(worst, std::abs(yj[c] - embedding[std::size_t(j) * k + c]));
  }
  EXPECT_TRUE(test::all_ranks(comm, rows_equal));
  EXPECT_TRUE(test::all_ranks(comm, worst < 1e-10)) << worst;
  const auto y = transform(comm, "knn", f.model, x, n);
  if (comm.is_root()) {
    EXPECT_LT(test::max_abs_diff(y, f.result.embedding), 1e-10);
  }
}

// New points against the serial reference: W from the definitions, LAPACK
// eigenpairs of the dense M, the new points' affinities by hand (rbf: the
// kernel to every training point; knn: 1/2 for each of the new point's 7
// nearest, 1/2 for each training point whose 7 nearest others it would
// displace, i.e. strictly nearer than the 7th), then the formula.
TEST(SpectralTransform, NewPointsMatchSerialReference) {
  const Comm comm = Comm::world();
  const int n = 80, m = 9, d = 3, k = 2;
  const auto x = swiss_roll(n, 21);
  const auto fresh = swiss_roll(m, 22);
  for (Affinity affinity : {Affinity::rbf, Affinity::knn}) {
    const bool rbf = affinity == Affinity::rbf;
    const std::string name = rbf ? "new_rbf" : "new_knn";
    const Fitted f = fit(comm, name, x, n, d, affinity, k);
    const auto y = transform(comm, name, f.model, fresh, m);
    if (!comm.is_root()) continue;
    test::Dense w = knn_affinity(x, n, d, 7);
    if (rbf)
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          w(i, j) = i == j ? 0.0
                           : std::exp(-0.05 * sq_distance(&x[std::size_t(i) * d],
                                                          &x[std::size_t(j) * d], d));
    const SerialEigenmap s = serial_eigenmap(w, k);
    EXPECT_NEAR(s.mu[0], f.result.affinity_eigenvalues[1], 1e-12) << name;
    std::vector<double> want;
    for (int p = 0; p < m; ++p) {
      const double* q = &fresh[std::size_t(p) * d];
      std::vector<double> wx(n, 0.0);
      if (rbf) {
        for (int i = 0; i < n; ++i)
          wx[i] = std::exp(-0.05 * sq_distance(q, &x[std::size_t(i) * d], d));
      } else {
        std::vector<std::pair<double, int>> near;
        for (int i = 0; i < n; ++i)
          near.emplace_back(std::sqrt(sq_distance(q, &x[std::size_t(i) * d], d)), i);
        std::sort(near.begin(), near.end());
        for (int t = 0; t < 7; ++t) wx[near[t].second] += 0.5;
        for (int i = 0; i < n; ++i) {
          std::vector<double> others;
          for (int j = 0; j < n; ++j)
            if (j != i)
              others.push_back(
                  std::sqrt(sq_distance(&x[std::size_t(i) * d], &x[std::size_t(j) * d], d)));
          std::sort(others.begin(), others.end());
          if (std::sqrt(sq_distance(q, &x[std::size_t(i) * d], d)) < others[6]) wx[i] += 0.5;
        }
      }
      const auto yp = serial_extension(s, wx, k);
      want.insert(want.end(), yp.begin(), yp.end());
    }
    ASSERT_EQ(y.size(), want.size());
    EXPECT_LT(test::max_abs_diff(y, want), 1e-10) << name;
    // Not a copy of the training embedding: new points lie elsewhere.
    EXPECT_GT(test::max_abs_diff(y, std::vector<double>(f.result.embedding.begin(),
                                                        f.result.embedding.begin() + m * k)),
              1e-3)
        << name;
  }
}

// A point whose every rbf weight underflows has degree 0: an agreed error
// naming its row; a kept eigenvalue near 0 is refused before any model.
TEST(SpectralTransform, DegreeZeroAndSmallEigenvaluesRefused) {
  const Comm comm = Comm::world();
  const int n = 40, d = 3;
  const auto x = swiss_roll(n, 3);
  const Fitted f = fit(comm, "far", x, n, d, Affinity::rbf, 2);
  std::vector<double> fresh = swiss_roll(4, 4);
  fresh[2 * d + 1] = 1e4;  // row 3: exp(-0.05 * 1e8) underflows
  const std::string message = test::caught([&] { transform(comm, "far", f.model, fresh, 4); });
  EXPECT_NE(message.find("new.bin: row 3 has no affinity to any training point"), std::string::npos)
      << message;
  EXPECT_TRUE(test::all_ranks(comm, !message.empty()));
  EXPECT_EQ(spectral::extension_eigenvalue_error({0.9, 0.5}, "fit"), "");
  const std::string small = spectral::extension_eigenvalue_error({0.9, 1e-12}, "fit");
  EXPECT_NE(small.find("(component 2) is below"), std::string::npos) << small;
  EXPECT_NE(spectral::extension_eigenvalue_error({-0.2}, "fit"), "");
}
