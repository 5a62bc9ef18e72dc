// End-to-end tests of `kembed mds` and of `kembed transform` with MDS models:
// both inputs (a distance matrix, points) give the same embedding and the
// points back up to rotation; a non-Euclidean graph metric is reported
// honestly; every invalid input fails on every rank with the offending entry
// and leaves no output; Gower's formula places training points on their
// embedding.
#include "cli/cli_support.hpp"
#include "eurodist.hpp"

namespace {

/// Pairwise Euclidean distances of the rows of `x`, pair by pair.
Matrix euclidean_distances(const Matrix& a, const Matrix& b) {
  Matrix d = zeros(a.rows, b.rows);
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < b.rows; ++j) {
      double s = 0;
      for (std::size_t c = 0; c < a.cols; ++c) s += (a(i, c) - b(j, c)) * (a(i, c) - b(j, c));
      d(i, j) = std::sqrt(s);
    }
  return d;
}

void write_npy(const fs::path& path, const Matrix& x) {
  write_file(path, npy_header(x.rows, x.cols) + raw_doubles(x));
}

/// B = -1/2 J D^(2) J.
Matrix gower_b(const Matrix& d) {
  Matrix b = d;
  for (double& v : b.v) v = -0.5 * v * v;
  return double_center(b);
}

/// Shortest-path distances of the cycle graph with n vertices.
Matrix cycle_metric(std::size_t n) {
  Matrix d = zeros(n, n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t gap = i > j ? i - j : j - i;
      d(i, j) = static_cast<double>(std::min(gap, n - gap));
    }
  return d;
}

Matrix centered(Matrix x) {
  for (std::size_t c = 0; c < x.cols; ++c) {
    double mean = 0;
    for (std::size_t i = 0; i < x.rows; ++i) mean += x(i, c) / static_cast<double>(x.rows);
    for (std::size_t i = 0; i < x.rows; ++i) x(i, c) -= mean;
  }
  return x;
}

/// max |(A A^T - B B^T)_ij| (rotation/reflection-invariant comparison).
double gram_difference(const Matrix& a, const Matrix& b) {
  if (a.rows != b.rows) return INFINITY;
  double worst = 0;
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < a.rows; ++j) {
      double ga = 0, gb = 0;
      for (std::size_t c = 0; c < a.cols; ++c) ga += a(i, c) * a(j, c);
      for (std::size_t c = 0; c < b.cols; ++c) gb += b(i, c) * b(j, c);
      worst = std::max(worst, std::abs(ga - gb));
    }
  return worst;
}

Json read_json(const fs::path& path) {
  try {
    return Json::parse(read_file(path));
  } catch (const std::exception& e) {
    ADD_FAILURE() << path << " does not parse: " << e.what();
    return Json::object();
  }
}

const std::vector<std::string> kEvdOutputs = {"eigenvalues.csv", "embedding.csv", "model",
                                              "run.json", "spectrum.csv"};

Matrix mds_transform(const fs::path& model, const fs::path& input, const fs::path& out, int np) {
  const RunResult r = run_kembed({"transform", "--model", model.string(), "--input", input.string(),
                                  "--output-dir", out.string(), "--block-size", "7"},
                                 np);
  EXPECT_TRUE(r.all_ranks_succeeded()) << r.describe();
  return read_result_csv(out / "embedding.csv").data;
}

}  // namespace

TEST(MdsCli, BothInputsGiveTheSameEmbeddingAndThePointsBack) {
  const fs::path dir = scratch_dir("mds_inputs");
  const Matrix x = skewed_cloud(60, 2);
  const Matrix d = euclidean_distances(x, x);
  write_csv(dir / "x.csv", x, "a,b,c");
  write_npy(dir / "d.npy", d);
  write_csv(dir / "d.csv", d, "");
  RUN_OK(a,
         (std::vector<std::string>{"mds", "--distances", (dir / "d.npy").string(), "--components",
                                   "3", "--block-size", "8", "--grid", "2x2", "--output-dir",
                                   (dir / "from_npy").string()}),
         4);
  RUN_OK(b,
         (std::vector<std::string>{"mds", "--input", (dir / "x.csv").string(), "--metric",
                                   "euclidean", "--components", "3", "--block-size", "5",
                                   "--output-dir", (dir / "from_points").string()}),
         2);
  RUN_OK(c,
         (std::vector<std::string>{"mds", "--distances", (dir / "d.csv").string(), "-k", "3",
                                   "--output-dir", (dir / "from_text").string()}),
         1);
  EXPECT_TRUE(contains(a.out, "kembed mds: n = 60, k = 3, 4 ranks")) << a.out;

  const Matrix xc = centered(x);
  Matrix first;
  for (const char* name : {"from_npy", "from_points", "from_text"}) {
    const fs::path out = dir / name;
    EXPECT_EQ(sorted_names(out), kEvdOutputs) << name;
    EXPECT_TRUE(staging_leftovers(dir).empty());
    const Csv emb = read_result_csv(out / "embedding.csv");
    EXPECT_EQ(emb.header, numbered("c", 3));
    ASSERT_EQ(emb.data.rows, 60u) << name;
    if (first.rows == 0) first = emb.data;
    EXPECT_LT(max_abs_diff(emb.data, first), 1e-8) << name;
    EXPECT_LT(gram_difference(emb.data, xc), 1e-9 * 100) << name << ": Y Y^T != Xc Xc^T";

    const Csv eig = read_result_csv(out / "eigenvalues.csv");
    EXPECT_EQ(eig.header, (std::vector<std::string>{"eigenvalue", "explained_variance_ratio"}));
    const Csv spectrum = read_result_csv(out / "spectrum.csv");
    EXPECT_EQ(spectrum.header, std::vector<std::string>{"eigenvalue"});
    ASSERT_EQ(spectrum.data.rows, 60u);
    ASSERT_EQ(eig.data.rows, 3u);
    double positive = 0;
    for (std::size_t i = 0; i < 60; ++i) {
      positive += std::max(spectrum.data.v[i], 0.0);
      if (i > 0) {
        EXPECT_LE(spectrum.data.v[i], spectrum.data.v[i - 1]) << "spectrum not descending";
      }
    }
    double ratio_sum = 0;
    for (std::size_t j = 0; j < 3; ++j) {
      EXPECT_EQ(eig.data(j, 0), spectrum.data.v[j]);
      EXPECT_NEAR(eig.data(j, 1), eig.data(j, 0) / positive, 1e-14);
      ratio_sum += eig.data(j, 1);
    }
    EXPECT_NEAR(ratio_sum, 1.0, 1e-10);  // points in R^3: three components are everything

    const Json report = read_json(out / "run.json");
    EXPECT_EQ(report.value("method", ""), "mds");
    EXPECT_NEAR(report.value("gof1", 0.0), 1.0, 1e-10);
    EXPECT_NEAR(report.value("gof2", 0.0), 1.0, 1e-10);
    EXPECT_EQ(report.value("negative_eigenvalues", -1), 0);
    EXPECT_TRUE(report.contains("most_negative_eigenvalue") &&
                report["most_negative_eigenvalue"].is_null());
    const Json manifest = read_json(out / "model/manifest.json");
    EXPECT_EQ(manifest.value("method", ""), "mds");
    EXPECT_EQ(fs::exists(out / "model/X.npy"), std::string(name) == "from_points");
  }
  const Json points_report = read_json(dir / "from_points/run.json");
  EXPECT_EQ(points_report.value("input_kind", ""), "points");
  EXPECT_EQ(points_report.value("metric", ""), "euclidean");
  EXPECT_EQ(points_report.value("matrix_storage", ""), "full");  // auto is evd at n = 60

  // krylov keeps B's blocks on and below the diagonal (unless asked for all
  // of B), on 3 ranks with small blocks: the same embedding, and Y Y^T = Xc Xc^T.
  // --storage none stores nothing n x n (B recomputed from the points in every
  // product), at 1 and 3 ranks: the same eigenvalues and embedding.
  const Csv evd_eig = read_result_csv(dir / "from_points/eigenvalues.csv");
  const std::vector<std::pair<std::string, int>> runs = {
      {"auto", 3}, {"full", 3}, {"none", 1}, {"none", 3}};
  for (const auto& [storage, np] : runs) {
    const fs::path out = dir / ("krylov_" + storage + std::to_string(np));
    RUN_OK(r,
           (std::vector<std::string>{"mds", "--input", (dir / "x.csv").string(), "-k", "3",
                                     "--solver", "krylov", "--storage", storage, "--block-size",
                                     "7", "--output-dir", out.string()}),
           np);
    const Json report = read_json(out / "run.json");
    EXPECT_EQ(report.value("matrix_storage", ""), storage == "auto" ? "lower_blocks" : storage);
    const Csv emb = read_result_csv(out / "embedding.csv");
    ASSERT_EQ(emb.data.rows, 60u);
    EXPECT_LT(max_abs_diff(emb.data, first), 1e-8) << storage << " " << np;
    EXPECT_LT(gram_difference(emb.data, xc), 1e-9 * 100) << storage << " " << np;
    const Csv eig = read_result_csv(out / "eigenvalues.csv");
    ASSERT_EQ(eig.data.rows, 3u);
    for (std::size_t j = 0; j < 3; ++j)
      EXPECT_NEAR(eig.data(j, 0), evd_eig.data(j, 0), 1e-10 * evd_eig.data(0, 0))
          << storage << " " << np;
  }
}

TEST(MdsCli, NonEuclideanGraphMetricReportsNegativeEigenvaluesHonestly) {
  const fs::path dir = scratch_dir("mds_graph");
  const std::size_t n = 7;
  const Matrix d = cycle_metric(n);
  write_csv(dir / "cycle.csv", d, "");
  std::vector<double> w;
  Matrix vectors;
  jacobi_eigen(gower_b(d), w, vectors);
  const double top = w[0] + w[1];
  double absolute = 0, positive = 0;
  int negative = 0;
  for (double v : w) {
    absolute += std::abs(v);
    positive += std::max(v, 0.0);
    negative += v < -1e-9 ? 1 : 0;
  }
  ASSERT_GT(negative, 0) << "a cycle's shortest-path metric is not Euclidean";
  for (int np : {1, 4}) {
    const fs::path out = dir / ("evd" + std::to_string(np));
    RUN_OK(r,
           (std::vector<std::string>{"mds", "--distances", (dir / "cycle.csv").string(), "-k", "2",
                                     "--block-size", "2", "--output-dir", out.string()}),
           np);
    EXPECT_TRUE(contains(r.out, std::to_string(negative) + " negative eigenvalues")) << r.out;
    const Json report = read_json(out / "run.json");
    EXPECT_EQ(report.value("negative_eigenvalues", -1), negative);
    EXPECT_NEAR(report.value("most_negative_eigenvalue", 0.0), w.back(), 1e-12);
    EXPECT_NEAR(report.value("gof1", 0.0), top / absolute, 1e-12);
    EXPECT_NEAR(report.value("gof2", 0.0), top / positive, 1e-12);
  }
  // evr computes only the top K: the figures are null, with the reason.
  const fs::path out = dir / "evr";
  RUN_OK(r,
         (std::vector<std::string>{"mds", "--distances", (dir / "cycle.csv").string(), "-k", "2",
                                   "--solver", "evr", "--output-dir", out.string()}),
         2);
  EXPECT_EQ(sorted_names(out),
            (std::vector<std::string>{"eigenvalues.csv", "embedding.csv", "model", "run.json"}));
  const Json report = read_json(out / "run.json");
  for (const char* key : {"gof1", "gof2", "negative_eigenvalues", "most_negative_eigenvalue"})
    EXPECT_TRUE(report.contains(key) && report[key].is_null()) << key;
  EXPECT_TRUE(contains(report.value("spectrum_unavailable", ""), "--solver evd"));
}

TEST(MdsCli, InvalidInputsFailOnEveryRankWithTheEntryAndWithoutOutput) {
  const fs::path dir = scratch_dir("mds_invalid");
  const Matrix x = skewed_cloud(12, 4);
  const Matrix d = euclidean_distances(x, x);
  write_csv(dir / "x.csv", x, "");
  Matrix rect = zeros(5, 6);
  write_csv(dir / "rect.csv", rect, "");
  Matrix diag = d;
  diag(4, 4) = 0.5;
  write_csv(dir / "diag.csv", diag, "");
  Matrix negative = d;
  negative(2, 9) = negative(9, 2) = -1;
  write_csv(dir / "negative.csv", negative, "");
  Matrix asym = d;
  asym(8, 3) = 7.5;
  write_npy(dir / "asym.npy", asym);
  write_file(dir / "nan.csv", "0,nan\nnan,0\n");
  Matrix zero_row = x;
  for (std::size_t c = 0; c < 3; ++c) zero_row(6, c) = 0;
  write_csv(dir / "zero_row.csv", zero_row, "");
  write_csv(dir / "line.csv", euclidean_distances(zeros(5, 1), zeros(5, 1)), "");
  const std::string D = "--distances", I = "--input";
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{D, (dir / "rect.csv").string()}, "must be square, found 5 x 6"},
      {{D, (dir / "diag.csv").string()}, "diagonal entry (5, 5) is 0.5"},
      {{D, (dir / "negative.csv").string()},
       "entry (3, 10) is -1, but distances must be non-negative"},
      {{D, (dir / "asym.npy").string()}, "entry (9, 4) is 7.5 but (4, 9) is"},
      {{D, (dir / "asym.npy").string()}, "--symmetrize"},
      {{D, (dir / "nan.csv").string()}, "nan.csv"},
      {{I, (dir / "zero_row.csv").string(), "--metric", "cosine"}, "row 7 is the zero vector"},
      {{I, (dir / "x.csv").string(), "-k", "5"}, "the 3 positive eigenvalues"},
      {{D, (dir / "line.csv").string()}, "the 0 positive eigenvalues"},
      {{D, (dir / "diag.csv").string(), I, (dir / "x.csv").string()}, "not both"},
      {{D, (dir / "diag.csv").string(), "--metric", "euclidean"}, "--metric applies to points"},
      {{I, (dir / "x.csv").string(), "--metric", "chebyshev"}, "unknown metric 'chebyshev'"},
      {{I, (dir / "x.csv").string(), "--symmetrize"}, "--symmetrize applies to --distances"},
      {{"-k", "2"}, "missing --distances"},
      {{D, (dir / "diag.csv").string(), "--precision", "single"},
       "--precision single needs the points"},
      {{I, (dir / "x.csv").string(), "--precision", "single", "--solver", "evr"},
       "--precision single needs --solver krylov"},
      {{I, (dir / "x.csv").string(), "--storage", "lower", "--metric", "manhattan"},
       "--storage lower needs points (--input) under a metric assembled in tiles"},
      {{D, (dir / "diag.csv").string(), "--storage", "lower"},
       "--storage lower needs points"},
      {{I, (dir / "x.csv").string(), "--storage", "lower", "--solver", "evd"},
       "--storage lower needs --solver krylov"},
      {{I, (dir / "x.csv").string(), "--add", "gower"},
       "unknown --add 'gower' (expected none, cailliez or lingoes)"},
      {{I, (dir / "x.csv").string(), "--add", "cailliez", "--precision", "single", "--solver",
        "krylov", "-k", "2"},
       "--add cailliez needs the n x n dissimilarities stored whole in double"},
      {{I, (dir / "x.csv").string(), "--add", "lingoes", "--storage", "none", "-k", "2"},
       "--add lingoes needs the n x n dissimilarities stored whole in double"},
      {{I, (dir / "x.csv").string(), "--add", "cailliez", "--approx", "landmark", "--landmarks",
        "5"},
       "--add applies to exact mds"},
  };
  for (int np : {1, 4})
    for (const auto& c : cases) {
      const fs::path out = dir / "out";
      const RunResult r = run_kembed(
          concat(concat({"mds"}, c.args), {"--block-size", "2", "--output-dir", out.string()}), np);
      EXPECT_FALSE(r.timed_out()) << r.describe();
      EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
      EXPECT_NE(r.status, 0) << r.describe();
      EXPECT_TRUE(contains(r.err, "kembed: error:")) << r.describe();
      EXPECT_TRUE(contains(r.err, c.expected)) << "expected '" << c.expected << "'\n"
                                               << r.describe();
      EXPECT_FALSE(fs::exists(out)) << r.describe();
      EXPECT_TRUE(staging_leftovers(dir).empty()) << r.describe();
    }
}

TEST(MdsCli, SymmetrizeAveragesAnAsymmetricMatrix) {
  const fs::path dir = scratch_dir("mds_symmetrize");
  const Matrix x = skewed_cloud(20, 8);
  const Matrix d = euclidean_distances(x, x);
  Matrix asym = d, averaged = d;
  asym(5, 2) += 0.25;
  averaged(5, 2) = averaged(2, 5) = d(2, 5) + 0.125;
  write_csv(dir / "asym.csv", asym, "");
  write_csv(dir / "avg.csv", averaged, "");
  RUN_OK(a,
         (std::vector<std::string>{"mds", "--distances", (dir / "asym.csv").string(),
                                   "--symmetrize", "--output-dir", (dir / "sym").string()}),
         3);
  RUN_OK(b,
         (std::vector<std::string>{"mds", "--distances", (dir / "avg.csv").string(), "--output-dir",
                                   (dir / "avg").string()}),
         3);
  EXPECT_LT(max_abs_diff(read_result_csv(dir / "sym/embedding.csv").data,
                         read_result_csv(dir / "avg/embedding.csv").data),
            1e-12);
  const Json report = read_json(dir / "sym/run.json");
  EXPECT_EQ(report.value("symmetrized", false), true);
  EXPECT_NEAR(report.value("max_asymmetry_before_symmetrizing", 0.0), 0.25, 1e-12);
}

TEST(MdsCli, TransformPlacesPointsByGowersFormula) {
  const fs::path dir = scratch_dir("mds_transform");
  const Matrix x = skewed_cloud(50, 11), y = skewed_cloud(9, 12);
  const Matrix d = euclidean_distances(x, x), dy = euclidean_distances(y, x);
  write_csv(dir / "x.csv", x, "a,b,c");
  write_csv(dir / "y.csv", y, "a,b,c");
  write_csv(dir / "d.csv", d, "");
  write_npy(dir / "dy.npy", dy);
  const fs::path dfit = dir / "dfit", pfit = dir / "pfit";
  RUN_OK(a,
         (std::vector<std::string>{"mds", "--distances", (dir / "d.csv").string(), "-k", "2",
                                   "--block-size", "6", "--output-dir", dfit.string()}),
         2);
  RUN_OK(b,
         (std::vector<std::string>{"mds", "--input", (dir / "x.csv").string(), "-k", "2",
                                   "--output-dir", pfit.string()}),
         3);
  const Matrix expected = read_result_csv(dfit / "embedding.csv").data;
  // Training points, as distance rows and as points, land on their embedding.
  for (int np : {1, 4}) {
    const std::string tag = std::to_string(np);
    EXPECT_LT(max_abs_diff(mds_transform(dfit / "model", dir / "d.csv", dir / ("td" + tag), np),
                           expected),
              1e-9)
        << np << " ranks, distances";
    EXPECT_LT(max_abs_diff(mds_transform(pfit / "model", dir / "x.csv", dir / ("tp" + tag), np),
                           expected),
              1e-9)
        << np << " ranks, points";
  }
  // New points: by their distances and as points, the same coordinates,
  // and those of an independent serial Gower computation.
  const Matrix by_distances = mds_transform(dfit / "model", dir / "dy.npy", dir / "new_d", 3);
  const Matrix by_points = mds_transform(pfit / "model", dir / "y.csv", dir / "new_p", 2);
  EXPECT_EQ(by_distances.rows, 9u);
  EXPECT_LT(max_abs_diff(by_distances, by_points), 1e-9);
  // The model of a matrix-free fit (--storage none) places them the same way.
  const fs::path nfit = dir / "nfit";
  RUN_OK(c,
         (std::vector<std::string>{"mds", "--input", (dir / "x.csv").string(), "-k", "2",
                                   "--storage", "none", "--output-dir", nfit.string()}),
         3);
  EXPECT_EQ(read_json(nfit / "run.json").value("matrix_storage", ""), "none");
  EXPECT_LT(max_abs_diff(read_result_csv(nfit / "embedding.csv").data, expected), 1e-8);
  EXPECT_LT(max_abs_diff(mds_transform(nfit / "model", dir / "y.csv", dir / "new_n", 2), by_points),
            1e-8);
  const auto eig = read_result_csv(dfit / "eigenvalues.csv").data;
  const std::size_t n = x.rows;
  std::vector<double> r(n, 0.0);
  double g = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      r[j] += d(i, j) * d(i, j) / n, g += d(i, j) * d(i, j) / (n * n);
  for (std::size_t p = 0; p < y.rows; ++p) {
    double qmean = 0;
    for (std::size_t j = 0; j < n; ++j) qmean += dy(p, j) * dy(p, j) / n;
    for (std::size_t c = 0; c < 2; ++c) {
      // y* = Lambda^(-1/2) V^T b* with V = Y Lambda^(-1/2): y*_c = Y_c . b* / lambda_c.
      double yc = 0;
      for (std::size_t j = 0; j < n; ++j)
        yc += expected(j, c) * -0.5 * (dy(p, j) * dy(p, j) - r[j] - qmean + g);
      EXPECT_NEAR(by_distances(p, c), yc / eig(c, 0), 1e-9) << "point " << p;
    }
  }
  // The wrong kind of input for the model fails cleanly on every rank.
  for (int np : {1, 4}) {
    const RunResult wrong_d =
        run_kembed({"transform", "--model", (dfit / "model").string(), "--input",
                    (dir / "y.csv").string(), "--output-dir", (dir / "bad").string()},
                   np);
    EXPECT_TRUE(wrong_d.no_rank_succeeded() && contains(wrong_d.err, "(m x n)"))
        << wrong_d.describe();
    const RunResult wrong_p =
        run_kembed({"transform", "--model", (pfit / "model").string(), "--input",
                    (dir / "dy.npy").string(), "--output-dir", (dir / "bad").string()},
                   np);
    EXPECT_TRUE(wrong_p.no_rank_succeeded() && contains(wrong_p.err, "with 3 features"))
        << wrong_p.describe();
    EXPECT_FALSE(fs::exists(dir / "bad"));
  }
}

TEST(MdsCli, ConfigFileWorksLikeTheCommandLine) {
  const fs::path dir = scratch_dir("mds_config");
  write_csv(dir / "x.csv", skewed_cloud(25, 13), "a,b,c");
  write_file(dir / "mds.ini", "input = " + (dir / "x.csv").string() +
                                  "\nmetric = manhattan\ncomponents = 2\nsolver = evd\n"
                                  "block-size = 4\noutput-dir = " +
                                  (dir / "cfg").string() + "\n");
  RUN_OK(a, (std::vector<std::string>{"mds", "--config", (dir / "mds.ini").string()}), 2);
  RUN_OK(b,
         (std::vector<std::string>{"mds", "--input", (dir / "x.csv").string(), "--metric",
                                   "manhattan", "-k", "2", "--output-dir", (dir / "cli").string()}),
         1);
  EXPECT_LT(max_abs_diff(read_result_csv(dir / "cfg/embedding.csv").data,
                         read_result_csv(dir / "cli/embedding.csv").data),
            1e-9);
  EXPECT_EQ(read_json(dir / "cfg/run.json").value("metric", ""), "manhattan");
}

// --add: R 4.2.2's values for eurodist, printed with sprintf("%.17g", ...):
//   r <- cmdscale(eurodist, k = 2, add = TRUE, eig = TRUE); r$ac; r$eig[1:2]; r$points[1:2, ]
// and Lingoes's constant, which cmdscale lacks:
//   d <- as.matrix(eurodist); B2 <- -0.5 * .Call(stats:::C_DoubleCentre, d^2)
//   -min(eigen(B2, symmetric = TRUE, only.values = TRUE)$values)
TEST(MdsCli, AddConstantsMatchRAndTransformAppliesThem) {
  const fs::path dir = scratch_dir("mds_add");
  const std::size_t n = kembed::test::kEurodistSize;
  const auto full = kembed::test::eurodist_matrix();
  Matrix d = zeros(n, n);
  d.v = full;
  write_csv(dir / "d.csv", d, "");
  const double r_ac = 2132.6784951979384, r_lingoes = 2251844.3317361567;
  const double r_eig[] = {42271880.80057101, 29539104.213812925};
  const double r_points[2][2] = {{-2683.2195822804028, 3149.753939631074},
                                 {1448.3278544949562, 734.87726041759322}};
  for (int np : {1, 4}) {
    const std::string tag = std::to_string(np);
    const fs::path cai = dir / ("cailliez" + tag), lin = dir / ("lingoes" + tag);
    RUN_OK(a,
           (std::vector<std::string>{"mds", "--distances", (dir / "d.csv").string(), "-k", "2",
                                     "--add", "cailliez", "--block-size", "3", "--output-dir",
                                     cai.string()}),
           np);
    const Json report = read_json(cai / "run.json");
    EXPECT_EQ(report.value("additive_method", ""), "cailliez");
    EXPECT_NEAR(report.value("additive_constant", 0.0), r_ac, 1e-9 * r_ac) << np;
    EXPECT_NEAR(report.value("additive_largest_real_part", 0.0), r_ac, 1e-9 * r_ac) << np;
    const Matrix eig = read_result_csv(cai / "eigenvalues.csv").data;
    const Matrix emb = read_result_csv(cai / "embedding.csv").data;
    for (std::size_t c = 0; c < 2; ++c) {
      EXPECT_NEAR(eig(c, 0), r_eig[c], 1e-9 * r_eig[0]) << np;
      const double sign = (emb(0, c) > 0) == (r_points[0][c] > 0) ? 1 : -1;
      for (std::size_t i = 0; i < 2; ++i)
        EXPECT_NEAR(sign * emb(i, c), r_points[i][c], 1e-8 * 4000) << np << " row " << i;
    }
    EXPECT_NEAR(report.value("gof1", 0.0), 0.51155641074300484, 1e-10);  // R's r$GOF[1]
    const Json manifest = read_json(cai / "model/manifest.json");
    EXPECT_EQ(manifest.value("additive_method", ""), "cailliez");
    EXPECT_EQ(manifest.value("additive_constant", 0.0), report.value("additive_constant", 1.0));
    // The training rows (0 = the same object) give the corrected fit back.
    EXPECT_LT(max_abs_diff(mds_transform(cai / "model", dir / "d.csv", dir / ("t" + tag), np), emb),
              1e-9 * 4000);

    RUN_OK(b,
           (std::vector<std::string>{"mds", "--distances", (dir / "d.csv").string(), "-k", "2",
                                     "--add", "lingoes", "--output-dir", lin.string()}),
           np);
    const Json lreport = read_json(lin / "run.json");
    EXPECT_EQ(lreport.value("additive_method", ""), "lingoes");
    EXPECT_NEAR(lreport.value("additive_constant", 0.0), r_lingoes, 1e-9 * r_lingoes) << np;
    EXPECT_EQ(lreport.value("negative_eigenvalues", -1), 0) << np;
  }
  // --add none is the default and changes nothing.
  RUN_OK(c,
         (std::vector<std::string>{"mds", "--distances", (dir / "d.csv").string(), "-k", "2",
                                   "--output-dir", (dir / "plain").string()}),
         2);
  RUN_OK(e,
         (std::vector<std::string>{"mds", "--distances", (dir / "d.csv").string(), "-k", "2",
                                   "--add", "none", "--output-dir", (dir / "none").string()}),
         2);
  for (const char* name : {"embedding.csv", "eigenvalues.csv", "spectrum.csv"})
    EXPECT_EQ(read_file(dir / "plain" / name), read_file(dir / "none" / name)) << name;
  EXPECT_FALSE(read_json(dir / "none/run.json").contains("additive_constant"));
  EXPECT_FALSE(read_json(dir / "none/model/manifest.json").contains("additive_method"));
  // Other commands have no --add.
  const RunResult k = run_kembed({"kpca", "--input", (dir / "d.csv").string(), "--add", "cailliez",
                                  "--output-dir", (dir / "kpca").string()},
                                 2);
  EXPECT_TRUE(k.no_rank_succeeded() && contains(k.err, "unrecognised option '--add'"))
      << k.describe();
}

// The memory plan (--dry-run, the guard) counts the additive constant's
// matrices: five more local blocks of the n x n matrix for Cailliez (the
// 2n x 2n matrix and a work copy), one for Lingoes, none without --add.
TEST(MdsCli, DryRunCountsTheAdditiveConstantsMatrices) {
  const fs::path dir = scratch_dir("mds_add_plan");
  auto megabytes = [](const std::string& text, const std::string& item) {
    const std::size_t at = text.find("  " + item + ": ");
    if (at == std::string::npos) return -1.0;
    const std::string rest = text.substr(at + item.size() + 4);
    const double value = std::stod(rest);
    const std::string unit = rest.substr(rest.find(' ') + 1, 2);
    return unit == "GB" ? value * 1000 : unit == "MB" ? value : value / 1000;
  };
  for (const auto& [add, blocks] :
       std::vector<std::pair<std::string, double>>{{"none", 0}, {"cailliez", 5}, {"lingoes", 1}}) {
    RUN_OK(r,
           (std::vector<std::string>{"mds", "--generate", "gaussian", "--rows", "4000", "--cols",
                                     "8", "--add", add, "--dry-run", "--output-dir",
                                     (dir / "out").string()}),
           2);
    // 4000 x 4000 on a 1x2 grid: 4000 x 2016 local doubles, 64.5 MB.
    const double extra = megabytes(r.out, "additive constant (mds --add)");
    if (blocks == 0) {
      EXPECT_EQ(extra, -1.0) << r.describe();
    } else {
      // --add keeps the whole matrix (not its lower blocks).
      EXPECT_NEAR(megabytes(r.out, "n x n matrix (local block)"), 64.5, 0.05) << r.describe();
      EXPECT_NEAR(extra, blocks * 64.512, 0.1 * blocks) << add << "\n" << r.describe();
    }
    EXPECT_FALSE(fs::exists(dir / "out"));
  }
}
