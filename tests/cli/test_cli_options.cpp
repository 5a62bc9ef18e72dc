// Every option either works or is refused with the reason: the approximate
// tier honours --max-memory-per-rank, options a command would not read are
// refused on every rank before any work, and `kembed plan` validates a
// request with the run's own code before it prints anything, ending with its
// verdict.
#include "cli/cli_support.hpp"

namespace {

// The error every rank agreed on: no rank succeeded, the message holds
// `expected`, nothing was written.
void expect_refused(const std::vector<std::string>& args, const std::string& expected,
                    const fs::path& out) {
  for (int np : {1, 4}) {
    const RunResult r = run_kembed(args, np);
    EXPECT_FALSE(r.timed_out()) << r.describe();
    EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
    EXPECT_NE(r.status, 0) << r.describe();
    EXPECT_TRUE(contains(r.err, "kembed: error: " + expected)) << expected << "\n" << r.describe();
    EXPECT_FALSE(contains(r.err, "internal error")) << r.describe();
    EXPECT_FALSE(fs::exists(out)) << r.describe();
  }
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST(OptionsCli, ApproximateFitsHonourTheMemoryLimit) {
  const fs::path dir = scratch_dir("options_memory");
  const fs::path out = dir / "out";
  // 2^31 rows: the gathered embedding alone is 34 GB; 1K allows nothing.
  for (const char* rows : {"2000", "2147483648"}) {
    expect_refused({"kpca", "--generate", "gaussian", "--rows", rows, "--cols", "8", "-k", "2",
                    "--approx", "nystrom", "--landmarks", "50", "--max-memory-per-rank", "1K",
                    "-o", out.string()},
                   "not enough memory: this run needs about", out);
    expect_refused({"mds", "--generate", "gaussian", "--rows", rows, "--cols", "8", "-k", "2",
                    "--approx", "landmark", "--landmarks", "50", "--max-memory-per-rank", "1K",
                    "-o", out.string()},
                   "not enough memory: this run needs about", out);
  }
  // A limit that fits is the one run.json reports.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"kpca", "--approx", "nystrom"},
        std::vector<std::string>{"mds", "--approx", "landmark"}}) {
    std::vector<std::string> run = args;
    for (const char* a : {"--generate", "gaussian", "--rows", "300", "--cols", "4", "-k", "2",
                          "--landmarks", "20", "--max-memory-per-rank", "2G", "-o"})
      run.push_back(a);
    run.push_back((dir / args[0]).string());
    RUN_OK(fit, run, 2);
    const Json report = Json::parse(read_file(dir / args[0] / "run.json"));
    EXPECT_EQ(report["memory_limit_bytes_per_rank"].get<double>(), 2e9) << report.dump(1);
    EXPECT_LT(report["memory_estimate_bytes_per_rank"].get<double>(), 2e9);
  }
}

TEST(OptionsCli, OptionsACommandWouldNotReadAreRefused) {
  const fs::path dir = scratch_dir("options_refused");
  write_file(dir / "table.csv", "1,2,3\n4,5,7\n7,8,2\n");
  write_file(dir / "cat.csv", "a,b\nx,1\ny,2\nx,2\ny,1\nz,1\n");
  write_csv(dir / "x.csv", noisy_circles(40, 1), "x,y");
  const fs::path out = dir / "out";
  const std::string o = out.string(), x = (dir / "x.csv").string();
  const std::vector<std::string> nystrom = {"kpca", "--input", x, "-k", "2", "--approx",
                                            "nystrom", "--landmarks", "10", "-o", o};
  const std::vector<std::string> landmark = {"mds", "--input", x, "-k", "2", "--approx",
                                             "landmark", "--landmarks", "10", "-o", o};
  const auto with = [](std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"ca", "--input", (dir / "table.csv").string(), "-k", "1", "--output-format", "npy", "-o",
        o},
       "--output-format npy: ca writes inertias.csv, rows.csv and columns.csv as labelled CSV "
       "only (leave out --output-format)"},
      {{"mca", "--input", (dir / "cat.csv").string(), "-k", "1", "--output-format", "npy", "-o",
        o},
       "--output-format npy: mca writes inertias.csv, rows.csv and columns.csv as labelled CSV "
       "only"},
      {with(nystrom, {"--solver", "krylov"}),
       "--solver applies to the exact n x n decomposition; --approx nystrom solves a landmarks "
       "x landmarks problem with LAPACK on one rank (leave it out)"},
      {with(nystrom, {"--tol", "1e-6"}), "--tol applies to the exact n x n decomposition"},
      {with(nystrom, {"--block-size", "16"}),
       "--block-size applies to the exact n x n decomposition"},
      {with(nystrom, {"--storage", "full"}), "--storage applies to the exact n x n decomposition"},
      {with(landmark, {"--solver", "evd"}),
       "--solver applies to the exact n x n decomposition; --approx landmark"},
      {with(landmark, {"--grid", "1x1"}), "--grid applies to the exact n x n decomposition"},
      {{"kpca", "--input", x, "--solver", "evd", "--tol", "1e-6", "-o", o},
       "--tol applies to the krylov solver; --solver evd computes its eigenpairs to working "
       "precision (leave out --tol, or use --solver krylov)"},
      {{"pca", "--input", x, "--solver", "evr", "--tol", "1e-6", "-o", o},
       "--tol applies to the krylov solver; --solver evr"},
      {{"kpca", "--input", x, "--kernel", "linear", "--gamma", "0.5", "-o", o},
       "--gamma applies to the rbf, laplacian, poly and sigmoid kernels, not to --kernel linear"},
      {{"kpca", "--input", x, "--degree", "2", "-o", o},
       "--degree applies to the poly kernel, not to --kernel rbf"},
      {{"kpca", "--input", x, "--kernel", "laplacian", "--coef0", "2", "-o", o},
       "--coef0 applies to the poly and sigmoid kernels, not to --kernel laplacian"},
      {{"transform", "--model", (dir / "no_model").string(), "--input", x, "--seed", "3", "-o",
        o},
       "--seed seeds --generate, and kembed transform has nothing else to seed (leave it out)"},
      {{"kpca", "--input", x, "--alpha", "0.5", "-o", o},
       "--alpha applies to --fit-inverse (the regularization of the pre-image map)"},
  };
  for (const auto& [args, expected] : cases) expect_refused(args, expected, out);
}

TEST(OptionsCli, PlansValidateAsTheRunDoesAndEndWithTheVerdict) {
  const fs::path dir = scratch_dir("options_plans");
  write_csv(dir / "x.csv", noisy_circles(10, 1), "x,y");
  const fs::path out = dir / "out";
  // Refused by the plan, before it prints anything, as by the run.
  const struct {
    std::vector<std::string> plan, run;
    std::string expected;
  } refused[] = {
      {{"plan", "isomap", "--rows", "10", "--cols", "2", "--neighbors", "10"},
       {"isomap", "--input", (dir / "x.csv").string(), "--neighbors", "10", "-o", out.string()},
       "--neighbors 10 must be below the number of points (10)"},
      {{"plan", "spectral", "--rows", "10", "--cols", "2", "--affinity", "knn", "--neighbors",
        "11"},
       {"spectral", "--input", (dir / "x.csv").string(), "--affinity", "knn", "--neighbors", "11",
        "-o", out.string()},
       "--neighbors 11 (which counts the point itself, as scikit-learn) must be between 2 and "
       "the number of points (10)"},
      {{"plan", "kpca", "--rows", "10", "--cols", "2", "--approx", "nystrom", "--landmarks", "5",
        "--panel-rows", "0"},
       {"kpca", "--input", (dir / "x.csv").string(), "--approx", "nystrom", "--landmarks", "5",
        "--panel-rows", "0", "-o", out.string()},
       "--panel-rows must be at least 1, got 0"},
      {{"plan", "mds", "--rows", "10", "--cols", "2", "--approx", "landmark", "--landmarks", "2"},
       {"mds", "--input", (dir / "x.csv").string(), "--approx", "landmark", "--landmarks", "2",
        "-o", out.string()},
       "--landmarks 2 is too few for --components 2"},
  };
  for (const auto& c : refused) {
    const RunResult plan = run_serial(c.plan);
    EXPECT_NE(plan.status, 0) << plan.describe();
    EXPECT_EQ(plan.out, "") << plan.describe();
    EXPECT_TRUE(contains(plan.err, c.expected)) << c.expected << "\n" << plan.describe();
    const RunResult run = run_kembed(c.run, 1);
    EXPECT_TRUE(run.no_rank_succeeded()) << run.describe();
    EXPECT_TRUE(contains(run.err, c.expected)) << c.expected << "\n" << run.describe();
  }
  // Options a plan would not read.
  const RunResult route = run_serial({"plan", "kpca", "--rows", "100", "--route", "gram"});
  EXPECT_NE(route.status, 0);
  EXPECT_TRUE(contains(route.err, "--route applies to pca, not to kembed plan kpca")) << route.err;

  // Every plan ends with its verdict, whatever it printed before.
  const struct {
    std::vector<std::string> args;
    std::string last;
  } verdicts[] = {
      {{"plan", "mds", "--approx", "landmark", "--rows", "1000000000000000", "--cols", "3",
        "--landmarks", "100", "--max-memory-per-rank", "1G"},
       "no number of ranks would fit"},
      {{"plan", "mds", "--approx", "landmark", "--rows", "100000", "--cols", "3", "--landmarks",
        "100", "--max-memory-per-rank", "1G"},
       "available per rank: 1.0 GB (fits)"},
      {{"plan", "kpca", "--approx", "nystrom", "--rows", "100000", "--cols", "8", "--landmarks",
        "200", "--max-memory-per-rank", "1K"},
       "ranks would fit"},
      {{"plan", "kpca", "--approx", "nystrom", "--rows", "1000", "--cols", "8", "--landmarks",
        "200", "--panel-rows", "100000", "--max-memory-per-rank", "1G"},
       "available per rank: 1.0 GB (fits)"},
      {{"plan", "isomap", "--rows", "100", "--cols", "3", "--ranks", "64",
        "--max-memory-per-rank", "1G"},
       "available per rank: 1.0 GB (fits)"},
  };
  for (const auto& v : verdicts) {
    const RunResult r = run_serial(v.args);
    EXPECT_EQ(r.status, 0) << r.describe();
    const auto all = lines(r.out);
    ASSERT_FALSE(all.empty()) << r.describe();
    EXPECT_TRUE(contains(all.back(), v.last)) << v.last << "\n" << r.describe();
  }
  // The panel never counts more rows than a rank holds: 100000 rows asked
  // of 1000 cost what 1000 do.
  const RunResult big = run_serial({"plan", "kpca", "--approx", "nystrom", "--rows", "1000",
                                    "--cols", "8", "--landmarks", "200", "--panel-rows", "100000"});
  const RunResult whole = run_serial({"plan", "kpca", "--approx", "nystrom", "--rows", "1000",
                                      "--cols", "8", "--landmarks", "200", "--panel-rows", "1000"});
  const auto total = [](const std::string& text) {
    for (const auto& line : lines(text))
      if (contains(line, "  total ")) return line;
    return std::string();
  };
  EXPECT_EQ(total(big.out), total(whole.out)) << big.out << "\n---\n" << whole.out;
  EXPECT_NE(total(big.out), "") << big.out;
}
