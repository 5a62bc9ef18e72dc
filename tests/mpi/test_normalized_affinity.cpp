// The kNN affinity as distributed sparse rows and the operator
// M = D^(-1/2) W D^(-1/2) on them, against dense serial references built
// here from brute-force distances: W's rows on every rank, M X, the graph's
// components (against the replicated graph), the Chebyshev filter p(M) X
// (against V p(Lambda) V^T X from LAPACK with p in closed form), and the
// Laplacian eigenmap against a dense serial eigendecomposition and against
// scikit-learn's numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "kembed/graph/neighbors.hpp"
#include "kembed/graph/sparse_rows.hpp"
#include "kembed/graph/sparse_rows_stats.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/spectral/chebyshev_filter.hpp"
#include "kembed/spectral/laplacian_eigenmaps.hpp"
#include "kembed/spectral/normalized_affinity.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using namespace kembed;

namespace {

// W = (C + C^T) / 2 without its diagonal, C_ij = 1 for the K - 1 nearest
// others of i (ties to the lower index), by sorting all distances.
test::Dense brute_force_affinity(const std::vector<double>& x, int n, int d, int others) {
  test::Dense w{n, std::vector<double>(std::size_t(n) * n, 0.0)};
  for (int i = 0; i < n; ++i) {
    std::vector<std::pair<double, int>> all;
    for (int j = 0; j < n; ++j) {
      if (j == i) continue;
      double s = 0;
      for (int t = 0; t < d; ++t)
        s += (x[std::size_t(i) * d + t] - x[std::size_t(j) * d + t]) *
             (x[std::size_t(i) * d + t] - x[std::size_t(j) * d + t]);
      all.emplace_back(std::sqrt(s), j);
    }
    std::sort(all.begin(), all.end());
    for (int t = 0; t < others; ++t) {
      w(i, all[t].second) += 0.5;
      w(all[t].second, i) += 0.5;
    }
  }
  return w;
}

test::Dense normalized(const test::Dense& w) {
  const int n = w.n;
  std::vector<double> degree(n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) degree[i] += w(i, j);
  test::Dense m = w;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) m(i, j) /= std::sqrt(degree[i] * degree[j]);
  return m;
}

struct ListedPoints {
  std::unique_ptr<io::MatrixFile> file;
  graph::NeighborLists lists;
};

ListedPoints lists_of(const Comm& comm, const std::string& name, const std::vector<double>& x,
                      int n, int d, int others) {
  const auto dir = test::scratch_dir(comm, "affinity_" + name);
  ListedPoints s;
  s.file = io::open_matrix_file(comm, test::write_bin(comm, dir, name + ".bin", x), {n, d});
  graph::NeighborSettings ns;
  ns.neighbors = others;
  ns.chunk_rows = 7;
  s.lists = graph::nearest_neighbors(*s.file, *s.file, ns, true, comm);
  return s;
}

// Rows of the column-major n x width `x` that `rows` deals to this rank.
std::vector<double> my_rows(const std::vector<double>& x, int n, int width,
                            const BlockCyclic1D& rows) {
  std::vector<double> out(std::size_t(std::max(1, rows.local_size())) * width, 0.0);
  for (int c = 0; c < width; ++c)
    for (int li = 0; li < rows.local_size(); ++li)
      out[std::size_t(c) * std::max(1, rows.local_size()) + li] =
          x[std::size_t(c) * n + rows.to_global(li)];
  return out;
}

}  // namespace

TEST(SparseAffinity, RowsAndProductMatchDenseSerialReference) {
  const Comm comm = Comm::world();
  const int n = 61, d = 3, others = 5, width = 4;
  const auto x = test::random_data(n, d, 17);
  const test::Dense w = brute_force_affinity(x, n, d, others);
  const test::Dense m = normalized(w);
  const auto xs = test::random_data(n, width, 5);  // n x width, read as column-major
  for (int nb : {1, 4, 64}) {
    const ListedPoints s = lists_of(comm, "rows" + std::to_string(nb), x, n, d, others);
    graph::SparseRows rows = graph::symmetrized_rows(n, nb, s.lists, comm);
    // Every stored entry is W's, and every non-zero of W's rows is stored.
    bool ok = rows.offsets.size() == std::size_t(rows.rows.local_size()) + 1;
    for (int li = 0; ok && li < rows.rows.local_size(); ++li) {
      const std::int64_t i = rows.rows.to_global(li);
      int nonzeros = 0;
      for (int j = 0; j < n; ++j) nonzeros += w(int(i), j) != 0;
      ok = ok && rows.offsets[li + 1] - rows.offsets[li] == nonzeros;
      for (auto t = rows.offsets[li]; ok && t < rows.offsets[li + 1]; ++t)
        ok = rows.values[t] == w(int(i), int(rows.columns[t])) &&
             (t == rows.offsets[li] || rows.columns[t] > rows.columns[t - 1]);
    }
    EXPECT_TRUE(test::all_ranks(comm, ok)) << "block size " << nb;

    BlacsGrid grid(comm, comm.size(), 1);
    spectral::NormalizedAffinity op(std::move(rows), grid);
    const auto& layout = op.rows();
    const int ld = std::max(1, layout.local_size());
    const auto mine = my_rows(xs, n, width, layout);
    std::vector<double> y(std::size_t(ld) * width, 0.0);
    op.apply(mine.data(), ld, width, y.data(), ld);
    double err = 0;
    for (int c = 0; c < width; ++c)
      for (int li = 0; li < layout.local_size(); ++li) {
        const int i = static_cast<int>(layout.to_global(li));
        double want = 0;
        for (int j = 0; j < n; ++j) want += m(i, j) * xs[std::size_t(c) * n + j];
        err = std::max(err, std::abs(y[std::size_t(c) * ld + li] - want));
      }
    EXPECT_TRUE(test::all_ranks(comm, err < 1e-14)) << "block size " << nb << ": " << err;

    double frobenius = 0;
    for (double v : m.a) frobenius += v * v;
    EXPECT_NEAR(op.frobenius_norm(), std::sqrt(frobenius), 1e-13);
  }
}

TEST(SparseAffinity, GraphStatsMatchReplicatedGraph) {
  const Comm comm = Comm::world();
  // Two clusters far apart, and one cloud: 2 and 1 components.
  const int n = 50, d = 2;
  for (double gap : {1000.0, 0.0}) {
    auto x = test::random_data(n, d, 3);
    for (int i = 0; i < n; i += 3) x[std::size_t(i) * d] += gap;
    graph::NeighborSettings ns;
    ns.neighbors = 4;
    const ListedPoints s = lists_of(comm, "stats", x, n, d, ns.neighbors);
    const auto rows = graph::symmetrized_rows(n, 3, s.lists, comm);
    const graph::GraphStats got = graph::graph_stats(rows, comm);
    const graph::GraphStats want = graph::graph_stats(graph::neighborhood_graph(*s.file, ns, comm));
    EXPECT_EQ(got.components, gap > 0 ? 2 : 1);
    EXPECT_EQ(got.components, want.components);
    EXPECT_EQ(got.component_sizes, want.component_sizes);
    EXPECT_EQ(got.edges, want.edges);
    EXPECT_EQ(got.min_degree, want.min_degree);
    EXPECT_EQ(got.max_degree, want.max_degree);
  }
}

// p(M) X = V p(Lambda) V^T X with p(l) = T_m(L(l)) / T_m(L(1)) in closed
// form (cos / cosh of m arccos / arccosh), M from LAPACK's eigendecomposition.
TEST(SparseAffinity, ChebyshevFilterMatchesSpectralReference) {
  const Comm comm = Comm::world();
  const int n = 40, d = 2, others = 4, width = 3, degree = 9;
  const spectral::ChebyshevInterval interval{-1, 0.8, 1};
  const auto x = test::random_data(n, d, 23);
  const test::Dense m = normalized(brute_force_affinity(x, n, d, others));
  test::Dense v;
  const auto lambda = test::serial_eigh(m, v);
  const auto chebyshev = [&](double t) {
    return std::abs(t) <= 1 ? std::cos(degree * std::acos(t))
                            : (t > 0 ? 1.0 : (degree % 2 ? -1.0 : 1.0)) *
                                  std::cosh(degree * std::acosh(std::abs(t)));
  };
  const auto map = [&](double l) {
    return (2 * l - (interval.cut + interval.lower)) / (interval.cut - interval.lower);
  };
  const auto p = [&](double l) { return chebyshev(map(l)) / chebyshev(map(1)); };
  const auto xs = test::random_data(n, width, 8);
  std::vector<double> want(std::size_t(n) * width, 0.0);
  for (int c = 0; c < width; ++c)
    for (int e = 0; e < n; ++e) {
      double proj = 0;
      for (int j = 0; j < n; ++j) proj += v(j, e) * xs[std::size_t(c) * n + j];
      for (int i = 0; i < n; ++i) want[std::size_t(c) * n + i] += v(i, e) * p(lambda[e]) * proj;
    }
  const ListedPoints s = lists_of(comm, "filter", x, n, d, others);
  BlacsGrid grid(comm, comm.size(), 1);
  spectral::NormalizedAffinity op(graph::symmetrized_rows(n, 5, s.lists, comm), grid);
  spectral::ChebyshevFilter filter(op, degree, interval);
  for (double l : lambda) EXPECT_NEAR(filter.value(l), p(l), 1e-13) << l;
  const auto& layout = filter.rows();
  const int ld = std::max(1, layout.local_size());
  const auto mine = my_rows(xs, n, width, layout);
  std::vector<double> y(std::size_t(ld) * width, 0.0);
  filter.apply(mine.data(), ld, width, y.data(), ld);
  EXPECT_EQ(op.products(), degree);
  double err = 0;
  for (int c = 0; c < width; ++c)
    for (int li = 0; li < layout.local_size(); ++li)
      err = std::max(err, std::abs(y[std::size_t(c) * ld + li] -
                                   want[std::size_t(c) * n + layout.to_global(li)]));
  EXPECT_TRUE(test::all_ranks(comm, err < 1e-13)) << err;
}

namespace {

spectral::LaplacianEigenmapsResult knn_embedding(const Comm& comm, const std::string& name,
                                                 const std::vector<double>& x, int n, int d,
                                                 int neighbors, int nb, bool deflate = true,
                                                 spectral::AffinityMethod method =
                                                     spectral::AffinityMethod::multigrid,
                                                 int max_levels = 0, int lobpcg_iterations = 0) {
  const auto dir = test::scratch_dir(comm, "embedding_" + name);
  auto file = io::open_matrix_file(comm, test::write_bin(comm, dir, name + ".bin", x), {n, d});
  BlacsGrid grid(comm);
  spectral::LaplacianEigenmapsSettings settings;
  settings.affinity = spectral::Affinity::knn;
  settings.neighbors = neighbors;
  settings.components = 2;
  settings.solver = spectral::Solver::automatic;
  settings.block_size = nb;
  settings.knn_solve.deflate = deflate;
  settings.knn_solve.method = method;
  if (max_levels > 0) settings.knn_solve.multigrid.max_levels = max_levels;
  if (lobpcg_iterations > 0) settings.knn_solve.max_iterations = lobpcg_iterations;
  PhaseTimer timer(comm);
  return spectral::fit_laplacian_eigenmaps(*file, grid, settings, timer);
}

// Largest |a - s b| over the columns of the n x 2 row-major a and b, with s
// the sign of each column's a . b.
double difference_up_to_sign(const std::vector<double>& a, const std::vector<double>& b, int n) {
  double worst = 0;
  for (int c = 0; c < 2; ++c) {
    double dot = 0;
    for (int i = 0; i < n; ++i) dot += a[std::size_t(i) * 2 + c] * b[std::size_t(i) * 2 + c];
    for (int i = 0; i < n; ++i)
      worst = std::max(worst, std::abs(a[std::size_t(i) * 2 + c] -
                                       (dot < 0 ? -1 : 1) * b[std::size_t(i) * 2 + c]));
  }
  return worst;
}

}  // namespace

// The embedding of a swiss roll (n = 300, K = 8) against the dense serial
// eigendecomposition of M (LAPACK), each column v / sqrt(degree) with its
// largest |entry| positive: to 1e-10 on every rank count and block size, so
// rank counts agree with each other to 2e-10.
TEST(SparseAffinity, EmbeddingMatchesDenseSerialEigenvectors) {
  const Comm comm = Comm::world();
  const int n = 300, d = 3, neighbors = 8;
  std::mt19937 gen(4);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> x;
  for (int i = 0; i < n; ++i) {
    const double t = 1.5 * M_PI * (1 + 2 * u(gen));
    x.insert(x.end(), {t * std::cos(t), 21 * u(gen), t * std::sin(t)});
  }
  const test::Dense w = brute_force_affinity(x, n, d, neighbors - 1);
  std::vector<double> degree(n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) degree[i] += w(i, j);
  test::Dense v;
  const auto lambda = test::serial_eigh(normalized(w), v);  // ascending
  ASSERT_LT(lambda[n - 2], 1 - 1e-6) << "the test graph must be connected";
  std::vector<double> want(std::size_t(n) * 2);
  for (int c = 0; c < 2; ++c) {
    int arg = 0;
    for (int i = 0; i < n; ++i) {
      want[std::size_t(i) * 2 + c] = v(i, n - 2 - c) / std::sqrt(degree[i]);
      if (std::abs(want[std::size_t(i) * 2 + c]) > std::abs(want[std::size_t(arg) * 2 + c]))
        arg = i;
    }
    if (want[std::size_t(arg) * 2 + c] < 0)
      for (int i = 0; i < n; ++i) want[std::size_t(i) * 2 + c] *= -1;
  }
  // The multigrid (LOBPCG) and the filter (Krylov on p(M)); with the top
  // vector deflated or (the multigrid then needs it: the filter runs) found
  // as the first pair; a hierarchy that cannot be built (max_levels 1) and
  // LOBPCG stopped before it converges (2 iterations): the filter runs, and
  // the note says why.
  using spectral::AffinityMethod;
  struct Case {
    AffinityMethod method;
    bool deflate;
    int max_levels, lobpcg_iterations;
    const char* solver;  // solver_used
    const char* note;    // in the note
  };
  for (const Case& c :
       {Case{AffinityMethod::multigrid, true, 0, 0, "lobpcg", "multigrid V-cycle"},
        Case{AffinityMethod::multigrid, false, 0, 0, "krylov", "top eigenvector known"},
        Case{AffinityMethod::multigrid, true, 1, 0, "krylov", "could not be built"},
        Case{AffinityMethod::multigrid, true, 0, 2, "krylov", "did not converge in 2 iterations"},
        Case{AffinityMethod::filter, true, 0, 0, "krylov", "Chebyshev filter"},
        Case{AffinityMethod::filter, false, 0, 0, "krylov", "Chebyshev filter"}})
    for (int nb : {8, 64}) {
      const auto r = knn_embedding(comm, "roll" + std::to_string(nb), x, n, d, neighbors, nb,
                                   c.deflate, c.method, c.max_levels, c.lobpcg_iterations);
      const std::string what = std::string(c.solver) + " block size " + std::to_string(nb) +
                               ", deflated " + std::to_string(c.deflate) + ", note " + r.solver_note;
      if (comm.is_root()) {
        ASSERT_EQ(r.embedding.size(), want.size());
        EXPECT_LT(test::max_abs_diff(r.embedding, want), 1e-10) << what;
        EXPECT_NEAR(r.affinity_eigenvalues[0], 1, 1e-12);
        EXPECT_NEAR(r.affinity_eigenvalues[1], lambda[n - 2], 1e-12);
        EXPECT_NEAR(r.affinity_eigenvalues[2], lambda[n - 3], 1e-12);
        EXPECT_EQ(r.solver_note.find("eigenvector sqrt(degree) deflated") != std::string::npos,
                  c.deflate) << what;
        EXPECT_EQ(r.solver_used, c.solver) << what;
        EXPECT_NE(r.solver_note.find(c.note), std::string::npos) << what;
      }
      EXPECT_TRUE(r.graph && r.graph->components == 1);
    }
}

// scikit-learn 1.2.1 on the 40 points below, up to each column's sign:
//   i = np.arange(40); t = 1.5 * np.pi * (1 + 2 * ((i * 0.618034) % 1.0))
//   x = np.c_[t * np.cos(t), 3.0 * ((i * 0.414214) % 1.0), t * np.sin(t)]
//   SpectralEmbedding(n_components=2, affinity="nearest_neighbors", n_neighbors=6,
//                     random_state=0).fit_transform(x)
TEST(SparseAffinity, EmbeddingMatchesScikitLearn) {
  const Comm comm = Comm::world();
  const int n = 40, d = 3;
  const double sklearn[40][2] = {{-0.044685316945967377, -0.079757279447757207},
                                 {0.044710129896084937, -0.095234950946666633},
                                 {-0.036752335509324323, 0.076792126392202051},
                                 {-0.058406423339437595, 0.068022137634472818},
                                 {0.1354092826559409, 0.00078804728823363688},
                                 {-0.068643794188282398, -0.058845768043936084},
                                 {-0.027575148243300877, -0.092001868437923573},
                                 {0.029145359178436442, 0.091152537843832177},
                                 {-0.014350024118280361, 0.10725198761314919},
                                 {0.09081232836296832, -0.070198367584715968},
                                 {-0.058018654602129113, 0.0391354483873552},
                                 {-0.066922629866773511, -0.025955511237725683},
                                 {0.1195546063099162, 0.030486452891476775},
                                 {-0.059317868528098852, -0.075684461953902979},
                                 {0.021757696621869733, -0.10128457841004869},
                                 {-0.010569157966292375, 0.094750044381233411},
                                 {-0.045194865732821561, 0.088415917667404323},
                                 {0.1329639468279937, -0.021600785108158618},
                                 {-0.070038297124683971, -0.029567965174166062},
                                 {-0.049473567713444036, -0.071735255640775888},
                                 {0.053206576875341693, 0.080205936221437762},
                                 {0.0056734374895187007, 0.105391145285626},
                                 {0.066388276123697673, -0.087301389184587866},
                                 {-0.044932399267407476, 0.070226241368941955},
                                 {-0.065068686495771841, 0.037152420244364562},
                                 {0.13365758403743913, 0.012406558981517612},
                                 {-0.064755393505149264, -0.067477666159424798},
                                 {-0.012945219375035235, -0.096242896633721445},
                                 {0.0051938503761766409, 0.098218560732665161},
                                 {-0.027151487739490183, 0.10159053938857826},
                                 {0.12106915200443609, -0.039307957103086835},
                                 {-0.06442573586806255, 0.0085005788601942231},
                                 {-0.067464701369678859, -0.051042115775481067},
                                 {0.09624963991555914, 0.051500392687071302},
                                 {-0.064803652081757909, -0.073258165686976059},
                                 {0.030711800916657227, -0.098261271873086378},
                                 {-0.022471168105719613, 0.089502082665660829},
                                 {-0.055783109440016222, 0.071755737451307131},
                                 {0.13804625716451457, -0.003720129992476744},
                                 {-0.068226665362401337, -0.047126596611599257}};
  std::vector<double> x, want;
  for (int i = 0; i < n; ++i) {
    const double t = 1.5 * M_PI * (1 + 2 * std::fmod(i * 0.618034, 1.0));
    x.insert(x.end(), {t * std::cos(t), 3.0 * std::fmod(i * 0.414214, 1.0), t * std::sin(t)});
    want.insert(want.end(), {sklearn[i][0], sklearn[i][1]});
  }
  const auto r = knn_embedding(comm, "sklearn", x, n, d, 6, 4);
  if (comm.is_root()) {
    ASSERT_EQ(r.embedding.size(), want.size());
    EXPECT_LT(difference_up_to_sign(r.embedding, want, n), 1e-6);
  }
}

// Four points: at 3 ranks one rank holds no row of the graph (blocks of
// two), and every rank must still take LOBPCG's block width and steps
// together (it once sized the block from its own rows and the ranks
// diverged). The eigenvalues equal the dense serial ones on every rank count.
TEST(SparseAffinity, FourPointsWithARankWithoutRows) {
  const Comm comm = Comm::world();
  const int n = 4, d = 2, neighbors = 3;
  const std::vector<double> x = {0, 0, 1, 0.1, 2, 0.3, 3, 0.2};
  const test::Dense w = brute_force_affinity(x, n, d, neighbors - 1);
  test::Dense v;
  const auto lambda = test::serial_eigh(normalized(w), v);  // ascending
  const auto r = knn_embedding(comm, "four", x, n, d, neighbors, 1);
  if (comm.is_root()) {
    EXPECT_EQ(r.solver_used, "lobpcg") << r.solver_note;
    ASSERT_EQ(r.affinity_eigenvalues.size(), 3u);
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(r.affinity_eigenvalues[j], lambda[n - 1 - j], 1e-12);
  }
}
