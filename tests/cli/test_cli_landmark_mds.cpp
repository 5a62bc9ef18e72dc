// End-to-end tests of `kembed mds --approx landmark`: bad inputs fail on
// every rank (1 and 4) with a clear message and leave no output; the
// precomputed distances (to and among the landmarks, computed here from the
// points) give the same embedding as the points; transform of the training
// points with the saved model reproduces their embedding.
#include "cli/cli_support.hpp"

namespace {

double distance(const Matrix& a, std::size_t i, const Matrix& b, std::size_t j) {
  double s = 0;
  for (std::size_t c = 0; c < a.cols; ++c) s += (a(i, c) - b(j, c)) * (a(i, c) - b(j, c));
  return std::sqrt(s);
}

Json read_landmark_json(const fs::path& path) {
  try {
    return Json::parse(read_file(path));
  } catch (const std::exception& e) {
    ADD_FAILURE() << path << " does not parse: " << e.what();
    return Json::object();
  }
}

}  // namespace

TEST(LandmarkMdsCli, BadInputsFailOnEveryRank) {
  const fs::path dir = scratch_dir("landmark_bad");
  const Matrix x = skewed_cloud(20, 1);
  write_csv(dir / "x.csv", x, "");
  write_csv(dir / "d.csv", zeros(20, 20), "");
  const std::string in = (dir / "x.csv").string();
  const struct {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"--input", in, "--landmarks", "5"}, "--landmarks applies to --approx landmark"},
      {{"--distances", (dir / "d.csv").string(), "--approx", "landmark", "--landmarks", "5"},
       "--approx landmark does not take --distances"},
      {{"--input", in, "--approx", "landmark", "--landmarks", "21"},
       "--landmarks 21 exceeds the number of points (20)"},
      {{"--input", in, "--approx", "landmark", "--landmarks", "2", "-k", "2"},
       "M must be at least 3"},
      {{"--input", in, "--approx", "landmark", "--landmarks", "0"},
       "--landmarks must be at least 1"},
  };
  for (int np : {1, 4})
    for (const auto& c : cases) {
      const fs::path out = dir / ("out" + std::to_string(np));
      std::vector<std::string> args = {"mds", "--output-dir", out.string()};
      args.insert(args.end(), c.args.begin(), c.args.end());
      const RunResult r = run_kembed(args, np);
      EXPECT_FALSE(r.timed_out()) << r.describe();
      EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
      EXPECT_TRUE(contains(r.err, c.message)) << r.describe();
      EXPECT_FALSE(fs::exists(out)) << r.describe();
    }
}

TEST(LandmarkMdsCli, PrecomputedDistancesAgreeAndTransformReproduces) {
  const fs::path dir = scratch_dir("landmark_routes");
  const std::size_t n = 50, m = 9;
  const Matrix x = skewed_cloud(n, 4);
  write_csv(dir / "x.csv", x, "a,b,c");
  RUN_OK(a,
         (std::vector<std::string>{"mds", "--input", (dir / "x.csv").string(), "--approx",
                                   "landmark", "--landmarks", std::to_string(m), "--seed", "7",
                                   "-k", "2", "--output-dir", (dir / "points").string()}),
         3);
  EXPECT_TRUE(contains(a.out, "9 landmarks")) << a.out;
  const Json run = read_landmark_json(dir / "points/run.json");
  ASSERT_TRUE(run.contains("approximation")) << run.dump();
  const Json& approx = run["approximation"];
  EXPECT_EQ(approx["method"], "landmark");
  EXPECT_EQ(approx["landmarks"], m);
  EXPECT_EQ(approx["stress_sample_pairs"], n * (n - 1) / 2);
  ASSERT_TRUE(approx["sample_stress"].is_number());
  const std::vector<std::size_t> rows = approx["landmark_rows"].get<std::vector<std::size_t>>();
  ASSERT_EQ(rows.size(), m);
  // n / M times the landmark eigenvalues.
  for (std::size_t j = 0; j < 2; ++j)
    EXPECT_NEAR(run["eigenvalues"][j].get<double>(),
                run["landmark_eigenvalues"][j].get<double>() * n / m,
                1e-12 * run["eigenvalues"][0].get<double>());
  const Matrix y = read_result_csv(dir / "points/embedding.csv").data;
  ASSERT_EQ(y.rows, n);

  // Distances from the points, computed here, to the landmarks the run chose.
  Matrix to = zeros(n, m), among = zeros(m, m);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t l = 0; l < m; ++l) to(i, l) = distance(x, i, x, rows[l] - 1);
  for (std::size_t a2 = 0; a2 < m; ++a2)
    for (std::size_t b = 0; b < m; ++b) among(a2, b) = distance(x, rows[a2] - 1, x, rows[b] - 1);
  write_csv(dir / "to.csv", to, "");
  write_file(dir / "among.npy", npy_header(m, m) + raw_doubles(among));
  RUN_OK(b,
         (std::vector<std::string>{"mds", "--approx", "landmark", "--distances-to-landmarks",
                                   (dir / "to.csv").string(), "--landmark-distances",
                                   (dir / "among.npy").string(), "-k", "2", "--output-dir",
                                   (dir / "distances").string()}),
         2);
  const Matrix z = read_result_csv(dir / "distances/embedding.csv").data;
  double scale = 0;
  for (double v : y.v) scale = std::max(scale, std::abs(v));
  EXPECT_LT(max_abs_diff(z, y), 1e-9 * scale);

  // The model places the training points on their embedding, on 4 ranks.
  RUN_OK(t,
         (std::vector<std::string>{"transform", "--model", (dir / "points/model").string(),
                                   "--input", (dir / "x.csv").string(), "--output-dir",
                                   (dir / "again").string()}),
         4);
  EXPECT_LT(max_abs_diff(read_result_csv(dir / "again/embedding.csv").data, y), 1e-10 * scale);
  RUN_OK(u,
         (std::vector<std::string>{"transform", "--model", (dir / "distances/model").string(),
                                   "--input", (dir / "to.csv").string(), "--output-dir",
                                   (dir / "again_d").string()}),
         1);
  EXPECT_LT(max_abs_diff(read_result_csv(dir / "again_d/embedding.csv").data, y), 1e-9 * scale);
}
