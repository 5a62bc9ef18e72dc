// End-to-end tests of `kembed preimage` with PCA models (issue 17): the
// inverse transform x = mean + scale * Z W^T, checked against the identity
// (all components give the input back) and against the orthogonal projection
// onto the top c axes computed here (Jacobi rotations on the covariance).
#include "cli/cli_support.hpp"

namespace {

// skewed_cloud with a fourth, correlated column, so that standardization and
// a rank-2 projection are not trivial.
Matrix cloud4(std::size_t n) {
  const Matrix x3 = skewed_cloud(n, 11);
  Matrix x = zeros(n, 4);
  for (std::size_t i = 0; i < n; ++i) {
    for (int b = 0; b < 3; ++b) x(i, b) = x3(i, b);
    x(i, 3) = 10 * x3(i, 0) - x3(i, 2) + 0.1 * std::sin(double(i));
  }
  return x;
}

Matrix read_preimages(const fs::path& dir, std::size_t n, std::size_t d) {
  const Csv csv = read_result_csv(dir / "preimages.csv");
  EXPECT_EQ(csv.header, numbered("x", static_cast<int>(d)));
  EXPECT_EQ(csv.data.rows, n);
  return csv.data;
}

double max_abs(const Matrix& a) {
  double m = 0;
  for (double v : a.v) m = std::max(m, std::abs(v));
  return m;
}

TEST(PcaPreimage, AllComponentsReturnTheInputOnAnyRankCount) {
  const fs::path dir = scratch_dir("pca_preimage_full");
  const Matrix x = cloud4(37);
  write_csv(dir / "X.csv", x, "a,b,c,d");
  RUN_OK(fit, concat({"pca", "--input", (dir / "X.csv").string(), "-k", "4", "--standardize",
                      "--whiten", "-o", (dir / "fit").string(), "--block-size", "4"},
                     {"--quiet"}), 2);
  for (int np : {1, 3}) {
    const fs::path out = dir / ("pre" + std::to_string(np));
    RUN_OK(pre, concat({"preimage", "--model", (dir / "fit/model").string(), "--input",
                        (dir / "X.csv").string(), "-o", out.string()},
                       {"--block-size", "4", "--quiet"}), np);
    EXPECT_LT(max_abs_diff(read_preimages(out, x.rows, 4), x), 1e-12 * max_abs(x)) << np;
  }
}

TEST(PcaPreimage, FewerComponentsGiveTheOrthogonalProjection) {
  const fs::path dir = scratch_dir("pca_preimage_rank2");
  const Matrix x = cloud4(41);
  const std::size_t n = x.rows, d = x.cols;
  write_csv(dir / "X.csv", x, "a,b,c,d");
  RUN_OK(fit, concat({"pca", "--input", (dir / "X.csv").string(), "-k", "3", "--standardize",
                      "-o", (dir / "fit").string()}, {"--quiet"}), 2);
  // Reference: standardize, top-2 axes U2, x = mean + sd * (Xs U2 U2^T).
  std::vector<double> mean(d, 0), sd(d, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t t = 0; t < d; ++t) mean[t] += x(i, t) / double(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t t = 0; t < d; ++t) sd[t] += std::pow(x(i, t) - mean[t], 2) / double(n - 1);
  Matrix xs = x;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t t = 0; t < d; ++t) xs(i, t) = (x(i, t) - mean[t]) / std::sqrt(sd[t]);
  Matrix cov = zeros(d, d);
  for (std::size_t a = 0; a < d; ++a)
    for (std::size_t b = 0; b < d; ++b)
      for (std::size_t i = 0; i < n; ++i) cov(a, b) += xs(i, a) * xs(i, b) / double(n - 1);
  std::vector<double> values;
  Matrix u;
  jacobi_eigen(cov, values, u);
  Matrix expected = zeros(n, d);
  for (std::size_t i = 0; i < n; ++i)
    for (int j = 0; j < 2; ++j) {
      double z = 0;
      for (std::size_t t = 0; t < d; ++t) z += xs(i, t) * u(t, j);
      for (std::size_t t = 0; t < d; ++t) expected(i, t) += z * u(t, j) * std::sqrt(sd[t]);
    }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t t = 0; t < d; ++t) expected(i, t) += mean[t];

  RUN_OK(pre, concat({"preimage", "--model", (dir / "fit/model").string(), "--input",
                      (dir / "X.csv").string(), "-k", "2", "-o", (dir / "pre").string()},
                     {"--quiet"}), 2);
  EXPECT_LT(max_abs_diff(read_preimages(dir / "pre", n, d), expected), 1e-10 * max_abs(x));
  // The training embedding's first two columns are the same scores.
  RUN_OK(emb, concat({"preimage", "--model", (dir / "fit/model").string(), "--embedding",
                      (dir / "fit/embedding.csv").string(), "-k", "2", "-o",
                      (dir / "emb").string()}, {"--quiet"}), 3);
  EXPECT_LT(max_abs_diff(read_preimages(dir / "emb", n, d), expected), 1e-10 * max_abs(x));
}

TEST(PcaPreimage, BadRequestsFailOnEveryRank) {
  const fs::path dir = scratch_dir("pca_preimage_errors");
  write_csv(dir / "X.csv", cloud4(20), "a,b,c,d");
  RUN_OK(fit, concat({"pca", "--input", (dir / "X.csv").string(), "-k", "2", "-o",
                      (dir / "fit").string()}, {"--quiet"}), 1);
  const std::string model = (dir / "fit/model").string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--method", "nearest", "--input", (dir / "X.csv").string()}, "leave out --method"},
      {{"--input", (dir / "X.csv").string(), "-k", "3"}, "exceeds the model's 2 components"},
  };
  for (const auto& [args, message] : cases) {
    const RunResult r = run_kembed(
        concat(concat({"preimage", "--model", model}, args), {"-o", (dir / "bad").string()}), 2);
    EXPECT_FALSE(r.timed_out()) << r.describe();
    EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
    EXPECT_TRUE(contains(r.err, message)) << r.describe();
  }
}

}  // namespace
