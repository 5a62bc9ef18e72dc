// Failure of one rank, killed runs and determinism, end to end under mpiexec:
// a fault injected in any phase on one rank reaches every rank as an error
// within the time limit; a rank killed outright ends the job; a run killed
// by SIGTERM leaves the earlier result intact and its staging directory is
// removed by the next run; repeated runs give bit-identical files.
#include <csignal>
#include <cstdlib>
#include <thread>

#include "cli/cli_support.hpp"

namespace {

// Sets an environment variable for the runs inside one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { ::unsetenv(name_); }

 private:
  const char* name_;
};

std::vector<std::string> kpca_args(const fs::path& data, const fs::path& out) {
  return {"kpca", "--input", data.string(), "--kernel", "rbf", "--gamma", "0.5", "--components",
          "2", "--block-size", "8", "--output-dir", out.string()};
}

}  // namespace

TEST(Reliability, FaultInEveryPhaseOnOneRankFailsEveryRank) {
  const fs::path dir = scratch_dir("faults");
  write_csv(dir / "x.csv", noisy_circles(60, 1), "x,y");
  const fs::path out = dir / "out";
  RUN_OK(good, kpca_args(dir / "x.csv", out), 2);
  const auto before = read_file(out / "embedding.csv");
  for (const std::string phase :
       {"read", "distribute", "assemble", "center", "solve", "project", "residual", "write"})
    for (int np : {2, 4}) {
      const int victim = np - 1;
      ScopedEnv env("KEMBED_FAULT_INJECT", phase + ":" + std::to_string(victim));
      const RunResult r = run_kembed(kpca_args(dir / "x.csv", out), np);
      EXPECT_FALSE(r.timed_out()) << r.describe();
      EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
      // A rank either reported exit status 1 or was ended by mpiexec after
      // another rank's non-zero exit (-1: no report); none succeeded.
      for (int s : r.rank_status)
        EXPECT_TRUE(s == 1 || s == -1) << phase << " np " << np << "\n" << r.describe();
      EXPECT_TRUE(contains(r.err, "kembed: error: fault injected in phase '" + phase + "' on rank " +
                                      std::to_string(victim)))
          << r.describe();
      EXPECT_EQ(read_file(out / "embedding.csv"), before) << phase;
      EXPECT_TRUE(staging_leftovers(dir).empty()) << phase;
    }
}

TEST(Reliability, RankKilledOutrightEndsTheJob) {
  const fs::path dir = scratch_dir("sigkill");
  write_csv(dir / "x.csv", noisy_circles(60, 2), "x,y");
  const fs::path out = dir / "out";
  RUN_OK(good, kpca_args(dir / "x.csv", out), 2);
  const auto before = read_file(out / "embedding.csv");
  for (int np : {2, 4}) {
    ScopedEnv env("KEMBED_FAULT_INJECT", "solve:1:kill");
    const RunResult r = run_kembed(kpca_args(dir / "x.csv", out), np);
    EXPECT_FALSE(r.timed_out()) << r.describe();  // mpiexec ended it, no hang
    EXPECT_NE(r.status, 0) << r.describe();
    EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
    EXPECT_EQ(read_file(out / "embedding.csv"), before);
  }
  // The killed run's rank 0 may have left a staging directory only if it
  // had reached the write phase; either way the next run leaves none.
  RUN_OK(again, kpca_args(dir / "x.csv", out), 2);
  EXPECT_TRUE(staging_leftovers(dir).empty());
}

TEST(Reliability, SigtermMidRunKeepsEarlierResultAndNextRunCleansUp) {
  const fs::path dir = scratch_dir("sigterm");
  write_csv(dir / "x.csv", noisy_circles(60, 3), "x,y");
  const fs::path out = dir / "out";
  RUN_OK(good, kpca_args(dir / "x.csv", out), 2);
  const auto before = read_file(out / "embedding.csv");
  // A stale staging directory as a killed run leaves it (its pid is gone).
  const fs::path stale = dir / ".out.tmp-999999999";
  fs::create_directories(stale);
  write_file(stale / "embedding.csv", "partial");
  // A larger problem under a background mpiexec, terminated mid-solve.
  const Matrix big = noisy_circles(3500, 4);
  write_csv(dir / "big.csv", big, "x,y");
  std::string command = sh_quote(MPIEXEC) + " --oversubscribe --timeout 60 -np 2 " +
                        sh_quote(KEMBED_BINARY);
  for (const auto& a : kpca_args(dir / "big.csv", out)) command += " " + sh_quote(a);
  command += " >/dev/null 2>&1 & echo $! > " + sh_quote((dir / "pid").string());
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const pid_t pid = static_cast<pid_t>(std::stol(read_file(dir / "pid")));
  ::kill(pid, SIGTERM);
  for (int i = 0; i < 100 && ::kill(pid, 0) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_NE(::kill(pid, 0), 0) << "mpiexec still running 10 s after SIGTERM";
  EXPECT_EQ(read_file(out / "embedding.csv"), before);
  RUN_OK(again, kpca_args(dir / "x.csv", out), 2);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(staging_leftovers(dir).empty());
}

TEST(Reliability, RepeatedRunsAreBitIdentical) {
  // pdsyevd on a 1x3 grid is reproducible only to round-off (ScaLAPACK's
  // divide and conquer); the other solvers and grids are bit-reproducible.
  const fs::path dir = scratch_dir("determinism");
  write_csv(dir / "x.csv", noisy_circles(80, 5), "x,y");
  struct Case {
    int np;
    std::string solver;
  };
  for (const Case& c : std::vector<Case>{{1, "evd"}, {2, "evd"}, {4, "evd"}, {3, "evr"},
                                         {3, "krylov"}, {2, "elpa"}}) {
    auto args = concat(kpca_args(dir / "x.csv", dir / "a"), {"--solver", c.solver});
    RUN_OK(a, args, c.np);
    args = concat(kpca_args(dir / "x.csv", dir / "b"), {"--solver", c.solver});
    RUN_OK(b, args, c.np);
    EXPECT_EQ(read_file(dir / "a" / "embedding.csv"), read_file(dir / "b" / "embedding.csv"))
        << c.solver << " np " << c.np;
    EXPECT_EQ(read_file(dir / "a" / "eigenvalues.csv"), read_file(dir / "b" / "eigenvalues.csv"))
        << c.solver << " np " << c.np;
  }
}

TEST(MemoryPlan, EstimateIsWithin25PercentOfTheMeasuredPeak) {
  const fs::path dir = scratch_dir("memory");
  for (const std::string rows : {"2500", "4000"})
    for (const std::string solver : {"evd", "krylov", "elpa"}) {
      RUN_OK(r,
             std::vector<std::string>({"kpca", "--generate", "gaussian", "--rows", rows, "--cols",
                                       "32", "--components", "5", "--solver", solver,
                                       "--output-dir", (dir / "out").string()}),
             2);
      const Json report = Json::parse(read_file(dir / "out" / "run.json"));
      const double estimate = report["memory_estimate_bytes_per_rank"].get<double>();
      const double peak = report["peak_memory_bytes_per_rank_max"].get<double>();
      EXPECT_NEAR(estimate / peak, 1.0, 0.25) << rows << " " << solver << ": estimate "
                                              << estimate << ", peak " << peak;
    }
}

TEST(MemoryPlan, TooLittleMemoryIsAClearErrorBeforeAnyWork) {
  const fs::path dir = scratch_dir("memory_guard");
  for (int np : {1, 4}) {
    const RunResult r = run_kembed({"kpca", "--generate", "gaussian", "--rows", "3000", "--cols",
                                    "16", "--max-memory-per-rank", "60M", "--output-dir",
                                    (dir / "out").string()},
                                   np);
    EXPECT_FALSE(r.timed_out()) << r.describe();
    EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
    EXPECT_TRUE(contains(r.err, "kembed: error: not enough memory: this run needs about"))
        << r.describe();
    EXPECT_TRUE(contains(r.err, "ranks would fit")) << r.describe();
    // On 4 ranks krylov (no n x n eigenvector matrix) fits in 60 MB; on 1 it does not.
    EXPECT_EQ(contains(r.err, "--solver krylov would fit"), np == 4) << r.describe();
    EXPECT_FALSE(fs::exists(dir / "out"));
  }
  const RunResult bad = run_kembed({"kpca", "--generate", "gaussian", "--rows", "10",
                                    "--max-memory-per-rank", "lots", "--output-dir",
                                    (dir / "out").string()},
                                   1);
  EXPECT_TRUE(contains(bad.err, "cannot read the memory size 'lots'")) << bad.describe();
}

TEST(MemoryPlan, DryRunPrintsThePlanAndComputesNothing) {
  const fs::path dir = scratch_dir("dry_run");
  RUN_OK(r,
         std::vector<std::string>({"kpca", "--generate", "gaussian", "--rows", "40000", "--cols",
                                   "64", "--dry-run", "--output-dir", (dir / "out").string()}),
         2);
  // 40000^2 doubles over a 1x2 grid: 6.4 GB of kernel matrix on each rank.
  EXPECT_TRUE(contains(r.out, "n x n matrix (local block): 6.4 GB")) << r.describe();
  EXPECT_TRUE(contains(r.out, "1x2 grid")) << r.describe();
  EXPECT_TRUE(contains(r.out, "per rank")) << r.describe();
  EXPECT_FALSE(fs::exists(dir / "out"));
}
