#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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

std::string config_error(const std::string& text) {
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
  EXPECT_EQ(config_error("input = 100% sure %d %%.csv\n"), "");
}

TEST(ConfigFile, ErrorsNameTheFileAndLine) {
  EXPECT_EQ(config_error("colour = blue\n"), "c.ini:1: unrecognised option 'colour'");
  EXPECT_EQ(config_error("# c\n\ninput = x.csv\ncolour = blue\ngamma = 1\n"),
            "c.ini:4: unrecognised option 'colour'");
  EXPECT_EQ(config_error("input = x\ncomponents = two\n")
                .rfind("c.ini:2: the argument ('two') for option 'components' is invalid", 0),
            0u)
      << config_error("input = x\ncomponents = two\n");
  EXPECT_EQ(config_error("input = x\n\n\nno equals sign"),
            "c.ini:4: the options configuration file contains an invalid line 'no equals sign'");
  // The second of two lines for one key is the bad one.
  EXPECT_EQ(config_error("gamma = 1\ninput = x\ngamma = 2\n").rfind("c.ini:3: ", 0), 0u)
      << config_error("gamma = 1\ninput = x\ngamma = 2\n");
  // Line numbers count the lines of the file, CRLF line ends included.
  EXPECT_EQ(config_error("input = x\r\n# c\r\ncolour = 1\r\n"), "c.ini:3: unrecognised option 'colour'");
  // A byte order mark is not part of the first key.
  EXPECT_EQ(config_error("\xEF\xBB\xBFgamma = 0.5\n"), "");
}

// Binary and non-UTF-8 files are not options files; their values would end
// up in run.json, which holds UTF-8 only.
TEST(ConfigFile, BinaryAndNonUtf8TextAreRejected) {
  static const char binary[] = "input = x\ngamma = 1\0\x01\x02";
  EXPECT_EQ(config_error(std::string(binary, sizeof binary - 1)),
            "c.ini:2: not a text file (NUL byte)");
  EXPECT_EQ(config_error("input = x\n# caf\xe9\n"), "c.ini:2: not UTF-8 text");  // Latin-1
  EXPECT_EQ(config_error("input = \xc0\xaf\n"), "c.ini:1: not UTF-8 text");      // overlong '/'
  EXPECT_EQ(config_error("input = \xed\xa0\x80\n"), "c.ini:1: not UTF-8 text");  // surrogate
  EXPECT_EQ(config_error("input = \xf4\x90\x80\x80\n"), "c.ini:1: not UTF-8 text");  // > U+10FFFF
  EXPECT_EQ(config_error("input = caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80.csv\n"), "");
}

namespace {

std::string file_error_of(const std::string& path) {
  po::variables_map vm;
  try {
    kembed::app::parse_config_file(path, options(), vm);
  } catch (const kembed::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ConfigFile, FilesThatAreNotOptionsFiles) {
  char tmpl[] = "/tmp/kembed-config-test-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  EXPECT_EQ(file_error_of(dir), "cannot read config '" + dir + "': is a directory");
  EXPECT_EQ(file_error_of(dir + "/missing.ini"),
            "cannot read config '" + dir + "/missing.ini': No such file or directory");
  // A FIFO is refused without opening it (an open would wait for a writer).
  const std::string fifo = dir + "/fifo.ini";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(file_error_of(fifo), "cannot read config '" + fifo + "': not a regular file");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  const std::string big = dir + "/big.ini";
  std::ofstream(big) << std::string((1 << 20) + 1, '#');
  EXPECT_EQ(file_error_of(big), "cannot read config '" + big + "': larger than 1 MiB, not an options file");
  const std::string good = dir + "/good.ini";
  std::ofstream(good) << "gamma = 0.25\ncolour = red\n";
  EXPECT_EQ(file_error_of(good), good + ":2: unrecognised option 'colour'");
  std::ofstream(good) << "gamma = 0.25\n";
  po::variables_map vm;
  kembed::app::parse_config_file(good, options(), vm);
  EXPECT_DOUBLE_EQ(vm["gamma"].as<double>(), 0.25);
  if (::geteuid() != 0) {  // root reads anything
    ASSERT_EQ(::chmod(good.c_str(), 0), 0);
    EXPECT_EQ(file_error_of(good), "cannot read config '" + good + "': Permission denied");
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

// Boost.ProgramOptions 1.74 filled its message placeholders until none was
// left, so these inputs made kembed loop forever (found by fuzz_ini_config).
TEST(ConfigFile, PlaceholdersAreRejectedInsteadOfHanging) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(config_error("components = %value%\n"),
            "c.ini:1: '%value%' cannot appear in an option name or value");
  EXPECT_EQ(config_error("input = x\nseed%original_token%=1\n"),
            "c.ini:2: '%original_token%' cannot appear in an option name or value");
  EXPECT_EQ(config_error("%invalid_line%\n"),
            "c.ini:1: '%invalid_line%' cannot appear in an option name or value");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_THROW(reject_option_placeholders("--components=%canonical_option%", "command line"),
               kembed::Error);
  EXPECT_NO_THROW(reject_option_placeholders("50%", "command line"));
  EXPECT_NO_THROW(reject_option_placeholders("%%", "command line"));
  EXPECT_NO_THROW(reject_option_placeholders("%Value%", "command line"));
}
