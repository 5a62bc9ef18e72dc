#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>

#include "kembed/app/config_file.hpp"
#include "kembed/core/error.hpp"

namespace po = boost::program_options;
using kembed::app::parse_config;
using kembed::app::reject_option_placeholders;

namespace {

po::options_description options() {
  po::options_description d;
  d.add_options()("input", po::value<std::string>())("components", po::value<int>())(
      "gamma", po::value<double>())("quiet", po::bool_switch());
  return d;
}

std::string error_of(const std::string& text) {
  po::variables_map vm;
  std::istringstream in(text);
  try {
    parse_config(in, options(), "c.ini", vm);
  } catch (const kembed::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ConfigFile, ReadsKeysAndTheCommandLineWins) {
  po::variables_map vm;
  const char* argv[] = {"kembed", "--components", "5"};
  po::store(po::parse_command_line(3, argv, options()), vm);
  std::istringstream in("# a comment\ninput = x.csv\ncomponents = 3\ngamma = 0.5\nquiet = true\n");
  parse_config(in, options(), "c.ini", vm);
  po::notify(vm);
  EXPECT_EQ(vm["input"].as<std::string>(), "x.csv");
  EXPECT_EQ(vm["components"].as<int>(), 5);
  EXPECT_DOUBLE_EQ(vm["gamma"].as<double>(), 0.5);
  EXPECT_TRUE(vm["quiet"].as<bool>());
  // '%' that is not a placeholder is an ordinary character.
  EXPECT_EQ(error_of("input = 100% sure %d %%.csv\n"), "");
}

TEST(ConfigFile, ErrorsNameTheFile) {
  EXPECT_EQ(error_of("colour = blue\n"), "c.ini: unrecognised option 'colour'");
  EXPECT_EQ(error_of("components = two\n").rfind("c.ini: the argument ('two') for option", 0), 0u);
  EXPECT_EQ(error_of("no equals sign\n").rfind("c.ini: ", 0), 0u);
}

// Boost.ProgramOptions 1.74 filled its message placeholders until none was
// left, so these inputs made kembed loop forever (found by fuzz_ini_config).
TEST(ConfigFile, PlaceholdersAreRejectedInsteadOfHanging) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of("components = %value%\n"),
            "c.ini: '%value%' cannot appear in an option name or value");
  EXPECT_EQ(error_of("seed%original_token%=1\n"),
            "c.ini: '%original_token%' cannot appear in an option name or value");
  EXPECT_EQ(error_of("%invalid_line%\n"),
            "c.ini: '%invalid_line%' cannot appear in an option name or value");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_THROW(reject_option_placeholders("--components=%canonical_option%", "command line"),
               kembed::Error);
  EXPECT_NO_THROW(reject_option_placeholders("50%", "command line"));
  EXPECT_NO_THROW(reject_option_placeholders("%%", "command line"));
  EXPECT_NO_THROW(reject_option_placeholders("%Value%", "command line"));
}
