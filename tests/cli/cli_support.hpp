#pragma once
// Helpers for end-to-end CLI tests: plain (serial) GoogleTest programs that
// write inputs, run the real kembed binary under mpiexec through the shell,
// and read its result directories. Never initializes MPI itself.
//
// Every rank runs inside a tiny sh wrapper that records its own exit code, so
// tests can see that *every* rank fails on bad input, not only the one
// mpiexec happens to report.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#ifndef KEMBED_BINARY
#error "KEMBED_BINARY (path of the kembed executable) must be defined by CMake"
#endif
#ifndef MPIEXEC
#error "MPIEXEC (path of mpiexec) must be defined by CMake"
#endif

namespace fs = std::filesystem;
using Json = nlohmann::json;

// Declared here and defined once, in cli_support.cpp, which every CLI program
// links (kembed_cli_test_base): compiled in each program's own translation
// unit they cost about 4 s of CPU per program.
namespace cli_test {

// ---------------------------------------------------------------------------
// Scratch space and process launching
// ---------------------------------------------------------------------------

/// mpiexec's own limit: a hung job is killed after this many seconds. Most
/// runs here take under 3 s alone on 2 cores, the largest (the memory plan's
/// pdsyevd at n = 4000) about 10 s, and CTest runs these programs side by
/// side (scripts/test), which can make a run several times slower; 90 s
/// keeps a margin and keeps a few hangs from pushing the suite past its time
/// budget (a test ends in the CTest timeout of 600 s at the latest).
constexpr int kMpiTimeoutSeconds = 90;

/// The scratch root of this test process, created on first use and removed
/// at exit unless KEMBED_TEST_KEEP is set (for post-mortems).
const fs::path& scratch_root();

/// A fresh, empty directory under the scratch root.
fs::path scratch_dir(const std::string& name);

/// `s` as one single-quoted shell word.
std::string sh_quote(const std::string& s);

std::string read_file(const fs::path& path);

void write_file(const fs::path& path, const std::string& bytes);

struct RunResult {
  std::string command;
  int np = 0;
  int status = -1;               ///< exit status of mpiexec (-1: killed by a signal)
  std::vector<int> rank_status;  ///< per rank: exit code, or -1 if it never reported
  std::string out, err;
  double seconds = 0;

  bool timed_out() const {
    return err.find("time limit for job execution has been reached") != std::string::npos ||
           seconds >= kMpiTimeoutSeconds - 1;
  }
  bool all_ranks_succeeded() const {
    return status == 0 &&
           std::all_of(rank_status.begin(), rank_status.end(), [](int s) { return s == 0; });
  }
  /// No rank reported success (a rank killed by mpiexec reports nothing).
  bool no_rank_succeeded() const {
    return std::none_of(rank_status.begin(), rank_status.end(), [](int s) { return s == 0; });
  }
  std::string describe() const {
    std::ostringstream s;
    s << "command: " << command << "\nexit status: " << status << ", per rank:";
    for (int r : rank_status) s << ' ' << r;
    s << ", " << seconds << " s\n--- stdout ---\n" << out << "--- stderr ---\n" << err;
    return s.str();
  }
};

/// Runs `mpiexec -np np kembed args...` and captures everything. `shell_prefix`
/// goes before mpiexec in the shell command (e.g. "cd DIR && HOME=H ", or
/// "cat FILE | " to feed standard input, with `stdin_source` ""); mpiexec
/// forwards its standard input, `stdin_source` (a redirection), to rank 0.
RunResult run_kembed(const std::vector<std::string>& args, int np,
                     const std::string& shell_prefix = "",
                     const std::string& stdin_source = "</dev/null");

/// Runs the binary directly (no mpiexec: MPI singleton).
RunResult run_serial(const std::vector<std::string>& args);

bool contains(const std::string& text, const std::string& part);

/// Entries of `dir` (names) that look like kembed staging directories.
std::vector<std::string> staging_leftovers(const fs::path& dir);

/// The names in `dir`, sorted, without the result marker every kembed
/// result holds (test_cli_safety checks the marker itself).
std::vector<std::string> sorted_names(const fs::path& dir);

// ---------------------------------------------------------------------------
// Data: generation, writing, reading
// ---------------------------------------------------------------------------

/// A dense row-major matrix.
struct Matrix {
  std::size_t rows = 0, cols = 0;
  std::vector<double> v;
  double& operator()(std::size_t i, std::size_t j) { return v[i * cols + j]; }
  double operator()(std::size_t i, std::size_t j) const { return v[i * cols + j]; }
};

Matrix zeros(std::size_t rows, std::size_t cols);

/// Two noisy concentric circles (radii 1 and 3) in the plane, n points.
Matrix noisy_circles(std::size_t n, unsigned seed);

/// Gaussian cloud in 3-D with clearly distinct variances along skew axes and
/// a non-zero mean (so the centering matters).
Matrix skewed_cloud(std::size_t n, unsigned seed);

std::string format_g17(double v);

/// Writes `x` as CSV (exact round trip); `header` may be empty.
void write_csv(const fs::path& path, const Matrix& x, const std::string& header);

std::string raw_doubles(const Matrix& x);

/// A version 1.0 .npy header for a C-ordered little-endian float64 matrix,
/// written from the format description (dict padded to 64 bytes, then '\n').
std::string npy_header(std::size_t rows, std::size_t cols);

struct Csv {
  std::vector<std::string> header;
  Matrix data;
};

/// Parses a CSV written by kembed: one header line, then numbers.
Csv read_result_csv(const fs::path& path);

std::vector<std::string> numbered(const std::string& prefix, int k);

/// The result directory of one kpca run, checked for shape and parsed.
struct KpcaOutput {
  Matrix embedding;                 ///< n x k
  std::vector<double> eigenvalues;  ///< k
  std::vector<double> ratios;       ///< k
  Json report;
};

/// Reads and checks the three output files of a run with n samples and k
/// components; failures are reported through gtest.
KpcaOutput read_kpca_output(const fs::path& dir, std::size_t n, int k);

/// eigenvalues.csv of a result with k components: its header and row count
/// checked, the eigenvalues and explained-variance ratios appended.
void read_eigenvalues(const fs::path& dir, int k, std::vector<double>& values,
                      std::vector<double>& ratios);

/// run.json of a result, parsed (a test failure and null if it does not parse).
Json read_run_json(const fs::path& dir);

// ---------------------------------------------------------------------------
// Independent references
// ---------------------------------------------------------------------------

/// Column j of `m` flipped so its entry of largest magnitude is positive
/// (the documented sign convention), for every column.
Matrix with_sign_convention(Matrix m);

/// Eigen-decomposition of a small symmetric matrix by cyclic Jacobi
/// rotations: values descending, vectors as the matching columns.
void jacobi_eigen(Matrix a, std::vector<double>& values, Matrix& vectors);

/// exp(-gamma ||xi - xj||^2), exactly symmetric.
Matrix rbf_kernel(const Matrix& x, double gamma);

/// J K J with J = I - 11^T/n.
Matrix double_center(Matrix k);

/// Checks that z_j = sqrt(lambda_j) v_j with (lambda_j, v_j) eigenpairs of
/// the centered kernel `kc`: K~ z_j = lambda_j z_j, ||z_j||^2 = lambda_j,
/// z_i . z_j = 0, eigenvalues descending. Tolerances scale with n * eps.
void expect_eigenpairs_of(const Matrix& kc, const KpcaOutput& out, const std::string& what);

/// max |a - b| over all entries (infinity on a shape mismatch).
double max_abs_diff(const Matrix& a, const Matrix& b);

double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b);

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b);

/// Runs kpca expecting success; fails the test (fatally) otherwise.
#define RUN_OK(result_var, args, np)                                          \
  const RunResult result_var = run_kembed(args, np);                          \
  ASSERT_FALSE(result_var.timed_out()) << "hang:\n" << result_var.describe(); \
  ASSERT_TRUE(result_var.all_ranks_succeeded()) << result_var.describe()

}  // namespace cli_test

using namespace cli_test;  // NOLINT: the tests use the helpers unqualified
