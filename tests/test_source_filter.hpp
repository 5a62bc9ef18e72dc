#pragma once
// Selection of the tests one source file defines, for the test programs that
// hold several suites (kembed_tests, kembed_cli_tests): --kembed_sources=a.cpp,b.cpp
// runs only the tests GoogleTest records as defined in those files (paths as
// in tests/CMakeLists.txt). MPI-free: both programs' mains use it.
#include <string>

namespace kembed::test {

/// Removes --kembed_sources=... from argv and returns its files ("" if absent).
std::string take_sources_flag(int& argc, char** argv);

/// Sets GoogleTest's filter to every test defined in the comma-separated
/// files `sources` and returns "", or returns the error that refuses them
/// (filter unchanged): a file that defines no test (a renamed or misspelled
/// file would otherwise pass with no test run), no file named, or
/// --gtest_filter given as well. An empty `sources` (no flag) selects nothing
/// and returns "". Deterministic: every rank of a program derives the same.
/// @pre InitGoogleTest has run.
std::string select_sources(const std::string& sources);

}  // namespace kembed::test
