#include <gtest/gtest.h>

#include <random>
#include <string>

#include "kembed/core/error.hpp"
#include "kembed/io/text_parser.hpp"

using kembed::io::parse_text;
using kembed::io::ParsedText;

namespace {

/// The message of the kembed::Error that parsing throws, or "" if none.
std::string error_of(const std::string& text, const std::string& name = "X.csv") {
  try {
    parse_text(text, name);
  } catch (const kembed::Error& e) {
    return e.what();
  }
  return {};
}

void expect_values(const ParsedText& p, std::int64_t rows, std::int64_t cols, const std::vector<double>& values) {
  EXPECT_EQ(p.rows, rows);
  EXPECT_EQ(p.cols, cols);
  EXPECT_EQ(p.values, values);
}

}  // namespace

TEST(TextParser, CommaWithHeader) {
  const auto p = parse_text("x,y,z\n1,2,3\n4,5,6\n", "X.csv");
  EXPECT_TRUE(p.has_header);
  expect_values(p, 2, 3, {1, 2, 3, 4, 5, 6});
}

TEST(TextParser, NoHeaderNoFinalNewline) {
  const auto p = parse_text("1,2\n3,4", "X.csv");
  EXPECT_FALSE(p.has_header);
  expect_values(p, 2, 2, {1, 2, 3, 4});
}

TEST(TextParser, HeaderWithOneNonNumericCell) {
  const auto p = parse_text("1,b\n1,2\n", "X.csv");
  EXPECT_TRUE(p.has_header);
  expect_values(p, 1, 2, {1, 2});
}

TEST(TextParser, CommentsAndBlankLinesAreSkipped) {
  const auto p = parse_text("# made by hand\n\n   # indented comment\na,b\n\n1,2\n  \t\n# mid\n3,4\n\n", "X.csv");
  EXPECT_TRUE(p.has_header);
  expect_values(p, 2, 2, {1, 2, 3, 4});
}

TEST(TextParser, CrlfLineEnds) {
  const auto p = parse_text("a,b\r\n1,2\r\n3,4\r\n", "X.csv");
  expect_values(p, 2, 2, {1, 2, 3, 4});
  const auto w = parse_text("1 2\r\n3 4\r\n", "X.txt");
  expect_values(w, 2, 2, {1, 2, 3, 4});
}

TEST(TextParser, TabsWithSpacesAroundCells) {
  const auto p = parse_text("a\tb\n 1\t2 \n3 \t 4\n", "X.tsv");
  EXPECT_TRUE(p.has_header);
  expect_values(p, 2, 2, {1, 2, 3, 4});
}

TEST(TextParser, WhitespaceRuns) {
  const auto p = parse_text("  1   2   3  \n4 5 6\n", "X.txt");
  expect_values(p, 2, 3, {1, 2, 3, 4, 5, 6});
}

TEST(TextParser, SpacesAroundCommaCells) {
  const auto p = parse_text(" 1 , 2 \n3,  4\n", "X.csv");
  expect_values(p, 2, 2, {1, 2, 3, 4});
}

TEST(TextParser, ScientificNegativeAndSignedNumbers) {
  const auto p = parse_text("-1.5e3,2E-2,+7,-0.25\n.5,5.,1e+2,-3\n", "X.csv");
  expect_values(p, 2, 4, {-1500, 0.02, 7, -0.25, 0.5, 5, 100, -3});
}

TEST(TextParser, ByteOrderMarkIsIgnored) {
  const auto p = parse_text("\xEF\xBB\xBF" "1,2\n", "X.csv");
  EXPECT_FALSE(p.has_header);
  expect_values(p, 1, 2, {1, 2});
}

TEST(TextParser, UnderflowIsZeroNotAnError) {
  const auto p = parse_text("1e-400,1\n", "X.csv");
  expect_values(p, 1, 2, {0, 1});
}

TEST(TextParser, RaggedRowNamesFileLineAndCounts) {
  EXPECT_EQ(error_of("a,b,c\n1,2,3\n\n# c\n4,5\n"), "X.csv:5: expected 3 values, found 2");
  EXPECT_EQ(error_of("1 2\n3 4 5\n", "W.txt"), "W.txt:2: expected 2 values, found 3");
}

TEST(TextParser, NonNumericCellNamesFileLineAndColumn) {
  EXPECT_EQ(error_of("a,b,c\n1,2,3\n4,5,abc\n"), "X.csv:3: column 3: not a number: 'abc'");
  EXPECT_EQ(error_of("1,2\n3,4x\n"), "X.csv:2: column 2: not a number: '4x'");
  EXPECT_EQ(error_of("1\t2\n\t4\n", "T.tsv"), "T.tsv:2: column 1: not a number: ''");
  EXPECT_EQ(error_of("1,2\n3,4,\n"), "X.csv:2: expected 2 values, found 3");
  EXPECT_EQ(error_of("1,2,\n"), "X.csv:1: column 3: not a number: ''");
  EXPECT_EQ(error_of("1,2\n3,+-4\n"), "X.csv:2: column 2: not a number: '+-4'");
  EXPECT_EQ(error_of("1,2\n3,1 2\n"), "X.csv:2: column 2: not a number: '1 2'");
}

TEST(TextParser, DataLineWithStraySeparatorIsNotTakenForAHeader) {
  // Mistaking these for headers would silently drop the first row.
  EXPECT_EQ(error_of("1,,3\n4,5,6\n"), "X.csv:1: column 2: not a number: ''");
  EXPECT_EQ(error_of("1 2\t3\n4\t5\n", "M.txt"), "M.txt:1: column 1: not a number: '1 2'");
  const auto p = parse_text(",x,y\n1,2,3\n", "X.csv");
  EXPECT_TRUE(p.has_header);
  expect_values(p, 1, 3, {1, 2, 3});
}

TEST(TextParser, NonFiniteCellsAreErrors) {
  EXPECT_EQ(error_of("1,nan\n"), "X.csv:1: column 2: non-finite value 'nan'");
  EXPECT_EQ(error_of("a,b\n1,2\nNaN,2\n"), "X.csv:3: column 1: non-finite value 'NaN'");
  EXPECT_EQ(error_of("1,2\n-inf,2\n"), "X.csv:2: column 1: non-finite value '-inf'");
  EXPECT_EQ(error_of("1 Infinity\n"), "X.csv:1: column 2: non-finite value 'Infinity'");
  EXPECT_EQ(error_of("1,1e999\n"), "X.csv:1: column 2: non-finite value '1e999'");
}

TEST(TextParser, EmptyInputs) {
  EXPECT_EQ(error_of(""), "X.csv: no data rows");
  EXPECT_EQ(error_of("# only\n\n  \n# comments\n"), "X.csv: no data rows");
  EXPECT_EQ(error_of("a,b\n# nothing else\n\n"), "X.csv: header line but no data rows");
}

TEST(TextParser, LongBadCellIsShortenedInMessage) {
  const std::string cell(200, 'z');
  const std::string message = error_of("1,2\n1," + cell + "\n");
  EXPECT_NE(message.find("X.csv:2: column 2: not a number: 'zzz"), std::string::npos) << message;
  EXPECT_LT(message.size(), 100u);
}

TEST(TextParser, MissingFileNamesIt) {
  try {
    kembed::io::parse_text_file("/nonexistent/kembed/none.csv");
    FAIL() << "no error";
  } catch (const kembed::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open '/nonexistent/kembed/none.csv'"), std::string::npos);
  }
}

TEST(TextParser, RandomInputOnlyEverThrowsError) {
  // A small in-process fuzz: any outcome is fine except a crash or a foreign exception.
  std::mt19937 gen(7);
  const std::string alphabet = "0123456789.,+-eEnaifINF# \t\r\n\xEFx";
  std::uniform_int_distribution<std::size_t> length(0, 60), pick(0, alphabet.size() - 1);
  for (int trial = 0; trial < 5000; ++trial) {
    std::string text(length(gen), ' ');
    for (char& c : text) c = alphabet[pick(gen)];
    try {
      const auto p = parse_text(text, "F");
      EXPECT_EQ(static_cast<std::int64_t>(p.values.size()), p.rows * p.cols);
    } catch (const kembed::Error&) {
    }
  }
}
