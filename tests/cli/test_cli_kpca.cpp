// End-to-end tests of `kembed kpca`: the real binary run under mpiexec.
//
// This is a plain (serial) GoogleTest program. It never initializes MPI; it
// writes inputs, launches `mpiexec -np P kembed kpca ...` through the shell,
// and checks exit status, stderr, the result directory and the numbers in it
// against references computed here (PCA by Jacobi rotations, the kernel
// matrix, the eigen-equation of the centered kernel).
//
// Every rank runs inside a tiny sh wrapper that records its own exit code, so
// the tests can see that *every* rank fails on bad input, not only the one
// mpiexec happens to report.
#include "cli/cli_support.hpp"

namespace {

// ---------------------------------------------------------------------------
// 1. Same answer on every rank count, grid shape and block size
// ---------------------------------------------------------------------------

struct Layout {
  int np;
  std::vector<std::string> extra;
  int nprow, npcol;  ///< expected grid (0: any near-square grid of np ranks)
};

TEST(KpcaCli, RankInvariance) {
  const fs::path dir = scratch_dir("rank_invariance");
  const std::size_t n = 120;
  const int k = 3;
  const double gamma = 0.5;
  const Matrix x = noisy_circles(n, 20240611);
  write_csv(dir / "circles.csv", x, "x,y");
  const Matrix kc = double_center(rbf_kernel(x, gamma));

  const std::vector<Layout> layouts = {
      {1, {}, 1, 1},
      {2, {}, 0, 0},
      {3, {}, 0, 0},
      {4, {}, 2, 2},
      {4, {"--grid", "4x1"}, 4, 1},
      {4, {"--grid", "1x4"}, 1, 4},
      {4, {"--block-size", "7"}, 2, 2},
      {3, {"--block-size", "7"}, 0, 0},
      // auto is evd at this n; krylov keeps the kernel's lower blocks unless
      // asked for the whole kernel.
      {2, {"--solver", "krylov"}, 0, 0},
      {4, {"--solver", "krylov", "--block-size", "7"}, 2, 2},
      {3, {"--solver", "krylov", "--storage", "full", "--block-size", "7"}, 0, 0},
      // Matrix-free: the kernel recomputed in every product (krylov).
      {1, {"--storage", "none"}, 1, 1},
      {3, {"--storage", "none", "--block-size", "7"}, 0, 0},
  };
  std::optional<KpcaOutput> reference;
  for (const Layout& layout : layouts) {
    std::string label = "np" + std::to_string(layout.np);
    for (const auto& e : layout.extra) label += "_" + e.substr(e.find_first_not_of('-'));
    SCOPED_TRACE(label);
    const fs::path out_dir = dir / ("out_" + label);
    const auto args = concat({"kpca", "--input", (dir / "circles.csv").string(), "--kernel", "rbf",
                              "--gamma", "0.5", "--components", std::to_string(k),
                              "--output-dir", out_dir.string(), "--quiet"},
                             layout.extra);
    const RunResult r = run_kembed(args, layout.np);
    EXPECT_FALSE(r.timed_out()) << "hang:\n" << r.describe();
    EXPECT_TRUE(r.all_ranks_succeeded()) << r.describe();
    if (!r.all_ranks_succeeded()) continue;
    EXPECT_EQ(r.out, "") << "--quiet run printed to stdout";
    EXPECT_TRUE(staging_leftovers(dir).empty());

    const KpcaOutput out = read_kpca_output(out_dir, n, k);
    const Json& j = out.report;
    EXPECT_EQ(j.value("method", ""), "kpca");
    EXPECT_EQ(j.value("ranks", -1), layout.np);
    EXPECT_EQ(j.value("n", -1), static_cast<int>(n));
    EXPECT_EQ(j.value("components", -1), k);
    const auto has = [&](const char* word) {
      return std::find(layout.extra.begin(), layout.extra.end(), word) != layout.extra.end();
    };
    EXPECT_EQ(j.value("kernel_storage", ""), has("none")                     ? "none"
                                              : has("krylov") && !has("full") ? "lower_blocks"
                                                                              : "full");
    ASSERT_TRUE(j.contains("grid") && j["grid"].contains("nprow") && j["grid"].contains("npcol"));
    const int nprow = j["grid"]["nprow"], npcol = j["grid"]["npcol"];
    EXPECT_EQ(nprow * npcol, layout.np);
    if (layout.nprow) {
      EXPECT_EQ(nprow, layout.nprow);
      EXPECT_EQ(npcol, layout.npcol);
    }
    // Independent of the other runs: the eigen-equation of J K J, K computed here.
    expect_eigenpairs_of(kc, out, label);

    if (!reference) {
      reference = out;
      continue;
    }
    EXPECT_LT(max_rel_diff(out.eigenvalues, reference->eigenvalues), 1e-10);
    EXPECT_LT(max_abs_diff(out.embedding, reference->embedding), 1e-8);
  }
  EXPECT_TRUE(reference.has_value()) << "the 1-rank run failed; nothing to compare with";
}

TEST(KpcaCli, StorageAutoRunsMatrixFreeWhereNothingStoredFits) {
  // n = 2000 on 2 ranks (1 x 2): the stored lower blocks need about 39 MB per
  // rank, the matrix-free run about 32 MB (kembed plan kpca); 35M lies between.
  const fs::path dir = scratch_dir("storage_auto_none");
  const Matrix x = noisy_circles(2000, 7);
  write_csv(dir / "x.csv", x, "x,y");
  const auto run = [&](const std::string& limit) {
    return run_kembed({"kpca", "--input", (dir / "x.csv").string(), "--components", "2",
                       "--solver", "krylov", "--max-memory-per-rank", limit, "--output-dir",
                       (dir / ("out" + limit)).string(), "--quiet"},
                      2);
  };
  const RunResult fits = run("35M");
  ASSERT_TRUE(fits.all_ranks_succeeded()) << fits.describe();
  EXPECT_TRUE(contains(fits.err, "--storage auto: the stored matrix needs about")) << fits.err;
  const Json j = Json::parse(read_file(dir / "out35M" / "run.json"));
  EXPECT_EQ(j.value("kernel_storage", ""), "none");
  EXPECT_TRUE(contains(j.value("kernel_storage_note", ""), "running matrix-free"));
  const RunResult refused = run("20M");  // neither fits: refused, naming both
  EXPECT_FALSE(refused.all_ranks_succeeded()) << refused.describe();
  EXPECT_TRUE(contains(refused.err, "not enough memory")) << refused.err;
}

TEST(KpcaCli, PlanAndDryRunEstimateTheTimeStoredAndMatrixFree) {
  // Both alternatives with the rates measured on the spot; the one the run
  // takes marked, the assumption and the rates said.
  const RunResult plan = run_kembed({"plan", "kpca", "--rows", "8000", "--cols", "64", "-k", "10",
                                     "--ranks", "2", "--storage", "none"},
                                    1);
  ASSERT_TRUE(plan.all_ranks_succeeded()) << plan.describe();
  EXPECT_TRUE(contains(plan.out, "estimated time of the busiest rank: ")) << plan.out;
  EXPECT_TRUE(contains(plan.out, " stored (assembly ")) << plan.out;
  EXPECT_TRUE(contains(plan.out, "matrix-free (12 products of ")) << plan.out;
  EXPECT_TRUE(contains(plan.out, "centering passes of ")) << plan.out;
  EXPECT_TRUE(contains(plan.out, ") [this run]\n")) << plan.out;
  EXPECT_TRUE(contains(plan.out, "assumed: 12 products for the top 10")) << plan.out;
  EXPECT_TRUE(contains(plan.out, "rates measured here: dgemm 2048 x 64 x 64 ")) << plan.out;
  EXPECT_TRUE(contains(plan.out, "ranks that each have one core like this one")) << plan.out;
  const fs::path dir = scratch_dir("dry_run_time");
  const RunResult dry = run_kembed({"kpca", "--generate", "gaussian", "--rows", "3000", "--cols",
                                    "8", "--dry-run", "--output-dir", (dir / "out").string()},
                                   2);
  ASSERT_TRUE(dry.all_ranks_succeeded()) << dry.describe();
  // auto stores lower blocks here: the stored estimate is this run's.
  EXPECT_TRUE(contains(dry.out, "estimated time of the busiest rank: ")) << dry.out;
  EXPECT_TRUE(contains(dry.out, "b = 24) [this run], ")) << dry.out;
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(KpcaCli, MatrixFreeModelTransformsAsTheStoredFitsModel) {
  // The model of a --storage none fit, here from an INI config (`storage = none`,
  // the option's own name), projects new points as the stored fit's model does:
  // the same eigenvectors (sign rule), so the same transform output.
  const fs::path dir = scratch_dir("matrix_free_model");
  write_csv(dir / "x.csv", noisy_circles(100, 17), "x,y");
  write_csv(dir / "y.csv", noisy_circles(23, 18), "x,y");
  const std::vector<std::string> fit = {"kpca", "--input", (dir / "x.csv").string(), "--kernel",
                                        "rbf", "--gamma", "0.7", "--components", "3", "--quiet"};
  const RunResult stored = run_kembed(concat(fit, {"--output-dir", (dir / "stored").string()}), 2);
  ASSERT_TRUE(stored.all_ranks_succeeded()) << stored.describe();
  write_file(dir / "none.ini", "# kembed-method: kpca\nstorage = none\nblock-size = 9\n");
  const RunResult matrix_free = run_kembed(
      concat(fit, {"--config", (dir / "none.ini").string(), "--output-dir", (dir / "none").string()}),
      3);
  ASSERT_TRUE(matrix_free.all_ranks_succeeded()) << matrix_free.describe();
  const KpcaOutput a = read_kpca_output(dir / "stored", 100, 3);
  const KpcaOutput b = read_kpca_output(dir / "none", 100, 3);
  EXPECT_EQ(b.report.value("kernel_storage", ""), "none");
  EXPECT_LT(max_rel_diff(b.eigenvalues, a.eigenvalues), 1e-10);
  EXPECT_LT(max_abs_diff(b.embedding, a.embedding), 1e-8);
  std::map<std::string, Matrix> projected;
  for (const std::string name : {"stored", "none"}) {
    const fs::path out = dir / ("t_" + name);
    const RunResult t = run_kembed({"transform", "--model", (dir / name / "model").string(),
                                    "--input", (dir / "y.csv").string(), "--output-dir",
                                    out.string(), "--quiet"},
                                   2);
    ASSERT_TRUE(t.all_ranks_succeeded()) << t.describe();
    projected[name] = read_result_csv(out / "embedding.csv").data;
  }
  ASSERT_EQ(projected["none"].rows, 23u);
  EXPECT_LT(max_abs_diff(projected["none"], projected["stored"]), 1e-8);
}

TEST(KpcaCli, SinglePrecisionAgreesWithTheCenteredKernelsEigenpairs) {
  // --precision single: krylov with tol 1e-6 on float32 storage. Checked
  // against the eigen-equation of J K J computed here in double, with the
  // tolerance of single precision (each residual within 1e-5 of lambda^1.5,
  // eigenvalues within 1e-6 relative of the double run's).
  const fs::path dir = scratch_dir("single_precision");
  const std::size_t n = 120;
  const int k = 3;
  const Matrix x = noisy_circles(n, 20240611);
  write_csv(dir / "circles.csv", x, "x,y");
  const Matrix kc = double_center(rbf_kernel(x, 0.5));
  std::map<std::string, KpcaOutput> outputs;
  for (const std::string precision : {"double", "single"}) {
    const fs::path out_dir = dir / precision;
    const RunResult r = run_kembed(
        {"kpca", "--input", (dir / "circles.csv").string(), "--gamma", "0.5", "-k",
         std::to_string(k), "--precision", precision, "--output-dir", out_dir.string(), "--quiet"},
        2);
    ASSERT_TRUE(r.all_ranks_succeeded()) << r.describe();
    outputs[precision] = read_kpca_output(out_dir, n, k);
  }
  const KpcaOutput& single = outputs["single"];
  const Json& j = single.report;
  EXPECT_EQ(j.value("precision", ""), "single");
  EXPECT_EQ(j.value("solver_used", ""), "krylov");
  EXPECT_EQ(j["krylov"].value("tol", 0.0), 1e-6);
  EXPECT_EQ(outputs["double"].report.value("precision", ""), "double");
  EXPECT_LT(max_rel_diff(single.eigenvalues, outputs["double"].eigenvalues), 1e-6);
  for (std::size_t j = 0; j < std::size_t(k); ++j) {
    const double lambda = single.eigenvalues[j];
    double res = 0;
    for (std::size_t i = 0; i < n; ++i) {
      double kz = 0;
      for (std::size_t l = 0; l < n; ++l) kz += kc(i, l) * single.embedding(l, j);
      res += (kz - lambda * single.embedding(i, j)) * (kz - lambda * single.embedding(i, j));
    }
    EXPECT_LT(std::sqrt(res) / (lambda * std::sqrt(lambda)), 1e-5) << "column " << j + 1;
  }

  // The example config runs as written (its keys are valid options), at a small n.
  const std::string src = KEMBED_SOURCE_DIR;
  const RunResult c = run_kembed({"kpca", "--config", src + "/configs/kpca-single.ini", "--rows",
                                  "400", "--output-dir", (dir / "config").string(), "--quiet"},
                                 2);
  ASSERT_TRUE(c.all_ranks_succeeded()) << c.describe();
  const Json config_report = Json::parse(read_file(dir / "config" / "run.json"));
  EXPECT_EQ(config_report.value("precision", ""), "single");
  EXPECT_EQ(config_report.value("n", 0), 400);
}

// ---------------------------------------------------------------------------
// 2. Linear kernel = PCA of the centered data (Jacobi reference)
// ---------------------------------------------------------------------------

struct LinearCase {
  int np;
  std::vector<std::string> extra;
};

std::ostream& operator<<(std::ostream& os, const LinearCase& c) {
  os << "np " << c.np;
  for (const auto& e : c.extra) os << ' ' << e;
  return os;
}

class LinearOracle : public ::testing::TestWithParam<LinearCase> {};

TEST_P(LinearOracle, MatchesPcaScores) {
  const LinearCase& c = GetParam();
  std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::replace(name.begin(), name.end(), '/', '_');
  const fs::path dir = scratch_dir("linear_oracle_" + name);
  const std::size_t n = 60, d = 3;
  const Matrix x = skewed_cloud(n, 7);
  write_csv(dir / "cloud.csv", x, "");

  // Reference: Xc = X - mean, C = Xc^T Xc = U diag(mu) U^T, scores = Xc U.
  Matrix xc = x;
  for (std::size_t j = 0; j < d; ++j) {
    double mean = 0;
    for (std::size_t i = 0; i < n; ++i) mean += x(i, j);
    mean /= static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i) xc(i, j) -= mean;
  }
  Matrix scatter = zeros(d, d);
  for (std::size_t a = 0; a < d; ++a)
    for (std::size_t b = 0; b < d; ++b)
      for (std::size_t i = 0; i < n; ++i) scatter(a, b) += xc(i, a) * xc(i, b);
  std::vector<double> mu;
  Matrix u;
  jacobi_eigen(scatter, mu, u);
  ASSERT_GT(mu[0] / mu[1], 1.5) << "test data: eigenvalues too close for a stable comparison";
  ASSERT_GT(mu[1] / mu[2], 1.5) << "test data: eigenvalues too close for a stable comparison";
  Matrix scores = zeros(n, d);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < d; ++j)
      for (std::size_t a = 0; a < d; ++a) scores(i, j) += xc(i, a) * u(a, j);
  scores = with_sign_convention(scores);

  const fs::path out_dir = dir / "out";
  const auto args = concat({"kpca", "--input", (dir / "cloud.csv").string(), "--kernel", "linear",
                            "--components", "3", "--output-dir", out_dir.string(), "--quiet"},
                           c.extra);
  RUN_OK(r, args, c.np);
  const KpcaOutput out = read_kpca_output(out_dir, n, 3);
  ASSERT_EQ(out.eigenvalues.size(), d);
  // Eigenvalues of Xc Xc^T are those of Xc^T Xc = (n-1) * covariance.
  for (std::size_t j = 0; j < d; ++j)
    EXPECT_NEAR(out.eigenvalues[j] / mu[j], 1.0, 1e-10) << "eigenvalue " << j + 1;
  // The embedding as printed must already follow the sign convention.
  EXPECT_EQ(max_abs_diff(with_sign_convention(out.embedding), out.embedding), 0.0)
      << "embedding columns do not follow the sign convention";
  EXPECT_LT(max_abs_diff(out.embedding, scores), 1e-8) << "embedding != PCA scores Xc U";
  // With k = d the three components carry all of the variance.
  double ratio_sum = 0;
  for (double ratio : out.ratios) ratio_sum += ratio;
  EXPECT_NEAR(ratio_sum, 1.0, 1e-12);
  for (std::size_t j = 0; j < d; ++j)
    EXPECT_NEAR(out.ratios[j], mu[j] / (mu[0] + mu[1] + mu[2]), 1e-12);
}

INSTANTIATE_TEST_SUITE_P(
    KpcaCli, LinearOracle,
    ::testing::Values(LinearCase{1, {}}, LinearCase{3, {}}, LinearCase{1, {"--block-size", "16"}},
                      LinearCase{4, {"--block-size", "16"}}, LinearCase{2, {"--solver", "evr"}}),
    [](const ::testing::TestParamInfo<LinearCase>& info) {
      std::string name = "np" + std::to_string(info.param.np);
      for (const auto& e : info.param.extra)
        for (char ch : e)
          if (std::isalnum(static_cast<unsigned char>(ch))) name += ch;
      return name.empty() ? std::string("default") : name;
    });

// ---------------------------------------------------------------------------
// 3. Input formats agree; precomputed kernel = rbf
// ---------------------------------------------------------------------------

// Block size 16 keeps these tests about formats; default-block behaviour is
// covered by RankInvariance and LinearOracle.
TEST(KpcaCli, FormatsAndPrecomputedAgree) {
  const fs::path dir = scratch_dir("formats");
  const std::size_t n = 120;
  const Matrix x = noisy_circles(n, 99);
  write_csv(dir / "x.csv", x, "a,b");
  write_file(dir / "x.npy", npy_header(n, 2) + raw_doubles(x));
  write_file(dir / "x.bin", raw_doubles(x));
  write_csv(dir / "kernel.csv", rbf_kernel(x, 2.0), "");

  // --gamma goes with rbf only: a precomputed kernel refuses it (it would
  // not read it).
  const std::vector<std::string> common = {"--components", "2", "--block-size", "16", "--quiet"};
  std::map<std::string, KpcaOutput> results;
  const std::vector<std::pair<std::string, std::vector<std::string>>> runs = {
      {"csv", {"--input", (dir / "x.csv").string(), "--kernel", "rbf", "--gamma", "2"}},
      {"npy", {"--input", (dir / "x.npy").string(), "--kernel", "rbf", "--gamma", "2"}},
      {"bin", {"--input", (dir / "x.bin").string(), "--rows", std::to_string(n), "--cols", "2",
               "--kernel", "rbf", "--gamma", "2"}},
      {"precomputed", {"--input", (dir / "kernel.csv").string(), "--kernel", "precomputed"}},
  };
  for (const auto& [name, input_args] : runs) {
    SCOPED_TRACE(name);
    const fs::path out_dir = dir / ("out_" + name);
    const auto args = concat(concat({"kpca"}, input_args),
                             concat(common, {"--output-dir", out_dir.string()}));
    RUN_OK(r, args, 2);
    results[name] = read_kpca_output(out_dir, n, 2);
    const std::string expected_format = name == "precomputed" || name == "csv" ? "text" : name;
    EXPECT_EQ(results[name].report["input"].value("format", ""), expected_format);
    EXPECT_EQ(results[name].report["input"].value("rows", -1), static_cast<int>(n));
  }
  expect_eigenpairs_of(double_center(rbf_kernel(x, 2.0)), results["csv"], "csv");
  for (const char* name : {"npy", "bin"}) {
    EXPECT_LT(max_abs_diff(results[name].embedding, results["csv"].embedding), 1e-12) << name;
    EXPECT_LT(max_rel_diff(results[name].eigenvalues, results["csv"].eigenvalues), 1e-12) << name;
  }
  EXPECT_LT(max_abs_diff(results["precomputed"].embedding, results["csv"].embedding), 1e-8);
  EXPECT_LT(max_rel_diff(results["precomputed"].eigenvalues, results["csv"].eigenvalues), 1e-10);
}

// ---------------------------------------------------------------------------
// 4. --config
// ---------------------------------------------------------------------------

TEST(KpcaCli, ConfigFile) {
  const fs::path dir = scratch_dir("config");
  const std::size_t n = 80;
  const Matrix x = noisy_circles(n, 5);
  write_csv(dir / "x.csv", x, "");
  const fs::path from_file = dir / "from_file", from_cli = dir / "from_cli",
                 overridden = dir / "overridden";
  write_file(dir / "run.ini", "# kembed settings\ninput = " + (dir / "x.csv").string() +
                                  "\nkernel = rbf\ngamma = 2\ncomponents = 2\nblock-size = 16\n"
                                  "output-dir = " + from_file.string() + "\n");

  RUN_OK(a, (std::vector<std::string>{"kpca", "--config", (dir / "run.ini").string(), "--quiet"}), 2);
  RUN_OK(b, (std::vector<std::string>{"kpca", "--input", (dir / "x.csv").string(), "--kernel", "rbf",
                                      "--gamma", "2", "--components", "2", "--block-size", "16",
                                      "--output-dir", from_cli.string(), "--quiet"}),
         2);
  const KpcaOutput file_out = read_kpca_output(from_file, n, 2);
  const KpcaOutput cli_out = read_kpca_output(from_cli, n, 2);
  EXPECT_LT(max_abs_diff(file_out.embedding, cli_out.embedding), 1e-12);
  EXPECT_LT(max_rel_diff(file_out.eigenvalues, cli_out.eigenvalues), 1e-12);
  EXPECT_EQ(file_out.report["kernel"].value("gamma", 0.0), 2.0);
  expect_eigenpairs_of(double_center(rbf_kernel(x, 2.0)), file_out, "config");

  // The command line wins over the file (both for k and for the output dir).
  RUN_OK(c, (std::vector<std::string>{"kpca", "--config", (dir / "run.ini").string(), "--components",
                                      "3", "--output-dir", overridden.string(), "--quiet"}),
         2);
  const KpcaOutput over = read_kpca_output(overridden, n, 3);
  EXPECT_EQ(over.report.value("components", -1), 3);
  ASSERT_EQ(over.eigenvalues.size(), 3u);
  EXPECT_LT(max_rel_diff({over.eigenvalues[0], over.eigenvalues[1]}, cli_out.eigenvalues), 1e-10);

  // An unknown key is an error, and nothing is written.
  const fs::path bad_out = dir / "bad_out";
  write_file(dir / "bad.ini", "input = " + (dir / "x.csv").string() + "\nfrobnicate = 1\noutput-dir = " +
                                  bad_out.string() + "\n");
  const RunResult bad = run_kembed({"kpca", "--config", (dir / "bad.ini").string()}, 2);
  EXPECT_FALSE(bad.timed_out()) << bad.describe();
  EXPECT_NE(bad.status, 0) << bad.describe();
  EXPECT_TRUE(bad.no_rank_succeeded()) << bad.describe();
  EXPECT_TRUE(contains(bad.err, "kembed: error:")) << bad.describe();
  EXPECT_TRUE(contains(bad.err, "frobnicate")) << bad.describe();
  EXPECT_FALSE(fs::exists(bad_out));
  EXPECT_TRUE(staging_leftovers(dir).empty());
}

// ---------------------------------------------------------------------------
// 5. Bad input: every rank fails, rank 0 says why, nothing is left behind
// ---------------------------------------------------------------------------

/// One bad invocation. In args and fragments, {D} is the data directory and
/// {O} the output directory of the run.
struct BadCase {
  std::string name;
  std::vector<std::string> args;       ///< after "kpca"
  std::vector<std::string> fragments;  ///< all must appear in stderr
};

std::ostream& operator<<(std::ostream& os, const BadCase& c) { return os << c.name; }

/// Writes the bad (and a few good) input files once; returns their directory.
const fs::path& bad_inputs_dir() {
  static const fs::path dir = [] {
    const fs::path d = scratch_dir("bad_inputs");
    write_csv(d / "good.csv", noisy_circles(10, 3), "x,y");
    // Line numbers are physical lines: the header and comment count.
    write_file(d / "ragged.csv", "x,y\n# a comment\n1,2\n3,4\n5\n6,7\n");
    write_file(d / "nonnum.csv", "1,2,3\n4,5,6\n7,abc,9\n");
    write_file(d / "nan.csv", "a,b\n1,2\n\nnan,3\n");
    write_file(d / "empty.csv", "");
    write_file(d / "header.csv", "x,y,z\n");
    fs::create_directories(d / "adir.csv");
    const Matrix ten = noisy_circles(10, 4);
    // The truncated_npy case below quotes these sizes: 128 + 160 bytes, cut to 228.
    if (npy_header(10, 2).size() != 128) ADD_FAILURE() << "npy header is not 128 bytes";
    write_file(d / "trunc.npy", (npy_header(10, 2) + raw_doubles(ten)).substr(0, 128 + 100));
    write_file(d / "size.bin", raw_doubles(ten));  // 10 x 2 -> 160 bytes
    write_file(d / "asym.csv", "1,0.5,0.25\n0.5,1,0.1\n0.3,0.1,1\n");
    write_file(d / "nonsquare.csv", "1,0,0,0\n0,1,0,0\n0,0,1,0\n");
    write_file(d / "regular_file", "not a directory\n");
    return d;
  }();
  return dir;
}

std::string substitute(std::string s, const std::string& data, const std::string& out) {
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"{D}", data}, {"{O}", out}})
    for (std::size_t at; (at = s.find(key)) != std::string::npos;) s.replace(at, key.size(), value);
  return s;
}

const std::vector<std::string> kGood = {"--input", "{D}/good.csv"};
const std::vector<std::string> kOut = {"--output-dir", "{O}"};

std::vector<std::string> with_input(const std::string& input, std::vector<std::string> rest = {}) {
  return concat(concat({"--input", input}, rest), kOut);
}
std::vector<std::string> good_with(std::vector<std::string> rest) { return concat(concat(kGood, rest), kOut); }

const std::vector<BadCase> kBadCases = {
    {"ragged_row", with_input("{D}/ragged.csv"), {"{D}/ragged.csv:5: expected 2 values, found 1"}},
    {"non_numeric", with_input("{D}/nonnum.csv"), {"{D}/nonnum.csv:3: column 2: not a number: 'abc'"}},
    {"nan_cell", with_input("{D}/nan.csv"), {"{D}/nan.csv:4: column 1: non-finite value 'nan'"}},
    {"empty_file", with_input("{D}/empty.csv"), {"{D}/empty.csv: no data rows"}},
    {"header_only", with_input("{D}/header.csv"), {"{D}/header.csv: header line but no data rows"}},
    {"missing_file", with_input("{D}/missing.csv"),
     {"cannot open '{D}/missing.csv': No such file or directory"}},
    {"directory_input", with_input("{D}/adir.csv"), {"cannot open '{D}/adir.csv': Is a directory"}},
    {"truncated_npy", with_input("{D}/trunc.npy"),
     {"{D}/trunc.npy: .npy file has 228 bytes", "needs 288 bytes", "truncated"}},
    {"bin_size_mismatch", with_input("{D}/size.bin", {"--rows", "10", "--cols", "3"}),
     {"{D}/size.bin: .bin file has 160 bytes, but --rows 10 --cols 3 needs 240 bytes"}},
    {"bin_without_rows", with_input("{D}/size.bin"), {"{D}/size.bin", "--rows and --cols"}},
    {"gamma_zero", good_with({"--gamma", "0"}), {"--gamma must be positive"}},
    {"gamma_negative", good_with({"--gamma", "-1"}), {"--gamma must be positive"}},
    {"gamma_negative_eq", good_with({"--gamma=-1"}), {"--gamma must be positive"}},
    {"degree_zero", good_with({"--kernel", "poly", "--degree", "0"}), {"--degree must be at least 1"}},
    {"block_size_zero", good_with({"--block-size", "0"}), {"--block-size must be at least 1"}},
    {"grid_3x3", good_with({"--grid", "3x3"}), {"process grid 3x3 does not match"}},
    {"grid_foo", good_with({"--grid", "foo"}), {"--grid expects PxQ", "'foo'"}},
    {"unknown_option", good_with({"--frobnicate"}), {"unrecognised option '--frobnicate'"}},
    {"unknown_kernel", good_with({"--kernel", "gauss"}), {"unknown kernel 'gauss'"}},
    {"components_zero", good_with({"--components", "0"}), {"--components must be at least 1"}},
    {"components_above_n", good_with({"--components", "11"}),
     {"--components 11 exceeds the number of samples (10)", "{D}/good.csv"}},
    {"asymmetric_precomputed", with_input("{D}/asym.csv", {"--kernel", "precomputed"}),
     {"{D}/asym.csv: precomputed kernel is not symmetric: entry ("}},
    {"nonsquare_precomputed", with_input("{D}/nonsquare.csv", {"--kernel", "precomputed"}),
     {"{D}/nonsquare.csv: a precomputed kernel must be square, found 3 x 4"}},
    {"output_is_file", concat(kGood, {"--output-dir", "{D}/regular_file"}),
     {"output directory '{D}/regular_file' exists and is not a directory"}},
    {"output_parent_is_a_file", concat(kGood, {"--output-dir", "{D}/regular_file/out"}),
     {"cannot create output directory '{D}/regular_file/out': '{D}/regular_file' is not a "
      "directory"}},
    {"single_with_evd",
     good_with({"--precision", "single", "--solver", "evd"}),
     {"--precision single needs --solver krylov (or auto)"}},
    {"single_tol_too_small",
     good_with({"--precision", "single", "--tol", "1e-9"}),
     {"--tol 1e-09 is below what single-precision storage can reach"}},
    {"single_precomputed",
     with_input("{D}/asym.csv", {"--kernel", "precomputed", "--precision", "single"}),
     {"--precision single needs the samples"}},
    {"precision_unknown",
     good_with({"--precision", "half"}),
     {"--precision expects double or single, got 'half'"}},
    {"storage_unknown", good_with({"--storage", "upper"}),
     {"--storage expects auto, full, lower or none, got 'upper'"}},
    {"storage_none_with_evd", good_with({"--storage", "none", "--solver", "evd"}),
     {"--storage none needs --solver krylov (or auto)"}},
    {"storage_none_precomputed",
     with_input("{D}/asym.csv", {"--kernel", "precomputed", "--storage", "none"}),
     {"--storage none recomputes the kernel from the samples"}},
    {"storage_lower_with_evd", good_with({"--storage", "lower", "--solver", "evd"}),
     {"--storage lower needs --solver krylov (or auto)"}},
    {"storage_lower_precomputed",
     with_input("{D}/asym.csv", {"--kernel", "precomputed", "--storage", "lower"}),
     {"--storage lower needs a kernel assembled in tiles"}},
    {"missing_config",
     concat(kGood, {"--config", "{D}/missing.ini", "--output-dir", "{O}"}),
     {"{D}/missing.ini"}},
};

class BadInput : public ::testing::TestWithParam<std::tuple<BadCase, int>> {};

TEST_P(BadInput, FailsCleanlyOnEveryRank) {
  const auto& [bad, np] = GetParam();
  const fs::path& data = bad_inputs_dir();
  const fs::path out = data / ("out_" + bad.name + "_np" + std::to_string(np));
  const std::string regular_before = read_file(data / "regular_file");
  std::vector<std::string> args = {"kpca"};
  for (const auto& a : bad.args) args.push_back(substitute(a, data.string(), out.string()));

  const RunResult r = run_kembed(args, np);
  EXPECT_FALSE(r.timed_out()) << "hang (killed by mpiexec --timeout):\n" << r.describe();
  EXPECT_NE(r.status, 0) << r.describe();
  EXPECT_TRUE(r.no_rank_succeeded()) << "some rank exited 0:\n" << r.describe();
  EXPECT_TRUE(contains(r.err, "kembed: error: ")) << r.describe();
  EXPECT_FALSE(contains(r.err, "internal error")) << r.describe();
  for (const auto& f : bad.fragments) {
    const std::string fragment = substitute(f, data.string(), out.string());
    EXPECT_TRUE(contains(r.err, fragment)) << "missing '" << fragment << "' in:\n" << r.describe();
  }
  // Nothing written: no result, no staging directory, bystanders untouched.
  EXPECT_FALSE(fs::exists(out)) << out;
  EXPECT_FALSE(fs::exists(data / "no_such_parent"));
  EXPECT_TRUE(fs::is_regular_file(data / "regular_file"));
  EXPECT_EQ(read_file(data / "regular_file"), regular_before);
  EXPECT_EQ(staging_leftovers(data), std::vector<std::string>{});
}

INSTANTIATE_TEST_SUITE_P(KpcaCli, BadInput,
                         ::testing::Combine(::testing::ValuesIn(kBadCases), ::testing::Values(1, 4)),
                         [](const ::testing::TestParamInfo<std::tuple<BadCase, int>>& info) {
                           return std::get<0>(info.param).name + "_np" +
                                  std::to_string(std::get<1>(info.param));
                         });

// ---------------------------------------------------------------------------
// 6. The result directory is replaced atomically
// ---------------------------------------------------------------------------

std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(dir))
    files[entry.path().filename().string()] = read_file(entry.path());
  return files;
}

TEST(KpcaCli, AtomicReplacement) {
  const fs::path dir = scratch_dir("atomic");
  const std::size_t n = 50;
  write_csv(dir / "x.csv", noisy_circles(n, 11), "");
  write_file(dir / "bad.csv", "1,2\n3,4\n5,oops\n");
  const fs::path out = dir / "result";
  auto args = [&](const std::string& input, int k) {
    return std::vector<std::string>{"kpca", "--input", (dir / input).string(), "--components",
                                    std::to_string(k), "--block-size", "16", "--output-dir",
                                    out.string(), "--quiet"};
  };

  // The earlier result has a file the later runs do not write (the pre-image
  // map of --fit-inverse): a full replacement removes it.
  RUN_OK(first, concat(args("x.csv", 2), {"--fit-inverse"}), 2);
  read_kpca_output(out, n, 2);
  ASSERT_TRUE(fs::exists(out / "model" / "inverse_weights.npy"));
  const auto before = snapshot(out);

  const RunResult failed = run_kembed(args("bad.csv", 3), 2);
  EXPECT_FALSE(failed.timed_out()) << failed.describe();
  EXPECT_NE(failed.status, 0) << failed.describe();
  EXPECT_TRUE(contains(failed.err, (dir / "bad.csv").string() + ":3: column 2: not a number"))
      << failed.describe();
  EXPECT_EQ(snapshot(out), before) << "a failed run changed the earlier result";
  EXPECT_EQ(staging_leftovers(dir), std::vector<std::string>{});

  RUN_OK(second, args("x.csv", 3), 2);
  EXPECT_FALSE(fs::exists(out / "model" / "inverse_weights.npy"))
      << "a file of the earlier result survived the replacement";
  const KpcaOutput replaced = read_kpca_output(out, n, 3);
  EXPECT_EQ(replaced.report.value("components", -1), 3);
  EXPECT_EQ(staging_leftovers(dir), std::vector<std::string>{});

  // Same with a trailing slash on the output path, as in the usage line.
  RUN_OK(third, args("x.csv", 1), 2);
  std::vector<std::string> slash_args = args("x.csv", 2);
  slash_args[8] = out.string() + "/";
  RUN_OK(fourth, slash_args, 2);
  read_kpca_output(out, n, 2);
  EXPECT_EQ(staging_leftovers(dir), std::vector<std::string>{});
}

// ---------------------------------------------------------------------------
// 7. --help and --version
// ---------------------------------------------------------------------------

TEST(KpcaCli, HelpAndVersion) {
  RUN_OK(help, (std::vector<std::string>{"kpca", "--help"}), 1);
  for (const char* option : {"--input", "--output-dir", "--kernel", "--gamma", "--degree", "--coef0",
                             "--components", "--solver", "--block-size", "--grid", "--config",
                             "--rows", "--cols", "--quiet"})
    EXPECT_TRUE(contains(help.out, option)) << "--help does not mention " << option << ":\n" << help.out;
  EXPECT_EQ(help.err, "");

  // Help is printed once (by rank 0), however many ranks run.
  RUN_OK(help2, (std::vector<std::string>{"kpca", "--help"}), 2);
  EXPECT_EQ(help2.out, help.out);

  RUN_OK(version, (std::vector<std::string>{"--version"}), 1);
  EXPECT_TRUE(contains(version.out, "kembed ")) << version.out;
  const RunResult plain = run_serial({"--version"});
  EXPECT_EQ(plain.status, 0) << plain.describe();
  EXPECT_EQ(plain.out, version.out);
}

}  // namespace
