// Limits that the plan and the run must agree on, and data too large to
// compute with: option values at the integer limits, block sizes far beyond
// the matrix, PCA of values near 1e200.
#include <sys/resource.h>

#include "cli/cli_support.hpp"

namespace {

// Every process these tests start (mpiexec and the ranks) inherits a 4 GB
// address-space limit, so a run whose plan is wrong fails with an allocation
// error here instead of exhausting the machine.
void limit_address_space() {
  static const bool done = [] {
    const rlim_t limit = rlim_t{4} << 30;
    struct rlimit r {};
    if (getrlimit(RLIMIT_AS, &r) == 0 && (r.rlim_max == RLIM_INFINITY || r.rlim_max > limit)) {
      r.rlim_cur = limit;
      setrlimit(RLIMIT_AS, &r);
    }
    return true;
  }();
  (void)done;
}

void expect_clean_exit(const RunResult& r) {
  EXPECT_NE(r.status, -1) << "killed by a signal:\n" << r.describe();
  EXPECT_FALSE(contains(r.err, "internal error")) << r.describe();
  EXPECT_FALSE(contains(r.err, "Floating point exception")) << r.describe();
}

}  // namespace

TEST(Limits, PlanHandlesExtremeOptionValues) {
  const RunResult ranks = run_serial({"plan", "kpca", "--rows", "1000", "--cols", "10", "--ranks",
                                      "2147483647", "--max-memory-per-rank", "1G"});
  expect_clean_exit(ranks);
  EXPECT_EQ(ranks.status, 0) << ranks.describe();
  EXPECT_TRUE(contains(ranks.out, "2147483647 ranks on a 1x2147483647 grid")) << ranks.out;
  // 1000 / 64 -> 16 x 16 blocks on a 1 x P grid: 16 ranks hold them.
  EXPECT_TRUE(contains(ranks.out, "only 16 of the 2147483647 ranks")) << ranks.out;
  for (const auto& bad : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"plan", "kpca", "--rows", "9223372036854775807", "--cols", "10"}, "32-bit limit"},
           {{"plan", "pca", "--rows", "1000", "--cols", "99999999999"}, "32-bit limit"},
           {{"plan", "kpca", "--rows", "1000", "--cols", "10", "-k", "2147483647"},
            "--components 2147483647 exceeds"}}) {
    const RunResult r = run_serial(bad.first);
    expect_clean_exit(r);
    EXPECT_EQ(r.status, 1) << r.describe();
    EXPECT_TRUE(contains(r.err, bad.second)) << r.describe();
  }
}

// What the dry run says must be what the run does: "(fits)" means the run
// completes with accurate eigenpairs within the memory given.
void expect_plan_matches_run(const std::vector<std::string>& args, int np, const fs::path& out) {
  limit_address_space();
  const RunResult dry = run_kembed(concat(args, {"--dry-run", "--output-dir", out.string()}), np);
  expect_clean_exit(dry);
  ASSERT_EQ(dry.status, 0) << dry.describe();
  const bool fits = contains(dry.out, "(fits)");
  const RunResult run = run_kembed(concat(args, {"--output-dir", out.string()}), np);
  expect_clean_exit(run);
  if (fits) {
    ASSERT_TRUE(run.all_ranks_succeeded()) << "the plan said it fits:\n"
                                           << dry.out << run.describe();
    const Json report = Json::parse(read_file(out / "run.json"));
    ASSERT_FALSE(report["relative_residuals"].empty()) << report.dump();
    for (const auto& r : report["relative_residuals"]) EXPECT_LT(r.get<double>(), 1e-10) << dry.out;
  } else {
    EXPECT_TRUE(run.no_rank_succeeded()) << run.describe();
    EXPECT_TRUE(contains(run.err, "kembed: error: not enough memory") ||
                contains(run.err, "kembed: error: block size"))
        << run.describe();
    EXPECT_FALSE(fs::exists(out));
  }
}

TEST(Limits, BlockSizeFarBeyondTheMatrixIsPlannedAsItRuns) {
  const fs::path dir = scratch_dir("block_size");
  write_csv(dir / "x.csv", noisy_circles(200, 3), "");
  expect_plan_matches_run({"kpca", "--input", (dir / "x.csv").string(), "--block-size", "100000",
                           "--solver", "evd", "--max-memory-per-rank", "2G"},
                          2, dir / "small");
  // (auto is krylov here; evd with one 3000 x 3000 block takes over a minute:
  // its plan, 674 MB per rank, was checked by hand against a 675 MB peak.)
  expect_plan_matches_run({"kpca", "--generate", "gaussian", "--rows", "3000", "--cols", "8",
                           "--block-size", "46340", "--max-memory-per-rank", "4G"},
                          2, dir / "n3000");
}

TEST(Limits, PcaOfHugeValuesIsTooLarge) {
  const fs::path dir = scratch_dir("pca_huge");
  Matrix x = skewed_cloud(40, 2);
  for (double& v : x.v) v *= 1e200;
  write_csv(dir / "x.csv", x, "");
  for (int np : {1, 4}) {
    const RunResult r = run_kembed(
        {"pca", "--input", (dir / "x.csv").string(), "-k", "2", "--output-dir",
         (dir / "out").string()},
        np);
    expect_clean_exit(r);
    EXPECT_FALSE(r.timed_out()) << r.describe();
    // (mpiexec may end ranks that have not exited yet: they report nothing.)
    EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
    EXPECT_TRUE(contains(r.err, "row 1, column 1 (1-based)")) << r.describe();
    EXPECT_TRUE(contains(r.err, "too large")) << r.describe();
    EXPECT_FALSE(fs::exists(dir / "out"));
  }
}
