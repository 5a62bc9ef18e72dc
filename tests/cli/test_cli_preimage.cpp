// End-to-end tests of `kembed preimage`: every method gives the same points
// whatever the rank count, a training sample's own full embedding leads
// back to that sample, ridge needs a map fitted with --fit-inverse, the
// model is never modified, and bad requests fail cleanly on every rank.
#include <map>

#include "cli/cli_support.hpp"

namespace {

fs::path preimage_fit(const fs::path& dir, const fs::path& data, const std::string& name,
             const std::vector<std::string>& extra) {
  const fs::path out = dir / name;
  const RunResult r = run_kembed(concat({"kpca", "--input", data.string(), "--output-dir",
                                         out.string(), "--block-size", "8"},
                                        extra),
                                 2);
  EXPECT_TRUE(r.all_ranks_succeeded()) << r.describe();
  return out / "model";
}

Matrix preimage(const std::vector<std::string>& args, const fs::path& out, int np) {
  const RunResult r = run_kembed(concat(concat({"preimage"}, args),
                                        {"--output-dir", out.string(), "--block-size", "4"}),
                                 np);
  EXPECT_TRUE(r.all_ranks_succeeded()) << r.describe();
  const Csv csv = read_result_csv(out / "preimages.csv");
  EXPECT_EQ(csv.header, numbered("x", 2));
  return csv.data;
}

}  // namespace

TEST(PreimageCli, EveryMethodGivesTheSamePointsOnOneAndThreeRanks) {
  const fs::path dir = scratch_dir("preimage_ranks");
  write_csv(dir / "train.csv", noisy_circles(120, 7), "x,y");
  write_csv(dir / "noisy.csv", noisy_circles(25, 8), "x,y");
  const fs::path model = preimage_fit(dir, dir / "train.csv", "fit",
                             {"--kernel", "rbf", "--gamma", "1", "--components", "6",
                              "--fit-inverse", "--alpha", "0.05"});
  for (const std::string method : {"nearest", "fixed-point", "ridge"}) {
    std::vector<std::string> args = {"--model", model.string(), "--input",
                                     (dir / "noisy.csv").string(), "--method", method};
    if (method != "ridge") args = concat(args, {"--components", "4"});
    const Matrix one = preimage(args, dir / (method + "1"), 1);
    const Matrix three = preimage(args, dir / (method + "3"), 3);
    EXPECT_EQ(one.rows, 25u) << method;
    EXPECT_LT(max_abs_diff(one, three), 1e-8) << method;
    const auto report = nlohmann::json::parse(read_file(dir / (method + "3") / "run.json"));
    EXPECT_EQ(report["pre_image_method"], method);
    EXPECT_EQ(report["per_point"].size(), 25u);
    EXPECT_EQ(report["converged"], 25);
    for (const auto& point : report["per_point"]) EXPECT_GE(point["feature_distance_squared"], 0.0);
  }
}

TEST(PreimageCli, TheFullEmbeddingOfATrainingSampleLeadsBackToIt) {
  // With every component of the centered kernel (rank n - 1), phi_hat of a
  // training sample's own embedding row is phi(x_i) itself: nearest must
  // return x_i exactly, at feature distance ~0.
  const fs::path dir = scratch_dir("preimage_self");
  const std::size_t n = 12;
  const Matrix x = noisy_circles(n, 3);
  write_csv(dir / "train.csv", x, "x,y");
  const fs::path model = preimage_fit(dir, dir / "train.csv", "fit",
                             {"--kernel", "rbf", "--gamma", "0.5", "--components",
                              std::to_string(n - 1)});
  const fs::path embedding = dir / "fit" / "embedding.csv";
  const Matrix back = preimage({"--model", model.string(), "--embedding", embedding.string(),
                                "--method", "nearest"},
                               dir / "near", 2);
  EXPECT_EQ(max_abs_diff(back, x), 0.0);
  const auto report = nlohmann::json::parse(read_file(dir / "near" / "run.json"));
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(report["per_point"][i]["nearest_training_sample"], i + 1);
    EXPECT_LT(report["per_point"][i]["feature_distance_squared"].get<double>(), 1e-10);
  }
}

TEST(PreimageCli, BadRequestsFailCleanlyOnEveryRank) {
  const fs::path dir = scratch_dir("preimage_bad");
  write_csv(dir / "train.csv", noisy_circles(40, 2), "x,y");
  write_csv(dir / "three.csv", skewed_cloud(5, 2), "a,b,c");
  write_csv(dir / "z5.csv", zeros(3, 5), "");
  const std::string rbf = preimage_fit(dir, dir / "train.csv", "rbf",
                              {"--kernel", "rbf", "--components", "3"}).string();
  const std::string poly = preimage_fit(dir, dir / "train.csv", "poly",
                               {"--kernel", "poly", "--components", "3"}).string();
  const std::string input = (dir / "train.csv").string();
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"--model", rbf, "--input", input}, "missing --method"},
      {{"--model", rbf, "--input", input, "--method", "magic"}, "unknown pre-image method 'magic'"},
      {{"--model", poly, "--input", input, "--method", "fixed-point"},
       "use --method nearest or ridge"},
      {{"--model", rbf, "--input", input, "--method", "ridge"}, "fit it with kembed kpca --fit-inverse"},
      {{"--model", rbf, "--input", input, "--method", "nearest", "--components", "4"},
       "--components 4 exceeds the model's 3 components"},
      {{"--model", rbf, "--embedding", (dir / "z5.csv").string(), "--method", "nearest"},
       "z5.csv: has 5 columns"},
      {{"--model", rbf, "--input", input, "--embedding", (dir / "z5.csv").string(), "--method",
        "nearest"},
       "give either --input"},
      {{"--model", rbf, "--input", (dir / "three.csv").string(), "--method", "nearest"},
       "three.csv: has 3 columns"},
      {{"--model", rbf, "--embedding", (dir / "z5.csv").string(), "--method", "fixed-point",
        "--init", "input"},
       "--init input needs --input"},
      {{"--model", (dir / "nowhere").string(), "--input", input, "--method", "nearest"},
       "nowhere"},
  };
  std::map<std::string, std::string> before;
  for (const auto& e : fs::directory_iterator(rbf)) before[e.path().string()] = read_file(e.path());
  for (int np : {1, 4})
    for (const auto& c : cases) {
      const fs::path out = dir / "out";
      const RunResult r =
          run_kembed(concat(concat({"preimage"}, c.args), {"--output-dir", out.string()}), np);
      EXPECT_FALSE(r.timed_out()) << r.describe();
      EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
      EXPECT_TRUE(contains(r.err, "kembed: error:")) << r.describe();
      EXPECT_TRUE(contains(r.err, c.expected)) << r.describe();
      EXPECT_FALSE(fs::exists(out));
    }
  std::map<std::string, std::string> after;
  for (const auto& e : fs::directory_iterator(rbf)) after[e.path().string()] = read_file(e.path());
  EXPECT_EQ(before, after);
}
