// kembed kpca --approx nystrom end to end: bad inputs refused on every rank
// with a clear message, the result equal to exact kpca when every sample is
// a landmark, transform of the training points reproducing the embedding,
// the same answer at different rank counts, and the run.json fields.
#include "cli/cli_support.hpp"

using namespace cli_test;

namespace {

Matrix nystrom_embedding(const fs::path& dir) {
  return read_result_csv(dir / "embedding.csv").data;
}

double nystrom_max_abs(const Matrix& m) {
  double worst = 0;
  for (double v : m.v) worst = std::max(worst, std::abs(v));
  return worst;
}

}  // namespace

TEST(CliNystrom, BadInputsFailOnEveryRankWithAMessage) {
  const fs::path dir = scratch_dir("nystrom_bad");
  write_csv(dir / "x.csv", noisy_circles(20, 1), "");
  Matrix square = zeros(20, 20);
  for (std::size_t i = 0; i < 20; ++i) square(i, i) = 1;
  write_csv(dir / "k.csv", square, "");
  const std::string x = (dir / "x.csv").string(), out = (dir / "out").string();
  const struct {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"--input", x, "--approx", "nystrom", "--landmarks", "21"},
       "--landmarks 21 must be between 1 and the number of samples n = 20"},
      {{"--input", x, "--approx", "nystrom", "--landmarks", "1", "-k", "2"},
       "--landmarks 1 is fewer than --components 2"},
      {{"--input", x, "--approx", "nystrom", "--landmarks", "0"}, "--landmarks must be at least 1"},
      {{"--input", (dir / "k.csv").string(), "--kernel", "precomputed", "--approx", "nystrom",
        "--landmarks", "5"},
       "a precomputed kernel has none"},
      {{"--input", x, "--approx", "nystrom"}, "--approx nystrom needs --landmarks M"},
      {{"--input", x, "--landmarks", "5"}, "apply to --approx nystrom only"},
  };
  for (int np : {1, 4})
    for (const auto& c : cases) {
      const RunResult r = run_kembed(concat({"kpca", "-o", out}, c.args), np);
      EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
      EXPECT_NE(r.status, 0) << r.describe();
      EXPECT_TRUE(contains(r.err, "kembed: error: ")) << r.describe();
      EXPECT_TRUE(contains(r.err, c.message)) << r.describe();
      EXPECT_FALSE(fs::exists(out)) << r.describe();
    }
}

TEST(CliNystrom, AllLandmarksEqualExactAndTransformReproducesTheEmbedding) {
  const fs::path dir = scratch_dir("nystrom_run");
  const std::size_t n = 60;
  const int k = 2;
  write_csv(dir / "x.csv", noisy_circles(n, 4), "x,y");
  const std::string x = (dir / "x.csv").string();
  const std::vector<std::string> common = {"kpca", "--input", x, "--kernel", "rbf", "--gamma", "1",
                                           "-k", std::to_string(k)};
  const RunResult exact = run_kembed(concat(common, {"-o", (dir / "exact").string()}), 2);
  ASSERT_TRUE(exact.all_ranks_succeeded()) << exact.describe();
  const RunResult all = run_kembed(
      concat(common, {"--approx", "nystrom", "--landmarks", std::to_string(n), "--panel-rows", "7",
                      "-o", (dir / "all").string()}),
      3);
  ASSERT_TRUE(all.all_ranks_succeeded()) << all.describe();
  const KpcaOutput e = read_kpca_output(dir / "exact", n, k);
  const KpcaOutput a = read_kpca_output(dir / "all", n, k);
  EXPECT_LT(max_rel_diff(a.eigenvalues, e.eigenvalues), 1e-8);
  EXPECT_LT(max_abs_diff(a.embedding, e.embedding), 1e-6 * nystrom_max_abs(e.embedding));

  // Fewer landmarks (k-means++), at 2 and 4 ranks, then transform at 3.
  const std::vector<std::string> approx = {"--approx", "nystrom", "--landmarks", "15",
                                           "--landmark-selection", "kmeans++", "--seed", "7"};
  const RunResult two = run_kembed(concat(concat(common, approx), {"-o", (dir / "two").string()}), 2);
  const RunResult four =
      run_kembed(concat(concat(common, approx), {"-o", (dir / "four").string()}), 4);
  ASSERT_TRUE(two.all_ranks_succeeded()) << two.describe();
  ASSERT_TRUE(four.all_ranks_succeeded()) << four.describe();
  const KpcaOutput t = read_kpca_output(dir / "two", n, k);
  const KpcaOutput f = read_kpca_output(dir / "four", n, k);
  EXPECT_LT(max_rel_diff(t.eigenvalues, f.eigenvalues), 1e-10);
  EXPECT_LT(max_abs_diff(t.embedding, f.embedding), 1e-10 * nystrom_max_abs(t.embedding));
  // The approximation's eigenvalues lie below the exact ones.
  for (int j = 0; j < k; ++j) EXPECT_LE(t.eigenvalues[j], e.eigenvalues[j] * (1 + 1e-12));

  const RunResult tr = run_kembed({"transform", "--model", (dir / "two" / "model").string(),
                                   "--input", x, "-o", (dir / "projected").string()},
                                  3);
  ASSERT_TRUE(tr.all_ranks_succeeded()) << tr.describe();
  EXPECT_LT(max_abs_diff(nystrom_embedding(dir / "projected"), t.embedding),
            1e-8 * nystrom_max_abs(t.embedding));

  // run.json: the approximation, the phases, the definitions.
  const Json& j = t.report;
  ASSERT_TRUE(j.contains("approximation")) << j.dump(2);
  const Json& ap = j["approximation"];
  EXPECT_EQ(ap.value("method", ""), "nystrom");
  EXPECT_EQ(ap.value("landmarks", 0), 15);
  EXPECT_EQ(ap.value("landmark_selection", ""), "kmeans++");
  EXPECT_EQ(ap.value("seed", -1), 7);
  EXPECT_EQ(ap.value("dropped_directions", -1) + ap.value("directions_kept", -1), 15);
  EXPECT_EQ(ap.value("passes_over_data", 0), 3);
  EXPECT_GE(ap.value("panel_rows", 0), 1);
  EXPECT_DOUBLE_EQ(ap.value("rcond", 0.0), 1e-12);
  for (const char* phase : {"landmarks", "pass1", "solve", "pass2", "write"})
    EXPECT_TRUE(j["time_seconds"].contains(phase)) << phase << "\n" << j.dump(2);
  EXPECT_EQ(j["eigenvalues"].size(), std::size_t(k));
  ASSERT_EQ(j["explained_variance_ratio"].size(), std::size_t(k));
  const double trace = j.value("trace_centered_kernel", 0.0);
  for (int c = 0; c < k; ++c)
    EXPECT_NEAR(j["explained_variance_ratio"][c].get<double>(),
                j["eigenvalues"][c].get<double>() / trace, 1e-14);
  EXPECT_TRUE(j.contains("peak_memory_bytes_per_rank_max"));
  const Json manifest = Json::parse(read_file(dir / "two" / "model" / "manifest.json"));
  EXPECT_EQ(manifest.value("approximation", ""), "nystrom");

  // Pre-images need an exact model: refused with the reason.
  const RunResult pre = run_kembed({"preimage", "--model", (dir / "two" / "model").string(),
                                    "--input", x, "--method", "nearest", "-o",
                                    (dir / "pre").string()},
                                   2);
  EXPECT_TRUE(pre.no_rank_succeeded()) << pre.describe();
  EXPECT_TRUE(contains(pre.err, "pre-images need an exact kernel PCA model")) << pre.describe();
}
