// One command driver (issue 16): every command's run.json carries the same
// common fields, every solver fallback is reported the same way (a note on
// stderr and solver_note), and a run tells its phases on stderr as it goes.
// Each test here would have caught one of the drifts the commands had.
#include "cli/cli_support.hpp"

using namespace cli_test;

namespace {

struct Fixture {
  fs::path dir;
  fs::path x;
};

const Fixture& fixture() {
  static const Fixture f = [] {
    Fixture g{scratch_dir("driver"), {}};
    g.x = g.dir / "x.csv";
    write_csv(g.x, noisy_circles(20, 7), "x,y");
    return g;
  }();
  return f;
}

Json run_json(const fs::path& out) { return Json::parse(read_file(out / "run.json")); }

/// The fields every command's run.json has, whatever the method.
void expect_common_fields(const Json& r, const std::string& method, int ranks) {
  EXPECT_EQ(r.value("schema_version", 0), 2) << method;
  EXPECT_EQ(r.value("method", ""), method);
  for (const char* key :
       {"kembed_version", "input", "grid", "block_size", "openblas_num_threads", "openblas_core",
        "time_seconds", "time_seconds_total", "peak_memory_bytes_per_rank_max"})
    EXPECT_TRUE(r.contains(key)) << method << " run.json lacks " << key;
  EXPECT_EQ(r.value("ranks", 0), ranks) << method;
  EXPECT_GT(r.value("peak_memory_bytes_per_rank_max", 0.0), 0.0) << method;
  EXPECT_GE(r.value("time_seconds_total", -1.0), 0.0) << method;
}

std::vector<std::string> fit_args(const std::string& method, const fs::path& out) {
  const std::string x = fixture().x.string();
  if (method == "mds") return {"mds", "--input", x, "-o", out.string()};
  if (method == "pca") return {"pca", "--input", x, "--route", "gram", "-o", out.string()};
  return {"kpca", "--input", x, "--kernel", "rbf", "--gamma", "1", "-o", out.string()};
}

TEST(Driver, EveryCommandWritesTheCommonRunReport) {
  const fs::path& dir = fixture().dir;
  for (const std::string method : {"kpca", "pca", "mds"}) {
    const fs::path out = dir / ("common_" + method);
    RUN_OK(fit, fit_args(method, out), 2);
    const Json r = run_json(out);
    expect_common_fields(r, method, 2);
    // The memory plan under the same names for every fit.
    EXPECT_GT(r.value("memory_estimate_bytes_per_rank", 0.0), 0.0) << method;
    EXPECT_TRUE(r.contains("memory_limit_bytes_per_rank")) << method;
    EXPECT_TRUE(r.contains("solver_used")) << method;
  }
  const fs::path model = dir / "common_kpca" / "model";
  RUN_OK(transform, (std::vector<std::string>{"transform", "--model", model.string(), "--input",
                                               fixture().x.string(), "-o",
                                               (dir / "common_transform").string()}),
         2);
  expect_common_fields(run_json(dir / "common_transform"), "transform", 2);
  RUN_OK(pre, (std::vector<std::string>{"preimage", "--model", model.string(), "--input",
                                         fixture().x.string(), "--method", "nearest", "-o",
                                         (dir / "common_preimage").string()}),
         2);
  expect_common_fields(run_json(dir / "common_preimage"), "preimage", 2);
}

TEST(Driver, EveryFitReportsTheElpaFallbackTheSameWay) {
  // ELPA cannot run when a process column owns no block (n = 20 < NB = 64 on
  // a 1x2 grid): kembed uses evr and must say so, on stderr and in run.json.
  for (const std::string method : {"kpca", "pca", "mds"}) {
    const fs::path out = fixture().dir / ("elpa_" + method);
    RUN_OK(fit, concat(fit_args(method, out), {"--solver", "elpa", "--grid", "1x2"}), 2);
    const Json r = run_json(out);
    EXPECT_EQ(r.value("solver", ""), "elpa") << method;
    EXPECT_EQ(r.value("solver_used", ""), "evr") << method;
    const std::string note = r.value("solver_note", "");
    EXPECT_FALSE(note.empty()) << method << " run.json has no solver_note";
    EXPECT_TRUE(contains(fit.err, "kembed " + method + ": note: " + note)) << fit.describe();
  }
}

TEST(Driver, PhasesAreToldAsTheyHappenUnlessQuiet) {
  const fs::path out = fixture().dir / "progress";
  RUN_OK(loud, fit_args("kpca", out), 2);
  // One start and one end line per phase on rank 0's stderr, in order.
  for (const char* phase : {"read", "assemble", "center", "solve", "write"}) {
    const std::size_t start = loud.err.find(std::string("] ") + phase + " ...");
    const std::size_t end = loud.err.find(std::string("] ") + phase + " done in ");
    EXPECT_NE(start, std::string::npos) << phase << "\n" << loud.err;
    EXPECT_NE(end, std::string::npos) << phase << "\n" << loud.err;
    EXPECT_LT(start, end) << phase;
  }
  RUN_OK(quiet, concat(fit_args("kpca", fixture().dir / "progress_q"), {"--quiet"}), 2);
  EXPECT_EQ(quiet.err, "");
  EXPECT_EQ(quiet.out, "");
}

}  // namespace
