// kembed isomap and kembed spectral end to end, against serial references
// computed here: Isomap with K = n - 1 is classical MDS of the points (and
// its reconstruction error scikit-learn's formula; its model places the
// training points where the fit did), Isomap unrolls a swiss
// roll, the spectral embedding is the Jacobi eigen-decomposition of the same
// normalized affinity scaled and signed as scikit-learn, two blobs split by
// the sign of the first coordinate, and bad input fails on every rank.
#include "cli/cli_support.hpp"

namespace {

// Swiss roll as scikit-learn's make_swiss_roll (no noise); `s` receives the
// arc length along the roll, the coordinate an unrolling recovers.
Matrix swiss_roll(std::size_t n, unsigned seed, std::vector<double>& s) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(0, 1);
  Matrix x = zeros(n, 3);
  s.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const double t = 1.5 * M_PI * (1 + 2 * u(gen));
    x(i, 0) = t * std::cos(t);
    x(i, 1) = 21 * u(gen);
    x(i, 2) = t * std::sin(t);
    s.push_back(0.5 * (t * std::sqrt(1 + t * t) + std::asinh(t)));
  }
  return x;
}

// Two Gaussian blobs in the plane, centres `gap` apart; label 0 then 1 alternately.
Matrix blobs(std::size_t n, double gap, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> g(0, 0.5);
  Matrix x = zeros(n, 2);
  for (std::size_t i = 0; i < n; ++i) {
    x(i, 0) = (i % 2) * gap + g(gen);
    x(i, 1) = g(gen);
  }
  return x;
}

double correlation(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = static_cast<double>(a.size());
  double ma = 0, mb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) ma += a[i] / n, mb += b[i] / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return sab / std::sqrt(saa * sbb);
}

Matrix read_embedding(const fs::path& dir, std::size_t n, int k) {
  const Csv csv = read_result_csv(dir / "embedding.csv");
  EXPECT_EQ(csv.header, numbered("c", k));
  EXPECT_EQ(csv.data.rows, n);
  return csv.data;
}

Json read_report(const fs::path& dir) { return Json::parse(read_file(dir / "run.json")); }

void expect_failure(const std::vector<std::string>& args, int np, const std::string& message) {
  const RunResult r = run_kembed(args, np);
  ASSERT_FALSE(r.timed_out()) << "hang:\n" << r.describe();
  EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
  EXPECT_TRUE(contains(r.err, "kembed: error:") && contains(r.err, message))
      << "expected '" << message << "'\n"
      << r.describe();
}

}  // namespace

TEST(Isomap, AllNeighboursIsClassicalMdsOfThePoints) {
  const std::size_t n = 40;
  const int k = 2;
  const Matrix x = skewed_cloud(n, 5);
  const fs::path dir = scratch_dir("isomap_mds"), input = dir / "x.csv", out = dir / "out";
  write_csv(input, x, "");
  RUN_OK(r,
         (std::vector<std::string>{"isomap", "--input", input.string(), "--neighbors", "39", "-k",
                                   "2", "-o", out.string()}),
         3);
  // Serial classical MDS: B = -1/2 J D^(2) J by Jacobi, Y = V sqrt(Lambda).
  Matrix d2 = zeros(n, n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t c = 0; c < 3; ++c) d2(i, j) += -0.5 * std::pow(x(i, c) - x(j, c), 2);
  const Matrix b = double_center(d2);
  std::vector<double> values;
  Matrix vectors;
  jacobi_eigen(b, values, vectors);
  Matrix want = zeros(n, k);
  for (std::size_t i = 0; i < n; ++i)
    for (int j = 0; j < k; ++j) want(i, j) = vectors(i, j) * std::sqrt(values[j]);
  want = with_sign_convention(want);
  const Matrix got = read_embedding(out, n, k);
  EXPECT_LT(max_abs_diff(got, want), 1e-9 * std::sqrt(values[0]));

  const Json report = read_report(out);
  EXPECT_EQ(report["graph"]["edges"], n * (n - 1) / 2);
  EXPECT_EQ(report["graph"]["connected_components"], 1);
  EXPECT_EQ(report["graph"]["min_degree"], n - 1);
  double frob2 = 0;
  for (double v : b.v) frob2 += v * v;
  const double error = std::sqrt(frob2 - values[0] * values[0] - values[1] * values[1]) / n;
  EXPECT_NEAR(report["reconstruction_error"].get<double>(), error, 1e-9 * error);

  // A training point is its own nearest neighbour (distance 0), so its
  // geodesic distances through its neighbours are its row of G, and
  // Gower's formula on a training row gives back its fitted coordinates.
  const fs::path again = dir / "again";
  RUN_OK(t,
         (std::vector<std::string>{"transform", "--model", (out / "model").string(), "--input",
                                   input.string(), "-o", again.string()}),
         2);
  EXPECT_LT(max_abs_diff(read_embedding(again, n, k), got), 1e-9 * std::sqrt(values[0]));
}

TEST(Isomap, UnrollsASwissRoll) {
  const std::size_t n = 400;
  std::vector<double> s;
  const Matrix x = swiss_roll(n, 3, s);
  const fs::path dir = scratch_dir("isomap_roll"), input = dir / "roll.csv", out = dir / "out";
  write_csv(input, x, "");
  // K = 5: at this density K = 10 joins neighbouring layers of the roll
  // (scikit-learn's Isomap too: |corr| 0.2 to 0.8), and the test would fail.
  RUN_OK(r,
         (std::vector<std::string>{"isomap", "--input", input.string(), "--neighbors", "5", "-k",
                                   "2", "-o", out.string()}),
         2);
  const Matrix y = read_embedding(out, n, 2);
  std::vector<double> first;
  for (std::size_t i = 0; i < n; ++i) first.push_back(y(i, 0));
  EXPECT_GT(std::abs(correlation(first, s)), 0.99);
  EXPECT_EQ(read_report(out)["graph"]["connected_components"], 1);
}

// --connect joins the two blobs by the shortest edge between them (checked
// against a brute-force search here), the geodesics then run through it and
// the first coordinate splits the blobs.
TEST(Isomap, ConnectJoinsTwoBlobsByTheirShortestEdge) {
  const std::size_t n = 40;
  const Matrix x = blobs(n, 30.0, 6);
  const fs::path dir = scratch_dir("isomap_connect"), input = dir / "x.csv", out = dir / "out";
  write_csv(input, x, "");
  RUN_OK(r,
         (std::vector<std::string>{"isomap", "--input", input.string(), "--neighbors", "5",
                                   "--connect", "-k", "2", "-o", out.string()}),
         2);
  double shortest = INFINITY;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (i % 2 != j % 2)
        shortest = std::min(shortest, std::hypot(x(i, 0) - x(j, 0), x(i, 1) - x(j, 1)));

  const Json report = read_report(out);
  const std::int64_t components = report["graph"]["connected_components"];
  EXPECT_EQ(components, 2);
  const Json& joined = report["connect"];
  EXPECT_EQ(joined["edges_added"], components - 1);
  EXPECT_EQ(joined["connected_components_after"], 1);
  ASSERT_EQ(joined["lengths"].size(), 1u);
  EXPECT_NEAR(joined["lengths"][0].get<double>(), shortest, 1e-12 * shortest);
  const std::size_t a = joined["edges"][0][0].get<std::size_t>() - 1,
                    b = joined["edges"][0][1].get<std::size_t>() - 1;
  EXPECT_NE(a % 2, b % 2);
  EXPECT_NEAR(std::hypot(x(a, 0) - x(b, 0), x(a, 1) - x(b, 1)), shortest, 1e-12 * shortest);

  const Matrix y = read_embedding(out, n, 2);
  const bool first_positive = y(0, 0) > 0;
  for (std::size_t i = 0; i < n; ++i)
    EXPECT_EQ(y(i, 0) > 0, (i % 2 == 0) == first_positive) << "point " << i;
}

// scikit-learn's SpectralEmbedding, serially: W = rbf without its diagonal,
// M = D^-1/2 W D^-1/2, top k + 1 eigenvectors, the first dropped, v / sqrt(d),
// each column's largest |entry| positive.
TEST(Spectral, RbfMatchesSerialNormalizedAffinityOnOneAndThreeRanks) {
  const std::size_t n = 50;
  const int k = 2;
  const double gamma = 0.1;
  const Matrix x = skewed_cloud(n, 9);
  const fs::path dir = scratch_dir("spectral_rbf"), input = dir / "x.csv";
  write_csv(input, x, "");
  Matrix m = rbf_kernel(x, gamma);
  std::vector<double> degree(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    m(i, i) = 0;
    for (std::size_t j = 0; j < n; ++j) degree[i] += m(i, j);
  }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) m(i, j) /= std::sqrt(degree[i] * degree[j]);
  std::vector<double> mu;
  Matrix v;
  jacobi_eigen(m, mu, v);
  Matrix want = zeros(n, k);
  for (std::size_t i = 0; i < n; ++i)
    for (int j = 0; j < k; ++j) want(i, j) = v(i, j + 1) / std::sqrt(degree[i]);
  want = with_sign_convention(want);
  double scale = 0;
  for (double e : want.v) scale = std::max(scale, std::abs(e));

  for (const auto& [np, solver] : {std::pair<int, std::string>{1, "evd"}, {3, "krylov"}}) {
    const fs::path out = dir / ("out" + std::to_string(np));
    RUN_OK(r,
           (std::vector<std::string>{"spectral", "--input", input.string(), "--affinity", "rbf",
                                     "--gamma", "0.1", "-k", "2", "--solver", solver, "-o",
                                     out.string()}),
           np);
    EXPECT_LT(max_abs_diff(read_embedding(out, n, k), want), 1e-8 * scale) << np << " ranks";
    const Csv eig = read_result_csv(out / "eigenvalues.csv");
    EXPECT_EQ(eig.header,
              (std::vector<std::string>{"laplacian_eigenvalue", "affinity_eigenvalue"}));
    ASSERT_EQ(eig.data.rows, std::size_t(k));
    for (int j = 0; j < k; ++j) {
      EXPECT_NEAR(eig.data(j, 1), mu[j + 1], 1e-10);
      EXPECT_NEAR(eig.data(j, 0), 1 - mu[j + 1], 1e-10);
    }
  }
}

// scikit-learn's nearest_neighbors affinity: C the K-nearest connectivity
// with each point counted among its own K (so K - 1 others, ties to the
// lower index), W = 1/2 (C + C^T) without its diagonal.
TEST(Spectral, KnnAffinityMatchesSerialBruteForce) {
  const std::size_t n = 45, neighbours = 6;
  const int k = 2;
  const Matrix x = noisy_circles(n, 4);
  const fs::path dir = scratch_dir("spectral_knn"), input = dir / "x.csv", out = dir / "out";
  write_csv(input, x, "");
  Matrix w = zeros(n, n);
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::pair<double, std::size_t>> all;
    for (std::size_t j = 0; j < n; ++j)
      if (j != i) all.emplace_back(std::hypot(x(i, 0) - x(j, 0), x(i, 1) - x(j, 1)), j);
    std::sort(all.begin(), all.end());
    for (std::size_t t = 0; t + 1 < neighbours; ++t) {
      w(i, all[t].second) += 0.5;
      w(all[t].second, i) += 0.5;
    }
  }
  std::vector<double> degree(n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) degree[i] += w(i, j);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) w(i, j) /= std::sqrt(degree[i] * degree[j]);
  std::vector<double> mu;
  Matrix v;
  jacobi_eigen(w, mu, v);
  ASSERT_LT(mu[1], 1 - 1e-6) << "the test graph must be connected";
  Matrix want = zeros(n, k);
  for (std::size_t i = 0; i < n; ++i)
    for (int j = 0; j < k; ++j) want(i, j) = v(i, j + 1) / std::sqrt(degree[i]);
  want = with_sign_convention(want);
  double scale = 0;
  for (double e : want.v) scale = std::max(scale, std::abs(e));
  RUN_OK(r,
         (std::vector<std::string>{"spectral", "--input", input.string(), "--affinity", "knn",
                                   "--neighbors", std::to_string(neighbours), "-k", "2", "-o",
                                   out.string()}),
         2);
  EXPECT_LT(max_abs_diff(read_embedding(out, n, k), want), 1e-8 * scale);
}

TEST(Spectral, TwoBlobsSplitBySignOfFirstCoordinate) {
  const std::size_t n = 60;
  const Matrix x = blobs(n, 4.0, 2);
  const fs::path dir = scratch_dir("spectral_blobs"), input = dir / "x.csv", out = dir / "out";
  write_csv(input, x, "");
  RUN_OK(r,
         (std::vector<std::string>{"spectral", "--input", input.string(), "--gamma", "0.5", "-k",
                                   "2", "-o", out.string()}),
         4);
  const Matrix y = read_embedding(out, n, 2);
  const bool first_positive = y(0, 0) > 0;
  for (std::size_t i = 0; i < n; ++i)
    EXPECT_EQ(y(i, 0) > 0, (i % 2 == 0) == first_positive) << "point " << i;
}

// The spectral model round trip: the fit writes model/; kembed transform
// gives the training points back their embedding (their affinity rows are
// the fit's: rbf, and knn on the same graph) and places new points as the
// Nystrom formula on the serial Jacobi eigenpairs of M does; a new point
// far from every training point (all rbf weights underflow) fails on every
// rank naming its row.
TEST(Spectral, ModelPlacesTrainingAndNewPoints) {
  const std::size_t n = 50, m = 6;
  const int k = 2;
  const double gamma = 0.1;
  const Matrix x = skewed_cloud(n, 9), fresh = skewed_cloud(m, 10);
  // The training points, then the new ones: one transform places both.
  Matrix both = x;
  both.rows += m;
  both.v.insert(both.v.end(), fresh.v.begin(), fresh.v.end());
  const fs::path dir = scratch_dir("spectral_model"), input = dir / "x.csv",
                 both_input = dir / "both.csv", out = dir / "out";
  write_csv(input, x, "");
  write_csv(both_input, both, "");
  RUN_OK(r,
         (std::vector<std::string>{"spectral", "--input", input.string(), "--gamma", "0.1", "-k",
                                   "2", "-o", out.string()}),
         2);
  const Matrix y = read_embedding(out, n, k);
  double scale = 0;
  for (double e : y.v) scale = std::max(scale, std::abs(e));
  RUN_OK(t,
         (std::vector<std::string>{"transform", "--model", (out / "model").string(), "--input",
                                   both_input.string(), "-o", (dir / "again").string()}),
         2);
  const Matrix placed = read_embedding(dir / "again", n + m, k);

  // Serial reference: W without its diagonal, M = D^-1/2 W D^-1/2 (Jacobi),
  // v signed as the embedding, y(x) = (1/mu) sum_i w_i v_i / sqrt(d(x) d_i) / sqrt(d(x)).
  Matrix w = rbf_kernel(x, gamma);
  std::vector<double> degree(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    w(i, i) = 0;
    for (std::size_t j = 0; j < n; ++j) degree[i] += w(i, j);
  }
  Matrix a = w;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) a(i, j) /= std::sqrt(degree[i] * degree[j]);
  std::vector<double> mu;
  Matrix v;
  jacobi_eigen(a, mu, v);
  Matrix want = zeros(n + m, k);
  for (std::size_t i = 0; i < n; ++i)
    for (int c = 0; c < k; ++c) want(i, c) = y(i, c);  // training points: their embedding
  for (int c = 0; c < k; ++c) {
    double dot = 0;  // the embedding's sign of the column
    for (std::size_t i = 0; i < n; ++i) dot += y(i, c) * v(i, c + 1);
    for (std::size_t p = 0; p < m; ++p) {
      double dx = 0, sum = 0;
      for (std::size_t i = 0; i < n; ++i) {
        double s2 = 0;
        for (std::size_t t = 0; t < x.cols; ++t)
          s2 += (fresh(p, t) - x(i, t)) * (fresh(p, t) - x(i, t));
        const double wi = std::exp(-gamma * s2);
        dx += wi;
        sum += wi * (dot < 0 ? -1 : 1) * v(i, c + 1) / std::sqrt(degree[i]);
      }
      want(n + p, c) = sum / std::sqrt(dx) / mu[c + 1] / std::sqrt(dx);
    }
  }
  EXPECT_LT(max_abs_diff(placed, want), 1e-10 * scale);

  const fs::path knn = dir / "knn";
  RUN_OK(f,
         (std::vector<std::string>{"spectral", "--input", input.string(), "--affinity", "knn",
                                   "--neighbors", "8", "-k", "2", "--tol", "1e-14", "-o",
                                   knn.string()}),
         2);
  RUN_OK(g,
         (std::vector<std::string>{"transform", "--model", (knn / "model").string(), "--input",
                                   input.string(), "-o", (dir / "knn_again").string()}),
         1);
  const Matrix yk = read_embedding(knn, n, k);
  double knn_scale = 0;
  for (double e : yk.v) knn_scale = std::max(knn_scale, std::abs(e));
  EXPECT_LT(max_abs_diff(read_embedding(dir / "knn_again", n, k), yk), 1e-10 * knn_scale);

  Matrix far = fresh;
  far(2, 0) = 1e4;
  write_csv(dir / "far.csv", far, "");
  expect_failure({"transform", "--model", (out / "model").string(), "--input",
                  (dir / "far.csv").string(), "-o", (dir / "far").string()},
                 3, "far.csv: row 3 has no affinity to any training point");
}

// Three points with k = 2: M has a zero diagonal, so its eigenvalues 1,
// mu_2, mu_3 sum to 0 and a kept mu is negative. The fit still writes the
// embedding, but no model (the extension divides by mu); run.json and the
// summary say why.
TEST(Spectral, NoModelWhenAKeptEigenvalueIsNearZero) {
  const fs::path dir = scratch_dir("spectral_no_model"), input = dir / "x.csv", out = dir / "out";
  write_csv(input, skewed_cloud(3, 2), "");
  RUN_OK(r,
         (std::vector<std::string>{"spectral", "--input", input.string(), "--gamma", "0.1", "-k",
                                   "2", "-o", out.string()}),
         2);
  read_embedding(out, 3, 2);
  EXPECT_FALSE(fs::exists(out / "model"));
  const std::string why = read_report(out)["model_refused"].get<std::string>();
  EXPECT_NE(why.find("x.csv: eigenvalue -"), std::string::npos) << why;
  EXPECT_NE(why.find("is below 1e-08: the out-of-sample extension divides by it"),
            std::string::npos)
      << why;
  EXPECT_NE(r.out.find("no model/ written"), std::string::npos) << r.describe();
}

// kembed plan isomap is the MDS plan of the same shape with the graph in it:
// its n x n lines are MDS's, the points' panels are not held (the matrix is
// filled from the graph), and the graph held on every rank is 2 n K entries
// of 17 bytes with n + 1 offsets; spectral (rbf) is the kpca plan with the
// trivial eigenvector as one more component and three degree vectors of n.
TEST(Manifold, PlanIsTheMdsPlanWithTheGraph) {
  const auto plan = [](const std::string& method, std::vector<std::string> extra) {
    const RunResult r = run_serial(concat({"plan", method, "--rows", "20000", "--cols", "3",
                                           "--ranks", "4", "--max-memory-per-rank", "10G"},
                                          extra));
    EXPECT_EQ(r.status, 0) << r.err;
    return r.out;
  };
  const auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  };
  const auto has = [](const std::vector<std::string>& all, const std::string& line) {
    return std::find(all.begin(), all.end(), line) != all.end();
  };
  const auto isomap = lines(plan("isomap", {"--neighbors", "10", "-k", "2"}));
  const auto mds = lines(plan("mds", {"-k", "2", "--storage", "full"}));
  ASSERT_FALSE(isomap.empty());
  EXPECT_TRUE(contains(isomap[0], "kembed plan isomap: 20000 x 20000 matrix")) << isomap[0];
  for (const auto& line : mds) {
    if (contains(line, "n x n") || contains(line, "krylov basis") ||
        contains(line, "block product") || contains(line, "results gathered")) {
      EXPECT_TRUE(has(isomap, line)) << line;
    }
  }
  // 2 x 20000 x 10 x 17 + 8 x 20001 = 6,960,008 bytes.
  EXPECT_TRUE(has(isomap,
                  "  neighbourhood graph, whole on every rank (200000 listed neighbours, both "
                  "directions, 17 bytes each): 7.0 MB"));
  for (const auto& line : isomap) {
    EXPECT_FALSE(contains(line, "data panels")) << line;
    EXPECT_FALSE(contains(line, "plus the neighbourhood graph")) << line;
  }
  EXPECT_TRUE(contains(isomap.back(), "available per rank: 10.0 GB (fits)")) << isomap.back();

  const auto spectral = lines(plan("spectral", {"-k", "2"}));
  const auto kpca = lines(plan("kpca", {"-k", "3", "--storage", "full"}));
  for (const auto& line : kpca) {
    if (contains(line, "n x n") || contains(line, "data panels") ||
        contains(line, "krylov basis") || contains(line, "block product") ||
        contains(line, "results gathered")) {
      EXPECT_TRUE(has(spectral, line)) << line;
    }
  }
  // 3 x 20000 doubles.
  EXPECT_TRUE(has(spectral, "  degree vectors (n, every rank): 480.0 kB"));

  // --affinity knn plans its sparse graph: no n x n matrix or eigenvector
  // matrix, the rows of M, the graph's multigrid and LOBPCG's blocks
  // instead (no Krylov basis: LOBPCG solves), and far less memory.
  const std::string knn = plan("spectral", {"-k", "2", "--affinity", "knn", "--neighbors", "10"});
  EXPECT_FALSE(contains(knn, "n x n matrix (local block)")) << knn;
  EXPECT_FALSE(contains(knn, "eigenvectors (n x n)")) << knn;
  EXPECT_TRUE(contains(knn, "sparse rows of M (K = 10)")) << knn;
  EXPECT_TRUE(contains(knn, "multigrid hierarchy of the graph")) << knn;
  EXPECT_TRUE(contains(knn, "lobpcg blocks")) << knn;
  EXPECT_FALSE(contains(knn, "krylov basis")) << knn;
  EXPECT_FALSE(contains(knn, "neighbourhood graph")) << knn;
}

namespace {

// The number that follows `label` in `text` (a plan's "per rank (N bytes)").
double number_after(const std::string& text, const std::string& label) {
  const std::size_t at = text.find(label);
  EXPECT_NE(at, std::string::npos) << "no '" << label << "' in\n" << text;
  return at == std::string::npos ? 0.0 : std::stod(text.substr(at + label.size()));
}

std::string bytes_text(double bytes) { return std::to_string(static_cast<std::int64_t>(bytes)); }

// A run refused by the memory guard: no rank succeeds, the error names the
// memory it needs first, and nothing is written.
void expect_manifold_refused(const std::vector<std::string>& fit, double limit,
                             const fs::path& out) {
  const RunResult r =
      run_kembed(concat(fit, {"--max-memory-per-rank", bytes_text(limit), "-o", out.string()}), 2);
  ASSERT_FALSE(r.timed_out()) << r.describe();
  EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
  EXPECT_TRUE(contains(r.err, "kembed: error: not enough memory: this run needs about"))
      << r.describe();
  EXPECT_FALSE(fs::exists(out)) << r.describe();
}

}  // namespace

// The plan's total for the busiest rank is the number the fit's guard
// checks (the graph, the geodesic rows and the matrix all in it): one byte
// under it the fit is refused before any work, one byte over it the fit
// runs and run.json records that estimate. `kembed plan` for 2 ranks, the
// fits on 2 ranks.
TEST(Manifold, PlanIsTheGuardOfTheFit) {
  const fs::path dir = scratch_dir("manifold_plan_guard");
  struct Case {
    std::vector<std::string> fit, plan;
  };
  const std::vector<std::string> roll = {"--generate", "swissroll", "--rows", "500"};
  const std::vector<std::string> cloud = {"--generate", "gaussian", "--rows", "500", "--cols", "3"};
  const std::vector<std::string> shape = {"--rows", "500", "--cols", "3", "--ranks", "2",
                                          "--max-memory-per-rank", "10G"};
  const std::vector<Case> cases = {
      {concat(concat({"isomap"}, roll), {"--neighbors", "8"}),
       concat(concat({"plan", "isomap"}, shape), {"--neighbors", "8"})},
      {concat({"spectral"}, cloud), concat({"plan", "spectral"}, shape)},
      {concat(concat({"spectral"}, cloud), {"--affinity", "knn", "--neighbors", "10"}),
       concat(concat({"plan", "spectral"}, shape), {"--affinity", "knn", "--neighbors", "10"})},
  };
  for (const Case& c : cases) {
    const RunResult plan = run_serial(c.plan);
    ASSERT_EQ(plan.status, 0) << plan.describe();
    const double total = number_after(plan.out, "per rank (");
    ASSERT_GT(total, 25e6) << plan.out;
    // --dry-run on the real ranks prints the same total (isomap's, which
    // before printed its graph apart; spectral's shape is one function).
    if (c.fit[0] == "isomap") {
      RUN_OK(dry, concat(c.fit, {"--dry-run", "-o", (dir / "dry").string()}), 2);
      EXPECT_EQ(number_after(dry.out, "per rank ("), total) << dry.out;
    }
    expect_manifold_refused(c.fit, total - 1, dir / "refused");
    const fs::path out = dir / "fits";
    RUN_OK(fits,
           concat(c.fit, {"--max-memory-per-rank", bytes_text(total + 1), "-o", out.string()}), 2);
    EXPECT_NEAR(read_report(out)["memory_estimate_bytes_per_rank"].get<double>(), total, 1.0)
        << c.fit[0];
    fs::remove_all(out);
  }
}

// Landmark Isomap: the plan counts the graph with its most edges (n K), so
// the fit's own estimate (the real edges) is at most the plan's; the run
// checks the plan's number and stores the geodesics when the plan would.
TEST(Manifold, LandmarkIsomapPlanIsTheGuardOfTheFit) {
  const fs::path dir = scratch_dir("landmark_plan_guard");
  const std::vector<std::string> fit = {"isomap",   "--generate", "swissroll",   "--rows", "500",
                                        "--neighbors", "8",       "--approx",    "landmark",
                                        "--landmarks", "40"};
  const RunResult plan =
      run_serial({"plan", "isomap", "--rows", "500", "--cols", "3", "--neighbors", "8",
                  "--approx", "landmark", "--landmarks", "40", "--ranks", "2",
                  "--max-memory-per-rank", "10G"});
  ASSERT_EQ(plan.status, 0) << plan.describe();
  const double stored = number_after(plan.out, "with the geodesics stored (");
  const double recomputed = number_after(plan.out, "with them recomputed (");
  ASSERT_GT(stored, recomputed) << plan.out;
  expect_manifold_refused(fit, recomputed - 1, dir / "refused");
  for (const double limit : {recomputed + 1, stored + 1}) {
    const fs::path out = dir / "fits";
    RUN_OK(fits, concat(fit, {"--max-memory-per-rank", bytes_text(limit), "-o", out.string()}), 2);
    const Json report = read_report(out);
    EXPECT_EQ(report["approximation"]["geodesics"], limit > stored ? "stored" : "recomputed");
    EXPECT_LE(report["memory_estimate_bytes_per_rank"].get<double>(), limit);
    fs::remove_all(out);
  }
}

// Where the graph weighs as much as the matrix (n = 1000, K = 80: 2.7 MB of
// graph held on every rank beside the 4.1 MB geodesic block that krylov
// keeps, 4.5 MB more while the graph is built), the estimate the fit
// records is within 25% of its measured peak.
TEST(Manifold, IsomapEstimateIsWithin25PercentOfTheMeasuredPeak) {
  const fs::path out = scratch_dir("isomap_peak") / "out";
  RUN_OK(r,
         (std::vector<std::string>{"isomap", "--generate", "swissroll", "--rows", "1000",
                                   "--neighbors", "80", "--solver", "krylov", "-o", out.string()}),
         2);
  const Json report = read_report(out);
  const double estimate = report["memory_estimate_bytes_per_rank"].get<double>();
  const double peak = report["peak_memory_bytes_per_rank_max"].get<double>();
  EXPECT_NEAR(estimate / peak, 1.0, 0.25) << "estimate " << estimate << ", peak " << peak;
}

// Landmark Isomap where the graph, its build and the searches' copy weigh
// more than the process (n = 20,000, K = 10, M = 50 on 2 ranks: 19 MB of
// graph build beside the 25 MB baseline; stored, 16 MB of geodesic rows and
// rounds beside the 7 MB graph and its 3 MB copy): the estimate each
// storage records is within 25% of its measured peak. The plan's
// recomputed bytes (n K edges, at least the real ones) as the limit make
// the run recompute.
TEST(Manifold, LandmarkIsomapEstimateIsWithin25PercentOfTheMeasuredPeak) {
  const fs::path dir = scratch_dir("landmark_isomap_peak");
  const RunResult plan =
      run_serial({"plan", "isomap", "--rows", "20000", "--cols", "3", "--neighbors", "10",
                  "--approx", "landmark", "--landmarks", "50", "--ranks", "2",
                  "--max-memory-per-rank", "10G"});
  ASSERT_EQ(plan.status, 0) << plan.describe();
  const double recomputed = number_after(plan.out, "with them recomputed (");
  for (const std::string storage : {"stored", "recomputed"}) {
    const fs::path out = dir / storage;
    const std::string limit = storage == "stored" ? "10G" : bytes_text(recomputed + 1);
    RUN_OK(r,
           (std::vector<std::string>{"isomap", "--generate", "swissroll", "--rows", "20000",
                                     "--neighbors", "10", "--approx", "landmark", "--landmarks",
                                     "50", "--max-memory-per-rank", limit, "-o", out.string()}),
           2);
    const Json report = read_report(out);
    ASSERT_EQ(report["approximation"]["geodesics"], storage);
    const double estimate = report["memory_estimate_bytes_per_rank"].get<double>();
    const double peak = report["peak_memory_bytes_per_rank_max"].get<double>();
    EXPECT_NEAR(estimate / peak, 1.0, 0.25)
        << storage << ": estimate " << estimate << ", peak " << peak;
    fs::remove_all(out);
  }
}

TEST(Manifold, BadInputFailsOnEveryRank) {
  const fs::path dir = scratch_dir("manifold_bad"), input = dir / "x.csv", far = dir / "far.csv";
  write_csv(input, skewed_cloud(40, 1), "");
  write_csv(far, blobs(40, 100.0, 4), "");
  const auto isomap = [&](const fs::path& in, std::vector<std::string> extra) {
    return concat({"isomap", "--input", in.string(), "-o", (dir / "out").string()}, extra);
  };
  for (int np : {1, 4})
    expect_failure(isomap(far, {"--neighbors", "6"}), np,
                   "has 2 connected components (sizes 20, 20); Isomap needs a connected graph: "
                   "increase --neighbors, or join the components by their shortest edges with "
                   "--connect");
  expect_failure(isomap(input, {"--neighbors", "40"}), 4,
                 "--neighbors 40 must be below the number of points (40)");
  expect_failure(isomap(input, {"--neighbors", "0"}), 1, "--neighbors must be at least 1");
  expect_failure(isomap(input, {"--radius", "0"}), 4, "--radius must be positive and finite");
  for (int np : {1, 3})
    expect_failure({"spectral", "--input", far.string(), "--affinity", "knn", "--neighbors", "7",
                    "-o", (dir / "out").string()},
                   np, "has 2 connected components (sizes 20, 20)");
  expect_failure({"spectral", "--input", input.string(), "--affinity", "knn", "--solver", "evd",
                  "-o", (dir / "out").string()},
                 2, "--solver evd needs a dense matrix, and --affinity knn keeps the graph sparse");
}

// Landmark Isomap (--approx landmark): 40 of 400 points as landmarks still
// unroll the roll (the same check as exact Isomap's above); run.json records
// the landmarks; the model places the training points where the fit did (a
// training point is its own nearest training point); options that do not
// fit are refused on every rank.
TEST(Isomap, LandmarkUnrollsASwissRollAndItsModelPlacesTheTrainingPoints) {
  const std::size_t n = 400;
  std::vector<double> s;
  const Matrix x = swiss_roll(n, 3, s);
  const fs::path dir = scratch_dir("isomap_landmark"), input = dir / "roll.csv",
                 out = dir / "out";
  write_csv(input, x, "");
  RUN_OK(r,
         (std::vector<std::string>{"isomap", "--input", input.string(), "--neighbors", "5", "-k",
                                   "2", "--approx", "landmark", "--landmarks", "40", "--seed", "2",
                                   "-o", out.string()}),
         3);
  const Matrix y = read_embedding(out, n, 2);
  std::vector<double> first;
  double scale = 0;
  for (std::size_t i = 0; i < n; ++i) {
    first.push_back(y(i, 0));
    scale = std::max(scale, std::abs(y(i, 0)));
  }
  EXPECT_GT(std::abs(correlation(first, s)), 0.99);
  const Json report = read_report(out);
  EXPECT_EQ(report["approximation"]["method"], "landmark");
  EXPECT_EQ(report["approximation"]["landmarks"], 40);
  EXPECT_EQ(report["approximation"]["seed"], 2);
  EXPECT_EQ(report["approximation"]["landmark_rows"].size(), 40u);
  EXPECT_EQ(report["approximation"]["geodesics"], "stored");  // 40 x 400 fits
  EXPECT_EQ(report["graph"]["connected_components"], 1);
  const Csv eig = read_result_csv(out / "eigenvalues.csv");
  EXPECT_EQ(eig.header,
            (std::vector<std::string>{"eigenvalue", "landmark_eigenvalue", "explained_variance_ratio"}));
  // eigenvalue = landmark_eigenvalue * n / M
  EXPECT_NEAR(eig.data(0, 0), eig.data(0, 1) * 10, 1e-9 * eig.data(0, 0));

  const fs::path again = dir / "again";
  RUN_OK(t,
         (std::vector<std::string>{"transform", "--model", (out / "model").string(), "--input",
                                   input.string(), "-o", again.string()}),
         2);
  EXPECT_LT(max_abs_diff(read_embedding(again, n, 2), y), 1e-9 * scale);

  const auto landmark = [&](std::vector<std::string> extra) {
    return concat({"isomap", "--input", input.string(), "--neighbors", "5", "-o",
                   (dir / "bad").string()},
                  extra);
  };
  // Too few landmarks and the exact solver's options are refused by code
  // the MPI tests and mds --approx landmark's CLI tests cover.
  expect_failure(landmark({"--approx", "landmark", "--landmarks", "401"}), 2,
                 "--landmarks 401 exceeds the number of points (400)");
  expect_failure(landmark({"--approx", "landmark"}), 1,
                 "--approx landmark needs --landmarks M");
  expect_failure(landmark({"--landmarks", "40"}), 1, "--landmarks applies to --approx landmark");
  expect_failure(landmark({"--approx", "nystrom", "--landmarks", "40"}), 1,
                 "unknown --approx 'nystrom' for isomap (expected landmark)");
}

// kembed plan isomap --approx landmark, the 10^6 points (n K = 10^7
// lists and edges, 2 ranks of 500,000 rows): baseline 25 MB; graph held
// 2 x 17 n K + 8 (n + 1) = 348.000008 MB, its build beside it
// 16 (n K / 2 + n K + 2 n K) + 32 n = 592 MB: 940.000008 MB; the searches'
// copy 8 (n + 1) + 12 x 2 n K + 24 n = 272.000008 MB; landmarks
// 8 (3 M^2 + k M + k n / P + 2 n k) = 64.016 MB; recomputed: 348.000008 +
// 272.000008 + 8 n k + 64.016 = 700.032016 MB, below the build's, so
// 965.000008 MB; stored: the rows x M and three rounds of 8 landmarks x n,
// 8 (n M / P + 3 x 8 n) = 4192 MB beside the graph, its copy and the
// landmarks: 25 + 4876.016016 = 4901.016016 MB.
TEST(Manifold, LandmarkIsomapPlanStoresOrRecomputesTheGeodesics) {
  const std::vector<std::string> plan{"plan",        "isomap",    "--rows",     "1000000",
                                      "--cols",      "3",         "--neighbors", "10",
                                      "--approx",    "landmark",  "--landmarks", "1000",
                                      "--ranks",     "2",         "--max-memory-per-rank"};
  RUN_OK(fits, concat(plan, {"2GB"}), 1);
  EXPECT_TRUE(contains(fits.out, "4.9 GB with the geodesics stored (4901016016 bytes"))
      << fits.out;
  EXPECT_TRUE(contains(fits.out, "965.0 MB with them recomputed (965000008 bytes")) << fits.out;
  EXPECT_TRUE(contains(fits.out, "available per rank: 2.0 GB (fits)")) << fits.out;
  RUN_OK(tight, concat(plan, {"100MB"}), 1);
  EXPECT_TRUE(contains(tight.out, "not enough memory: this run needs about 965.0 MB per rank"))
      << tight.out;
}
