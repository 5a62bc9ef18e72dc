// End-to-end tests of `kembed transform` with kernel PCA models: training
// points reproduce the fit, results do not depend on the rank counts of fit
// and transform, the model is never modified, and bad models or inputs fail
// cleanly on every rank.
#include "cli/cli_support.hpp"

namespace {

const std::vector<std::string> kFitArgs = {"kpca", "--kernel", "rbf", "--gamma", "0.7",
                                           "--components", "3", "--block-size", "8"};

fs::path fit(const fs::path& dir, const fs::path& data, int np, const std::string& name,
             std::vector<std::string> extra = {}) {
  const fs::path out = dir / name;
  auto args = concat(kFitArgs, {"--input", data.string(), "--output-dir", out.string()});
  args = concat(args, extra);
  const RunResult r = run_kembed(args, np);
  EXPECT_TRUE(r.all_ranks_succeeded()) << r.describe();
  return out;
}

Matrix transform(const fs::path& model, const fs::path& input, const fs::path& out, int np) {
  const RunResult r = run_kembed({"transform", "--model", model.string(), "--input",
                                  input.string(), "--output-dir", out.string(), "--block-size",
                                  "5"},
                                 np);
  EXPECT_TRUE(r.all_ranks_succeeded()) << r.describe();
  const Csv csv = read_result_csv(out / "embedding.csv");
  EXPECT_EQ(csv.header, numbered("c", 3));
  return csv.data;
}

}  // namespace

TEST(TransformCli, TrainingPointsReproduceTheFitAcrossRankCounts) {
  const fs::path dir = scratch_dir("transform_training");
  const Matrix x = noisy_circles(90, 3);
  write_csv(dir / "train.csv", x, "x,y");
  const fs::path fitted = fit(dir, dir / "train.csv", 3, "fit3");
  const Matrix expected = read_result_csv(fitted / "embedding.csv").data;
  for (int np : {1, 2, 4}) {
    const Matrix z = transform(fitted / "model", dir / "train.csv",
                               dir / ("tr" + std::to_string(np)), np);
    EXPECT_LT(max_abs_diff(z, expected), 1e-8) << np << " ranks";
  }
}

TEST(TransformCli, NewPointsAgreeWhateverTheRankCountsOfFitAndTransform) {
  const fs::path dir = scratch_dir("transform_new");
  write_csv(dir / "train.csv", noisy_circles(80, 5), "x,y");
  write_csv(dir / "new.csv", noisy_circles(33, 6), "x,y");
  const fs::path fit1 = fit(dir, dir / "train.csv", 1, "fit1");
  const fs::path fit3 = fit(dir, dir / "train.csv", 3, "fit3");
  const Matrix a = transform(fit1 / "model", dir / "new.csv", dir / "a", 4);
  const Matrix b = transform(fit3 / "model", dir / "new.csv", dir / "b", 2);
  EXPECT_EQ(a.rows, 33u);
  EXPECT_LT(max_abs_diff(a, b), 1e-10);

  // Independent check of the projection formula for one new point y:
  // z_j = sum_i a_ij (k(y, x_i) - colmean_i - mean_i k(y, x_i) + grand mean),
  // with a_j = v_j / sqrt(lambda_j) recovered from the fit's own embedding.
  const Matrix x = noisy_circles(80, 5), y = noisy_circles(33, 6);
  const Matrix z = read_result_csv(fit1 / "embedding.csv").data;
  const auto eig = read_result_csv(fit1 / "eigenvalues.csv").data;
  const Matrix k = rbf_kernel(x, 0.7);
  const std::size_t n = x.rows;
  std::vector<double> colmean(n, 0.0);
  double grand = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) colmean[j] += k(i, j) / n, grand += k(i, j) / (n * n);
  std::vector<double> ky(n);
  double rowmean = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double dx = y(0, 0) - x(i, 0), dy = y(0, 1) - x(i, 1);
    ky[i] = std::exp(-0.7 * (dx * dx + dy * dy));
    rowmean += ky[i] / n;
  }
  for (int j = 0; j < 3; ++j) {
    const double lambda = eig(j, 0);
    double zj = 0;
    for (std::size_t i = 0; i < n; ++i)
      zj += z(i, j) / lambda * (ky[i] - colmean[i] - rowmean + grand);  // a = z / lambda
    EXPECT_NEAR(a(0, j), zj, 1e-9) << "component " << j + 1;
  }
}

TEST(TransformCli, ModelIsReadOnlyAndBadInputsFailCleanly) {
  const fs::path dir = scratch_dir("transform_errors");
  write_csv(dir / "train.csv", noisy_circles(40, 7), "x,y");
  const fs::path fitted = fit(dir, dir / "train.csv", 2, "fit");
  const fs::path model = fitted / "model";
  std::map<std::string, std::string> before;
  for (const auto& e : fs::directory_iterator(model)) before[e.path().string()] = read_file(e.path());

  Matrix three = zeros(5, 3);
  write_csv(dir / "three.csv", three, "a,b,c");
  fs::create_directories(dir / "bad_manifest");
  fs::create_directories(dir / "other_format");
  write_file(dir / "bad_manifest/manifest.json", "{ not json");
  write_file(dir / "other_format/manifest.json", "{\"format\": \"something-else\"}");
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"--model", model.string(), "--input", (dir / "three.csv").string()}, "3 columns"},
      {{"--model", (dir / "missing").string(), "--input", (dir / "train.csv").string()},
       "no readable manifest.json"},
      {{"--model", (dir / "bad_manifest").string(), "--input", (dir / "train.csv").string()},
       "not a valid model manifest"},
      {{"--model", (dir / "other_format").string(), "--input", (dir / "train.csv").string()},
       "not a kembed model manifest"},
      {{"--input", (dir / "train.csv").string()}, "missing --model"},
  };
  for (int np : {1, 4})
    for (const auto& c : cases) {
      const fs::path out = dir / "out";
      const RunResult r =
          run_kembed(concat(concat({"transform"}, c.args), {"--output-dir", out.string()}), np);
      EXPECT_FALSE(r.timed_out()) << r.describe();
      EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
      EXPECT_TRUE(contains(r.err, "kembed: error:")) << r.describe();
      EXPECT_TRUE(contains(r.err, c.expected)) << r.describe();
      EXPECT_FALSE(fs::exists(out));
    }
  transform(model, dir / "train.csv", dir / "ok", 3);
  std::map<std::string, std::string> after;
  for (const auto& e : fs::directory_iterator(model)) after[e.path().string()] = read_file(e.path());
  EXPECT_EQ(before, after);
}
