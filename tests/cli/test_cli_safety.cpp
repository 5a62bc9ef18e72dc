// Data safety (issue: never lose a user's data): kembed refuses, before any
// work and on every rank, an output directory it may not replace, and never
// deletes or changes a file it did not write. Every refusal runs at 1 and 4
// ranks in a fresh copy of a small "user's directory", whose whole tree
// (every path and every byte) must be the same afterwards.
#include "cli/cli_support.hpp"

using namespace cli_test;

namespace {

/// Every path below `dir` with its contents ("<dir>" for directories,
/// "-> target" for symbolic links), so a comparison sees any change.
std::map<std::string, std::string> tree(const fs::path& dir) {
  std::map<std::string, std::string> entries;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string rel = it->path().lexically_relative(dir).string();
    if (it->is_symlink())
      entries[rel] = "-> " + fs::read_symlink(it->path()).string();
    else if (it->is_directory())
      entries[rel] = "<dir>";
    else
      entries[rel] = read_file(it->path());
  }
  return entries;
}

/// Staging directories anywhere below `dir`.
std::vector<std::string> leftovers_below(const fs::path& dir) {
  std::vector<std::string> found;
  for (const auto& sub : fs::recursive_directory_iterator(dir))
    if (sub.is_directory() && !sub.is_symlink())
      for (const auto& name : staging_leftovers(sub.path())) found.push_back(name);
  for (const auto& name : staging_leftovers(dir)) found.push_back(name);
  return found;
}

/// A user's directory: data, notes, an earlier kembed result (fit/), made once.
const fs::path& template_dir() {
  static const fs::path dir = [] {
    const fs::path d = scratch_dir("safety_template");
    write_csv(d / "x.csv", noisy_circles(12, 5), "x,y");
    fs::create_directories(d / "work");
    write_csv(d / "work" / "in.csv", noisy_circles(12, 6), "x,y");
    write_file(d / "work" / "notes.txt", "my notes\n");
    fs::create_directories(d / "results" / "sub");
    write_file(d / "results" / "notes.txt", "results notes\n");
    write_file(d / "results" / "sub" / "keep.txt", "keep\n");
    fs::create_directories(d / "empty");
    fs::create_directories(d / "home");
    write_file(d / "file.txt", "a file\n");
    fs::create_directory_symlink("empty", d / "link");
    fs::create_directories(d / "cfg");
    write_file(d / "cfg" / "run.ini", "input = x.csv\nkernel = rbf\ngamma = 1\n");
    const RunResult fit = run_kembed({"kpca", "--input", (d / "x.csv").string(), "--kernel",
                                      "rbf", "--gamma", "1", "-o", (d / "fit").string(), "-q"},
                                     2);
    if (!fit.all_ranks_succeeded()) ADD_FAILURE() << fit.describe();
    fs::copy(d / "fit", d / "fitplus", fs::copy_options::recursive);
    write_file(d / "fitplus" / "notes.txt", "added by the user\n");
    return d;
  }();
  return dir;
}

/// A fresh copy of the template for one run.
fs::path user_dir(const std::string& name) {
  const fs::path d = scratch_root() / "safety" / name;
  fs::remove_all(d);
  fs::create_directories(d.parent_path());
  fs::copy(template_dir(), d, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  return d;
}

/// kembed run inside `dir` (relative paths resolve there), HOME = dir/home.
RunResult run_in(const fs::path& dir, const std::vector<std::string>& args, int np) {
  return run_kembed(args, np,
                    "cd " + sh_quote(dir.string()) + " && HOME=" +
                        sh_quote((dir / "home").string()) + " ");
}

struct Refusal {
  std::string name;
  std::vector<std::string> args;
  std::string message;  ///< must appear in stderr
};

std::ostream& operator<<(std::ostream& os, const Refusal& r) { return os << r.name; }

const std::vector<std::string> kFit = {"--input", "x.csv", "--kernel", "rbf", "--gamma", "1"};

std::vector<std::string> kpca_to(const std::string& out) {
  return concat(concat({"kpca"}, kFit), {"-o", out});
}
std::vector<std::string> transform_to(const std::string& out) {
  return {"transform", "--model", "fit/model", "--input", "x.csv", "-o", out};
}

const std::vector<Refusal> kRefusals = {
    {"output_holds_the_input", {"kpca", "--input", "work/in.csv", "-o", "work"},
     "output directory 'work' contains 'work/in.csv', which this run reads"},
    {"output_has_user_files", {"pca", "--input", "x.csv", "-o", "results/"},
     "output directory 'results/' is not empty and is not a kembed result (it holds"},
    {"output_is_the_model", transform_to("fit/model"),
     "output directory 'fit/model' is 'fit/model', which this run reads"},
    {"output_holds_the_model", transform_to("fit"),
     "output directory 'fit' contains 'fit/model', which this run reads"},
    {"output_inside_the_model", transform_to("fit/model/new"),
     "output directory 'fit/model/new' lies inside 'fit/model', which this run reads"},
    {"preimage_over_its_model",
     {"preimage", "--model", "fit/model", "--input", "x.csv", "--method", "nearest", "-o", "fit"},
     "output directory 'fit' contains 'fit/model', which this run reads"},
    {"output_holds_the_distances",
     {"mds", "--distances", "work/in.csv", "-o", "work"},
     "output directory 'work' contains 'work/in.csv', which this run reads"},
    {"output_holds_the_config", {"kpca", "--config", "cfg/run.ini", "-o", "cfg"},
     "output directory 'cfg' contains 'cfg/run.ini', which this run reads"},
    {"current_directory", kpca_to("."), "output directory '.' is the current directory"},
    {"root_directory", kpca_to("/"), "output directory '/' is the root directory"},
    {"home_directory", kpca_to("home"), "output directory 'home' is the home directory"},
    {"regular_file", kpca_to("file.txt"), "output directory 'file.txt' exists and is not a directory"},
    {"parent_is_a_file", kpca_to("file.txt/out"),
     "cannot create output directory 'file.txt/out': 'file.txt' is not a directory"},
    {"symbolic_link", kpca_to("link"), "output directory 'link' is a symbolic link"},
    {"earlier_result_with_a_user_file", kpca_to("fitplus"),
     "output directory 'fitplus' is an earlier kembed result, but holds 'notes.txt', which "
     "kembed did not write there"},
    {"negative_seed", concat(kpca_to("new"), {"--seed=-1"}), "--seed must be at least 0"},
};

class Refused : public ::testing::TestWithParam<std::tuple<Refusal, int>> {};

TEST_P(Refused, BeforeAnyWorkOnEveryRankAndTouchesNothing) {
  const auto& [c, np] = GetParam();
  const fs::path dir = user_dir(c.name + "_np" + std::to_string(np));
  const auto before = tree(dir);
  const RunResult r = run_in(dir, c.args, np);
  EXPECT_FALSE(r.timed_out()) << r.describe();
  EXPECT_NE(r.status, 0) << r.describe();
  EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
  EXPECT_TRUE(contains(r.err, "kembed: error: " + c.message))
      << "expected '" << c.message << "' in:\n" << r.describe();
  // Refused before the work: no phase after reading the options ran.
  EXPECT_FALSE(contains(r.err, "assemble")) << r.describe();
  EXPECT_TRUE(tree(dir) == before) << "the user's directory changed";
  EXPECT_EQ(leftovers_below(dir), std::vector<std::string>{});
}

INSTANTIATE_TEST_SUITE_P(OutputPaths, Refused,
                         ::testing::Combine(::testing::ValuesIn(kRefusals), ::testing::Values(1, 4)),
                         [](const ::testing::TestParamInfo<std::tuple<Refusal, int>>& info) {
                           return std::get<0>(info.param).name + "_np" +
                                  std::to_string(std::get<1>(info.param));
                         });

/// Everything outside `created` (a path relative to the tree) is as before.
void expect_only_created(std::map<std::string, std::string> before,
                         std::map<std::string, std::string> after, const std::string& created) {
  const auto drop_created = [&](std::map<std::string, std::string>& m) {
    for (auto it = m.begin(); it != m.end();)
      it = it->first == created || it->first.rfind(created + "/", 0) == 0 ? m.erase(it)
                                                                           : std::next(it);
  };
  drop_created(before);
  drop_created(after);
  EXPECT_TRUE(after == before) << "something outside '" << created << "' changed";
}

#define RUN_IN_OK(result_var, dir, args, np)                                 \
  const RunResult result_var = run_in(dir, args, np);                         \
  ASSERT_FALSE(result_var.timed_out()) << "hang:\n" << result_var.describe(); \
  ASSERT_TRUE(result_var.all_ranks_succeeded()) << result_var.describe()

TEST(OutputPaths, NewEmptyAndEarlierResultsAreAcceptedAndNothingElseChanges) {
  const fs::path dir = user_dir("accepted");
  auto before = tree(dir);
  // Missing parents are created.
  RUN_IN_OK(fresh, dir, kpca_to("a/b/c/out"), 2);
  EXPECT_TRUE(fs::is_regular_file(dir / "a/b/c/out/embedding.csv"));
  EXPECT_TRUE(fs::is_regular_file(dir / "a/b/c/out" / ".kembed-result"));
  expect_only_created(before, tree(dir), "a");
  // An empty directory becomes the result.
  before = tree(dir);
  RUN_IN_OK(into_empty, dir, kpca_to("empty"), 2);
  EXPECT_TRUE(fs::is_regular_file(dir / "empty/embedding.csv"));
  expect_only_created(before, tree(dir), "empty");
  // An earlier result is replaced whole (here by one with 3 components).
  before = tree(dir);
  RUN_IN_OK(again, dir, concat(kpca_to("fit"), {"-k", "3"}), 2);
  const Csv replaced = read_result_csv(dir / "fit/embedding.csv");
  EXPECT_EQ(replaced.header, numbered("c", 3));
  expect_only_created(before, tree(dir), "fit");
  // A name of 250 bytes (NAME_MAX is 255) still stages and commits.
  const std::string long_name(250, 'n');
  RUN_IN_OK(long_run, dir, kpca_to(long_name), 1);
  EXPECT_TRUE(fs::is_regular_file(dir / long_name / "embedding.csv"));
  EXPECT_EQ(leftovers_below(dir), std::vector<std::string>{});
}

TEST(OutputPaths, GenerateNeverOverwritesAFile) {
  const fs::path dir = user_dir("generate");
  write_file(dir / "data.npy", "the user's bytes");
  const auto before = tree(dir);
  for (int np : {1, 4}) {
    const RunResult r = run_in(dir, {"generate", "--dataset", "circles", "--rows", "20",
                                     "--output", "data.npy"}, np);
    EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
    EXPECT_TRUE(contains(r.err, "output file 'data.npy' exists; kembed does not overwrite files"))
        << r.describe();
    EXPECT_TRUE(tree(dir) == before) << "the user's directory changed";
  }
}

}  // namespace
