// --kembed_sources: the tests of named source files (test_source_filter.hpp).
#include "test_source_filter.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace kembed::test {
namespace {

constexpr const char* kSourcesFlag = "--kembed_sources=";

/// True when `file` (GoogleTest's record, __FILE__) is `source` or ends in "/source".
bool defined_in(const char* file, const std::string& source) {
  const std::string path = file ? file : "";
  if (path.size() < source.size()) return false;
  if (path.compare(path.size() - source.size(), source.size(), source) != 0) return false;
  return path.size() == source.size() || path[path.size() - source.size() - 1] == '/';
}

/// The gtest filter of every test defined in the comma-separated files, with
/// the files that define none (or an empty list) added to `error`.
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

std::string select_sources(const std::string& sources) {
  if (sources.empty()) return "";
  std::string error;
  if (GTEST_FLAG_GET(filter) != "*") error = "give --gtest_filter or --kembed_sources, not both";
  const std::string filter = filter_of_sources(sources, error);
  if (error.empty()) GTEST_FLAG_SET(filter, filter);
  return error;
}

}  // namespace kembed::test
