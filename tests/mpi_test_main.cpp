// Shared GoogleTest main for MPI tests: every rank runs every test; only rank 0
// prints; the process exits non-zero on every rank if any rank failed a test.
//
// All suites are one program (kembed_tests); --kembed_sources=a.cpp,b.cpp
// runs only the tests defined in those files (paths as in tests/CMakeLists.txt;
// tests/test_source_filter.hpp), which is how each CTest entry runs its own suite.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <string>

#include "kembed/mpi/session.hpp"
#include "test_source_filter.hpp"

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
}  // namespace

int main(int argc, char** argv) {
  kembed::MpiSession mpi(argc, argv);
  const std::string sources = kembed::test::take_sources_flag(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Every rank derives the same selection from the same program: no agreement needed.
  const std::string error = kembed::test::select_sources(sources);
  if (!error.empty()) {
    if (rank == 0) {
      std::fprintf(stderr, "[kembed] %s\n", error.c_str());
      std::fflush(stderr);
    }
    return 2;
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
