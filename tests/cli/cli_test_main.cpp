// GoogleTest main of the CLI test program, kembed_cli_tests: serial, no MPI
// in this process (the tests start kembed under mpiexec themselves).
//
// All CLI suites are one program; --kembed_sources=cli/test_cli_x.cpp runs
// only the tests defined in that file (tests/test_source_filter.hpp), which
// is how each CTest entry runs its own suite.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "test_source_filter.hpp"

int main(int argc, char** argv) {
  const std::string sources = kembed::test::take_sources_flag(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  const std::string error = kembed::test::select_sources(sources);
  if (!error.empty()) {
    std::fprintf(stderr, "[kembed] %s\n", error.c_str());
    return 2;
  }
  return RUN_ALL_TESTS();
}
