// End-to-end tests of text input as pandas and R write it, and of input that
// is not a regular file: the real binary under mpiexec. The same 30 points
// written plainly, by pandas' to_csv() and by R's write.csv() must give the
// same n and the same embedding, which is itself checked against kernel PCA
// computed here; standard input and a FIFO are read to their end; text
// options on a .npy file fail on every rank.
#include <sys/stat.h>

#include "cli/cli_support.hpp"

namespace {

constexpr std::size_t n = 30;

/// pandas' DataFrame(x).to_csv(): an empty cell and the labels 0..d-1, then
/// the index before every row.
std::string pandas_csv(const Matrix& x) {
  std::string text;
  for (std::size_t j = 0; j < x.cols; ++j) text += "," + std::to_string(j);
  text += "\n";
  for (std::size_t i = 0; i < x.rows; ++i) {
    text += std::to_string(i);
    for (std::size_t j = 0; j < x.cols; ++j) text += "," + format_g17(x(i, j));
    text += "\n";
  }
  return text;
}

/// R's write.csv(as.data.frame(x)): quoted header with an empty first name,
/// quoted row names 1..n.
std::string r_csv(const Matrix& x) {
  std::string text = "\"\"";
  for (std::size_t j = 0; j < x.cols; ++j) text += ",\"V" + std::to_string(j + 1) + "\"";
  text += "\n";
  for (std::size_t i = 0; i < x.rows; ++i) {
    text += "\"" + std::to_string(i + 1) + "\"";
    for (std::size_t j = 0; j < x.cols; ++j) text += "," + format_g17(x(i, j));
    text += "\n";
  }
  return text;
}

std::vector<std::string> kpca_args(const std::string& input, const fs::path& out) {
  return {"kpca", "--input", input, "--kernel", "rbf", "--gamma", "0.5", "--components", "2",
          "--solver", "evd", "--output-dir", out.string(), "--quiet"};
}

/// The run's embedding, eigenvalues and run.json (the files this test needs,
/// whatever else the directory holds).
KpcaOutput output_of(const fs::path& out) {
  KpcaOutput o;
  o.embedding = read_result_csv(out / "embedding.csv").data;
  EXPECT_EQ(o.embedding.rows, n) << out;
  const Csv eig = read_result_csv(out / "eigenvalues.csv");
  for (std::size_t j = 0; j < eig.data.rows && eig.data.cols == 2; ++j) o.eigenvalues.push_back(eig.data(j, 0));
  try {
    o.report = Json::parse(read_file(out / "run.json"));
  } catch (const std::exception& e) {
    ADD_FAILURE() << out / "run.json" << " does not parse: " << e.what();
  }
  return o;
}

void expect_same_embedding(const KpcaOutput& got, const KpcaOutput& reference, const std::string& what) {
  EXPECT_EQ(got.report["input"]["rows"], n) << what;
  EXPECT_EQ(got.report["input"]["cols"], 2) << what;
  EXPECT_LT(max_abs_diff(got.embedding, reference.embedding), 1e-10) << what;
}

/// One plain file and its run, shared by the tests (each run costs a second).
class TextInput : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = scratch_dir("text-input");
    x_ = noisy_circles(n, 11);
    write_csv(dir_ / "plain.csv", x_, "");
    const RunResult r = run_kembed(kpca_args((dir_ / "plain.csv").string(), dir_ / "plain"), 1);
    reference_ok_ = r.all_ranks_succeeded();
    if (!reference_ok_) std::fprintf(stderr, "reference run failed:\n%s\n", r.describe().c_str());
    else reference_ = output_of(dir_ / "plain");
  }
  void SetUp() override { ASSERT_TRUE(reference_ok_) << "the plain file's run failed (see above)"; }
  static inline fs::path dir_;
  static inline Matrix x_;
  static inline KpcaOutput reference_;
  static inline bool reference_ok_ = false;
};

}  // namespace

TEST_F(TextInput, PandasAndRFilesGiveThePlainFilesEmbedding) {
  // The reference itself, against kernel PCA computed here.
  expect_eigenpairs_of(double_center(rbf_kernel(x_, 0.5)), reference_, "plain.csv");
  EXPECT_EQ(reference_.report["input"]["rows"], n);

  write_file(dir_ / "pandas.csv", pandas_csv(x_));
  RUN_OK(pandas, kpca_args((dir_ / "pandas.csv").string(), dir_ / "pandas"), 4);
  expect_same_embedding(output_of(dir_ / "pandas"), reference_, "pandas.csv at 4 ranks");
  // Both decisions are told once, by rank 0, naming the file.
  const std::string note = "kembed: note: " + (dir_ / "pandas.csv").string() + ": first line ',0,1' read as a header";
  EXPECT_TRUE(contains(pandas.err, note)) << pandas.err;
  EXPECT_TRUE(contains(pandas.err, "column 1 holds row names")) << pandas.err;
  EXPECT_EQ(pandas.err.find("kembed: note:"), pandas.err.rfind("kembed: note:")) << pandas.err;

  write_file(dir_ / "r.csv", r_csv(x_));
  RUN_OK(r, concat(kpca_args((dir_ / "r.csv").string(), dir_ / "r"), {"--id-column", "1"}), 1);
  // The row names lead embedding.csv as its "id" column; the rest is the embedding.
  const Csv with_ids = read_result_csv(dir_ / "r" / "embedding.csv");
  ASSERT_EQ(with_ids.header, (std::vector<std::string>{"id", "c1", "c2"}));
  ASSERT_EQ(with_ids.data.rows, n);
  KpcaOutput r_out = output_of(dir_ / "r");
  r_out.embedding = zeros(n, 2);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(with_ids.data(i, 0), static_cast<double>(i + 1)) << "row " << i;
    for (std::size_t j = 0; j < 2; ++j) r_out.embedding(i, j) = with_ids.data(i, j + 1);
  }
  expect_same_embedding(r_out, reference_, "r.csv with --id-column 1");

  // --header no makes pandas' header line data: an error naming line and column, on every rank.
  const RunResult no = run_kembed(concat(kpca_args((dir_ / "pandas.csv").string(), dir_ / "no"),
                                         {"--header", "no"}), 2);
  EXPECT_TRUE(no.no_rank_succeeded()) << no.describe();
  EXPECT_TRUE(contains(no.err, (dir_ / "pandas.csv").string() + ":1: column 1: not a number: ''")) << no.err;
}

TEST_F(TextInput, StandardInputFromAPipe) {
  const RunResult r = run_kembed(kpca_args("-", dir_ / "stdin"), 2,
                                      "cat " + sh_quote((dir_ / "plain.csv").string()) + " | ", "");
  ASSERT_TRUE(r.all_ranks_succeeded()) << r.describe();
  const KpcaOutput out = output_of(dir_ / "stdin");
  EXPECT_EQ(out.report["input"]["path"], "<stdin>");
  EXPECT_EQ(out.report["input"]["format"], "text");
  expect_same_embedding(out, reference_, "standard input");
}

TEST_F(TextInput, FifoWithALiveWriter) {
  const fs::path fifo = dir_ / "fifo.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The writer blocks until kembed opens the FIFO; timeout ends it if kembed never does.
  const std::string writer = "timeout 60 sh -c " +
                             sh_quote("cat " + sh_quote((dir_ / "plain.csv").string()) + " > " +
                                      sh_quote(fifo.string())) +
                             " & ";
  const RunResult r = run_kembed(kpca_args(fifo.string(), dir_ / "fifo"), 1, writer, "</dev/null");
  ASSERT_TRUE(r.all_ranks_succeeded()) << r.describe();
  expect_same_embedding(output_of(dir_ / "fifo"), reference_, "FIFO");
}

TEST_F(TextInput, TextOptionsOnNpyFailOnEveryRank) {
  write_file(dir_ / "x.npy", npy_header(x_.rows, x_.cols) + raw_doubles(x_));
  const RunResult r = run_kembed(concat(kpca_args((dir_ / "x.npy").string(), dir_ / "npy"),
                                        {"--id-column", "name"}), 4);
  ASSERT_FALSE(r.timed_out()) << r.describe();
  EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
  EXPECT_TRUE(contains(r.err, (dir_ / "x.npy").string() + ": --id-column name: only for text input")) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "npy"));
}
