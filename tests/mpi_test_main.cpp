// Shared GoogleTest main for MPI tests: every rank runs every test; only rank 0
// prints; the process exits non-zero on every rank if any rank failed a test.
//
// All suites are one program (kembed_tests); --kembed_sources=a.cpp,b.cpp
// runs only the tests defined in those files (paths as in tests/CMakeLists.txt),
// which is how each CTest entry runs its own suite.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kembed/mpi/session.hpp"

namespace {
// On ranks other than 0: print only failures, tagged with the rank.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_,
                 result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.summary());
  }

 private:
  int rank_;
};

constexpr const char* kSourcesFlag = "--kembed_sources=";

/// Removes --kembed_sources=... from argv and returns its files ("" if absent).
std::string take_sources_flag(int& argc, char** argv) {
  std::string value;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], kSourcesFlag, std::strlen(kSourcesFlag)) == 0)
      value = argv[i] + std::strlen(kSourcesFlag);
    else
      argv[kept++] = argv[i];
  }
  argc = kept;
  return value;
}

bool defined_in(const char* file, const std::string& source) {
  const std::string path = file ? file : "";
  if (path.size() < source.size()) return false;
  if (path.compare(path.size() - source.size(), source.size(), source) != 0) return false;
  return path.size() == source.size() || path[path.size() - source.size() - 1] == '/';
}

/// The gtest filter of every test defined in the comma-separated files, or
/// an error text when a file defines none (a renamed or misspelled file
/// would otherwise pass with no test run).
std::string filter_of_sources(const std::string& list, std::string& error) {
  std::vector<std::string> sources;
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) sources.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  std::string filter;
  const auto& unit = *::testing::UnitTest::GetInstance();
  for (const auto& source : sources) {
    bool found = false;
    for (int s = 0; s < unit.total_test_suite_count(); ++s) {
      const auto& suite = *unit.GetTestSuite(s);
      for (int t = 0; t < suite.total_test_count(); ++t) {
        const auto& info = *suite.GetTestInfo(t);
        if (!defined_in(info.file(), source)) continue;
        found = true;
        if (!filter.empty()) filter += ':';
        filter += std::string(info.test_suite_name()) + "." + info.name();
      }
    }
    if (!found) error += "no test is defined in " + source + "; ";
  }
  if (sources.empty()) error = std::string(kSourcesFlag) + " names no file";
  return filter;
}
}  // namespace

int main(int argc, char** argv) {
  kembed::MpiSession mpi(argc, argv);
  const std::string sources = take_sources_flag(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!sources.empty()) {
    // Every rank derives the same filter from the same program: no agreement needed.
    std::string error;
    if (GTEST_FLAG_GET(filter) != "*")
      error = "give --gtest_filter or --kembed_sources, not both";
    const std::string filter = filter_of_sources(sources, error);
    if (!error.empty()) {
      if (rank == 0) {
        std::fprintf(stderr, "[kembed] %s\n", error.c_str());
        std::fflush(stderr);
      }
      return 2;
    }
    GTEST_FLAG_SET(filter, filter);
  }
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  const int local_failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = 0;
  MPI_Allreduce(&local_failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && any_failed && !local_failed)
    std::fprintf(stderr, "[kembed] a test failed on a rank other than 0\n");
  return any_failed;
}
