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

std::vector<std::string> reliability_kpca_args(const fs::path& data, const fs::path& out) {
  return {"kpca", "--input", data.string(), "--kernel", "rbf", "--gamma", "0.5", "--components",
          "2", "--block-size", "8", "--output-dir", out.string()};
}

}  // namespace

TEST(Reliability, FaultInEveryPhaseOnOneRankFailsEveryRank) {
  const fs::path dir = scratch_dir("faults");
  write_csv(dir / "x.csv", noisy_circles(60, 1), "x,y");
  const fs::path out = dir / "out";
  RUN_OK(good, reliability_kpca_args(dir / "x.csv", out), 2);
  const auto before = read_file(out / "embedding.csv");
  for (const std::string phase :
       {"read", "distribute", "assemble", "center", "solve", "project", "residual", "write"})
    for (int np : {2, 4}) {
      const int victim = np - 1;
      ScopedEnv env("KEMBED_FAULT_INJECT", phase + ":" + std::to_string(victim));
      const RunResult r = run_kembed(reliability_kpca_args(dir / "x.csv", out), np);
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
  RUN_OK(good, reliability_kpca_args(dir / "x.csv", out), 2);
  const auto before = read_file(out / "embedding.csv");
  for (int np : {2, 4}) {
    ScopedEnv env("KEMBED_FAULT_INJECT", "solve:1:kill");
    const RunResult r = run_kembed(reliability_kpca_args(dir / "x.csv", out), np);
    EXPECT_FALSE(r.timed_out()) << r.describe();  // mpiexec ended it, no hang
    EXPECT_NE(r.status, 0) << r.describe();
    EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
    EXPECT_EQ(read_file(out / "embedding.csv"), before);
  }
  // The killed run's rank 0 may have left a staging directory only if it
  // had reached the write phase; either way the next run leaves none.
  RUN_OK(again, reliability_kpca_args(dir / "x.csv", out), 2);
  EXPECT_TRUE(staging_leftovers(dir).empty());
}

TEST(Reliability, SigtermMidRunKeepsEarlierResultAndNextRunCleansUp) {
  const fs::path dir = scratch_dir("sigterm");
  write_csv(dir / "x.csv", noisy_circles(60, 3), "x,y");
  const fs::path out = dir / "out";
  RUN_OK(good, reliability_kpca_args(dir / "x.csv", out), 2);
  const auto before = read_file(out / "embedding.csv");
  // A stale staging directory as a killed run leaves it: marked as kembed's,
  // on this host, by a process that is gone.
  const fs::path stale = dir / ".kembed-tmp-999999999";
  fs::create_directories(stale);
  write_file(stale / "embedding.csv", "partial");
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  write_file(stale / ".kembed-staging", std::string(host) + " 999999999\n");
  // One that is not marked is not kembed's, whatever its name: kept.
  const fs::path foreign = dir / ".kembed-tmp-999999998";
  fs::create_directories(foreign);
  write_file(foreign / "data.txt", "a user's file");
  // A larger problem under a background mpiexec, terminated mid-solve
  // (evd: seconds of solve at this size; auto would pick krylov, done at once).
  const Matrix big = noisy_circles(3500, 4);
  write_csv(dir / "big.csv", big, "x,y");
  std::string command = sh_quote(MPIEXEC) + " --oversubscribe --timeout 60 -np 2 " +
                        sh_quote(KEMBED_BINARY);
  for (const auto& a : concat(reliability_kpca_args(dir / "big.csv", out), {"--solver", "evd"}))
    command += " " + sh_quote(a);
  command += " >/dev/null 2>&1 & echo $! > " + sh_quote((dir / "pid").string());
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const pid_t pid = static_cast<pid_t>(std::stol(read_file(dir / "pid")));
  ::kill(pid, SIGTERM);
  for (int i = 0; i < 100 && ::kill(pid, 0) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_NE(::kill(pid, 0), 0) << "mpiexec still running 10 s after SIGTERM";
  EXPECT_EQ(read_file(out / "embedding.csv"), before);
  RUN_OK(again, reliability_kpca_args(dir / "x.csv", out), 2);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_EQ(read_file(foreign / "data.txt"), "a user's file");
  fs::remove_all(foreign);
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
    auto args = concat(reliability_kpca_args(dir / "x.csv", dir / "a"), {"--solver", c.solver});
    RUN_OK(a, args, c.np);
    args = concat(reliability_kpca_args(dir / "x.csv", dir / "b"), {"--solver", c.solver});
    RUN_OK(b, args, c.np);
    EXPECT_EQ(read_file(dir / "a" / "embedding.csv"), read_file(dir / "b" / "embedding.csv"))
        << c.solver << " np " << c.np;
    EXPECT_EQ(read_file(dir / "a" / "eigenvalues.csv"), read_file(dir / "b" / "eigenvalues.csv"))
        << c.solver << " np " << c.np;
  }
}

TEST(MemoryPlan, EstimateIsWithin25PercentOfTheMeasuredPeak) {
  const fs::path dir = scratch_dir("memory");
  for (const std::string rows : {"2000", "3000"})
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
                                    "16", "--solver", "evd", "--max-memory-per-rank", "60M",
                                    "--output-dir", (dir / "out").string()},
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
  // 40000^2 doubles over a 1x2 grid: 6.4 GB of kernel matrix on each rank;
  // krylov (auto's choice here) keeps the blocks on and below the diagonal,
  // about half of it.
  EXPECT_TRUE(contains(r.out, "n x n matrix (blocks on and below the diagonal): 3.2 GB"))
      << r.describe();
  EXPECT_TRUE(contains(r.out, "1x2 grid")) << r.describe();
  EXPECT_TRUE(contains(r.out, "per rank")) << r.describe();
  EXPECT_FALSE(fs::exists(dir / "out"));
  RUN_OK(full,
         std::vector<std::string>({"kpca", "--generate", "gaussian", "--rows", "40000", "--cols",
                                   "64", "--storage", "full", "--dry-run", "--output-dir",
                                   (dir / "out").string()}),
         2);
  EXPECT_TRUE(contains(full.out, "n x n matrix (local block): 6.4 GB")) << full.describe();
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(MemoryPlan, PcaHasTheGuardAndTheDryRun) {
  const fs::path dir = scratch_dir("pca_memory");
  const std::vector<std::string> gram = {"pca", "--generate", "gaussian", "--rows", "4000",
                                         "--cols", "20", "--route", "gram", "--solver", "evd"};
  for (int np : {1, 4}) {
    const RunResult r = run_kembed(
        concat(gram, {"--max-memory-per-rank", "60M", "--output-dir", (dir / "out").string()}), np);
    EXPECT_FALSE(r.timed_out()) << r.describe();
    EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
    EXPECT_TRUE(contains(r.err, "kembed: error: not enough memory: this run needs about"))
        << r.describe();
    EXPECT_TRUE(contains(r.err, "data matrix (local block)")) << r.describe();
    EXPECT_FALSE(fs::exists(dir / "out"));
  }
  RUN_OK(dry, concat(gram, {"--dry-run", "--output-dir", (dir / "out").string()}), 2);
  // The 4000 x 4000 Gram matrix on a 1x2 grid: 4000 x 2016 local doubles per rank.
  EXPECT_TRUE(contains(dry.out, "4000 x 4000 matrix from 4000 x 20 data")) << dry.describe();
  EXPECT_TRUE(contains(dry.out, "n x n matrix (local block): 64.5 MB")) << dry.describe();
  EXPECT_FALSE(fs::exists(dir / "out"));
  // The estimate is what the fit records, within 25% of its measured peak.
  RUN_OK(fit,
         std::vector<std::string>({"pca", "--generate", "gaussian", "--rows", "2500", "--cols",
                                   "20", "--route", "gram", "--solver", "evd", "--components",
                                   "5", "--output-dir", (dir / "fit").string()}),
         2);
  const Json report = Json::parse(read_file(dir / "fit" / "run.json"));
  const double estimate = report["memory_estimate_bytes_per_rank"].get<double>();
  const double peak = report["peak_memory_bytes_per_rank_max"].get<double>();
  EXPECT_NEAR(estimate / peak, 1.0, 0.25) << "estimate " << estimate << ", peak " << peak;
}

TEST(MemoryPlan, PlanCommandMatchesTheDryRunOfTheRealCommand) {
  const fs::path dir = scratch_dir("plan");
  // The plan for 2 ranks, computed by one process, is the dry run's plan on 2 ranks.
  const RunResult plan = run_serial({"plan", "kpca", "--rows", "40000", "--cols", "64",
                                     "--components", "10", "--ranks", "2", "--solver", "evd",
                                     "--max-memory-per-rank", "100G"});
  EXPECT_EQ(plan.status, 0) << plan.err;
  RUN_OK(dry,
         std::vector<std::string>({"kpca", "--generate", "gaussian", "--rows", "40000", "--cols",
                                   "64", "--components", "10", "--solver", "evd", "--dry-run",
                                   "--max-memory-per-rank", "100G", "--output-dir",
                                   (dir / "out").string()}),
         2);
  // The time estimate's first and last lines carry rates measured by each
  // run (tests/cli/test_cli_kpca checks them); the rest is the same plan.
  auto body = [](const std::string& text) {
    std::string kept;
    std::size_t at = text.find('\n') + 1;
    while (at < text.size()) {
      const std::size_t end = std::min(text.find('\n', at), text.size());
      const std::string line = text.substr(at, end - at);
      if (line.rfind("estimated time of the busiest rank: ", 0) != 0 &&
          line.rfind("  rates measured here: ", 0) != 0)
        kept += line + "\n";
      at = end + 1;
    }
    return kept;
  };
  EXPECT_EQ(body(plan.out), body(dry.out)) << plan.out << "\n---\n" << dry.out;
  EXPECT_TRUE(contains(plan.out, "kembed plan kpca: 40000 x 40000 matrix")) << plan.out;
  EXPECT_TRUE(contains(plan.out, "2 ranks on a 1x2 grid")) << plan.out;
  EXPECT_TRUE(contains(plan.out, "(fits)")) << plan.out;
  // The same with auto (krylov in lower blocks), in double and single.
  for (const char* precision : {"double", "single"}) {
    const RunResult lower = run_serial({"plan", "kpca", "--rows", "40000", "--cols", "64",
                                        "--components", "10", "--ranks", "2", "--precision",
                                        precision, "--max-memory-per-rank", "100G"});
    RUN_OK(lower_dry,
           std::vector<std::string>({"kpca", "--generate", "gaussian", "--rows", "40000", "--cols",
                                     "64", "--components", "10", "--precision", precision,
                                     "--dry-run", "--max-memory-per-rank", "100G",
                                     "--output-dir", (dir / "out").string()}),
           2);
    EXPECT_EQ(body(lower.out), body(lower_dry.out)) << lower.out << "\n---\n" << lower_dry.out;
    EXPECT_TRUE(contains(lower.out, "blocks on and below the diagonal")) << lower.out;
  }

  // Too little memory: the plan says so and what would fit (and exits 0).
  const RunResult tight = run_serial({"plan", "kpca", "--rows", "40000", "--cols", "64",
                                      "--ranks", "2", "--solver", "evd",
                                      "--max-memory-per-rank", "12G"});
  EXPECT_EQ(tight.status, 0) << tight.err;
  EXPECT_TRUE(contains(tight.out, "not enough memory")) << tight.out;
  EXPECT_TRUE(contains(tight.out, "8 ranks would fit")) << tight.out;
  EXPECT_TRUE(contains(tight.out, "--solver krylov would fit")) << tight.out;

  // auto on this shape is krylov; the shape can come from a file's header.
  write_file(dir / "x.npy", npy_header(3000, 7) + raw_doubles(zeros(3000, 7)));
  const RunResult from_file = run_serial({"plan", "pca", "--input", (dir / "x.npy").string(),
                                          "--route", "gram", "--ranks", "4", "-k", "3"});
  EXPECT_EQ(from_file.status, 0) << from_file.err;
  EXPECT_TRUE(contains(from_file.out, "3000 x 3000 matrix from 3000 x 7 data")) << from_file.out;
  // The Gram route's data matrix is laid out in whole columns: 1 x P.
  EXPECT_TRUE(contains(from_file.out, "solver auto (krylov), 4 ranks on a 1x4 grid"))
      << from_file.out;
  const RunResult mds = run_serial({"plan", "mds", "--rows", "5000", "--ranks", "3"});
  EXPECT_TRUE(contains(mds.out, "5000 x 5000 matrix, k = 2")) << mds.out;

  for (const auto& bad : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"plan", "svd", "--rows", "10"}, "unknown method 'svd'"},
           {{"plan", "kpca"}, "give --rows N"},
           {{"plan", "kpca", "--rows", "10", "--ranks", "4", "--grid", "3x1"},
            "does not match 4 ranks"},
           {{"plan", "pca", "--rows", "10"}, "pca needs --cols"}}) {
    const RunResult r = run_serial(bad.first);
    EXPECT_NE(r.status, 0);
    EXPECT_TRUE(contains(r.err, bad.second)) << r.err;
  }
}
