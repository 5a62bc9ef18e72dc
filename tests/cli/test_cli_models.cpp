// A tampered model manifest, or a --config that is not an options file:
// every rank exits with the same clear error naming the file and the field,
// nothing is written, and the model is left as it was.
#include <limits>

#include "cli/cli_support.hpp"

namespace {

/// 64-bit FNV-1a of every file of `dir`, by name.
std::map<std::string, std::uint64_t> hashes(const fs::path& dir) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::uint64_t h = 1469598103934665603ULL;
    for (unsigned char c : read_file(entry.path())) h = (h ^ c) * 1099511628211ULL;
    out[entry.path().filename().string()] = h;
  }
  return out;
}

/// Fits `method` on `train` (k = 2) and returns the result directory.
fs::path models_fit(const std::string& method, const fs::path& train, const fs::path& out) {
  const RunResult r = run_kembed(
      {method, "--input", train.string(), "-k", "2", "--output-dir", out.string(), "--quiet"}, 1);
  EXPECT_TRUE(r.all_ranks_succeeded()) << r.describe();
  return out;
}

/// No rank succeeded; every rank that reported exited 1 (the agreed error,
/// not 2 from an abort; mpiexec may kill the others once one has exited, and
/// those report nothing); the message holds every string of `parts`.
void expect_agreed_error(const RunResult& r, const std::vector<std::string>& parts) {
  EXPECT_FALSE(r.timed_out()) << r.describe();
  EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
  EXPECT_EQ(r.status, 1) << r.describe();
  for (int s : r.rank_status) EXPECT_TRUE(s == 1 || s == -1) << r.describe();
  EXPECT_NE(std::count(r.rank_status.begin(), r.rank_status.end(), 1), 0) << r.describe();
  EXPECT_TRUE(contains(r.err, "kembed: error: ")) << r.describe();
  EXPECT_FALSE(contains(r.err, "json.exception")) << r.describe();
  EXPECT_FALSE(contains(r.err, "internal error")) << r.describe();
  for (const auto& part : parts) EXPECT_TRUE(contains(r.err, part)) << part << "\n" << r.describe();
}

}  // namespace

TEST(ModelsCli, TamperedManifestFieldsAreAgreedErrorsNamingTheField) {
  const fs::path dir = scratch_dir("models_tampered");
  write_csv(dir / "train.csv", skewed_cloud(20, 3), "a,b,c");
  const fs::path kpca = models_fit("kpca", dir / "train.csv", dir / "kpca") / "model";
  const fs::path pca = models_fit("pca", dir / "train.csv", dir / "pca") / "model";
  ASSERT_TRUE(fs::exists(kpca / "manifest.json"));
  ASSERT_TRUE(fs::exists(pca / "manifest.json"));

  // The untouched models transform their own training set into the fit's
  // embedding: the failures below come from the tampering alone.
  for (const auto& [model, fitted] : {std::pair{kpca, dir / "kpca"}, std::pair{pca, dir / "pca"}}) {
    const fs::path out = dir / ("ok_" + model.parent_path().filename().string());
    const RunResult r = run_kembed({"transform", "--model", model.string(), "--input",
                                    (dir / "train.csv").string(), "--output-dir", out.string(),
                                    "--quiet"},
                                   4);
    ASSERT_TRUE(r.all_ranks_succeeded()) << r.describe();
    EXPECT_LT(max_abs_diff(read_result_csv(out / "embedding.csv").data,
                           read_result_csv(fitted / "embedding.csv").data),
              1e-8);
  }

  struct Case {
    fs::path model;
    std::string field;
    Json value;  // null: remove the field
  };
  const std::vector<Case> cases = {
      {pca, "whiten", nullptr},
      {kpca, "kernel.gamma", "abc"},
      {kpca, "n", 1e300},
      {pca, "k", -1},
  };
  int counter = 0;
  for (const auto& c : cases) {
    const fs::path model = dir / ("tampered_" + std::to_string(counter++));
    fs::copy(c.model, model);
    Json manifest = Json::parse(read_file(model / "manifest.json"));
    Json& parent = c.field == "kernel.gamma" ? manifest["kernel"] : manifest;
    const std::string key = c.field == "kernel.gamma" ? "gamma" : c.field;
    if (c.value.is_null())
      parent.erase(key);
    else
      parent[key] = c.value;
    write_file(model / "manifest.json", manifest.dump(2));
    const auto before = hashes(model);
    for (int np : {1, 4}) {
      const fs::path out = dir / "out";
      const RunResult r =
          run_kembed({"transform", "--model", model.string(), "--input",
                      (dir / "train.csv").string(), "--output-dir", out.string()},
                     np);
      expect_agreed_error(r, {(model / "manifest.json").string() + ": field '" + c.field + "'"});
      EXPECT_FALSE(fs::exists(out)) << r.describe();
      EXPECT_TRUE(staging_leftovers(dir).empty()) << r.describe();
    }
    EXPECT_EQ(hashes(model), before) << c.field;
  }
}

TEST(ModelsCli, ConfigThatIsADirectory) {
  const fs::path dir = scratch_dir("models_config");
  write_csv(dir / "x.csv", skewed_cloud(8, 1), "a,b,c");
  for (int np : {1, 4}) {
    const RunResult r = run_kembed({"pca", "--input", (dir / "x.csv").string(), "--output-dir",
                                    (dir / "out").string(), "--config", dir.string()},
                                   np);
    expect_agreed_error(r, {"cannot read config '" + dir.string() + "': is a directory"});
    EXPECT_FALSE(contains(r.err, "basic_filebuf")) << r.describe();
    EXPECT_FALSE(fs::exists(dir / "out"));
  }
}

namespace {

// Overwrites entry `index` (0-based) of the float64 vector in the .npy file
// `path` with `value`: the data are the file's last 8 * length bytes.
void poke_vector(const fs::path& path, std::size_t index, std::size_t length, double value) {
  std::string bytes = read_file(path);
  ASSERT_GE(bytes.size(), 8 * length);
  std::memcpy(&bytes[bytes.size() - 8 * length + 8 * index], &value, 8);
  write_file(path, bytes);
}

}  // namespace

// A model vector holding NaN or infinity (kernel means, eigenvalues, PCA's
// mean) used to give an embedding of NaN with exit 0; the load refuses it,
// naming the file and the entry, on every rank.
TEST(ModelsCli, NonFiniteModelVectorsAreAgreedErrorsNamingTheEntry) {
  const fs::path dir = scratch_dir("models_nonfinite");
  write_csv(dir / "train.csv", skewed_cloud(20, 3), "a,b,c");
  const fs::path kpca = models_fit("kpca", dir / "train.csv", dir / "kpca") / "model";
  const fs::path pca = models_fit("pca", dir / "train.csv", dir / "pca") / "model";
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    fs::path model;
    std::string array;
    std::size_t length, index;
    double value;
    std::string shown;
  };
  const std::vector<Case> cases = {
      {kpca, "kernel_col_means", 20, 1, nan, "nan"},
      {kpca, "eigenvalues", 2, 0, inf, "inf"},
      {pca, "mean", 3, 2, -inf, "-inf"},
  };
  int counter = 0;
  for (const auto& c : cases) {
    const fs::path model = dir / ("tampered_" + std::to_string(counter++));
    fs::copy(c.model, model);
    poke_vector(model / (c.array + ".npy"), c.index, c.length, c.value);
    const auto before = hashes(model);
    for (int np : {1, 4}) {
      const fs::path out = dir / "out";
      const RunResult r =
          run_kembed({"transform", "--model", model.string(), "--input",
                      (dir / "train.csv").string(), "--output-dir", out.string()},
                     np);
      expect_agreed_error(r, {(model / (c.array + ".npy")).string() + ": entry " +
                                  std::to_string(c.index + 1) + " of " +
                                  std::to_string(c.length) + " (1-based) is " + c.shown +
                                  ", not a finite number; the model is damaged"});
      EXPECT_FALSE(fs::exists(out)) << r.describe();
    }
    EXPECT_EQ(hashes(model), before) << c.array;
  }
  // The version a model states, and the ones this kembed reads.
  const fs::path future = dir / "future";
  fs::copy(kpca, future);
  Json manifest = Json::parse(read_file(future / "manifest.json"));
  manifest["format_version"] = 9;
  write_file(future / "manifest.json", manifest.dump(2));
  for (int np : {1, 4}) {
    const RunResult r = run_kembed({"transform", "--model", future.string(), "--input",
                                    (dir / "train.csv").string(), "--output-dir",
                                    (dir / "out").string()},
                                   np);
    expect_agreed_error(r, {"unsupported model format version 9; this kembed reads versions 1 "
                            "and 3 (and 2 for pca models)"});
  }
}
