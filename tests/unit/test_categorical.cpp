// The categorical-table parser behind `kembed mca`: codes and category order
// checked by hand-written expectations; malformed tables name line and column.
#include <gtest/gtest.h>

#include "kembed/core/error.hpp"
#include "kembed/io/categorical_file.hpp"

using namespace kembed;

namespace {

std::string failure(const std::string& text) {
  try {
    io::parse_categorical(text, "t.csv");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Categorical, CodesFollowSortedCategories) {
  const auto t = io::parse_categorical(
      "\xEF\xBB\xBF# survey\ncolour, size,\"a, b\"\nred,10,x\n\n\"blue\",2,\"y "
      "\"\"q\"\"\"\nred,-1,x\r\n",
      "t.csv");
  EXPECT_EQ(t.variables, (std::vector<std::string>{"colour", "size", "a, b"}));
  EXPECT_EQ(t.rows, 3);
  EXPECT_EQ(t.levels[0], (std::vector<std::string>{"blue", "red"}));
  EXPECT_EQ(t.levels[1], (std::vector<std::string>{"-1", "2", "10"}));  // numeric order
  EXPECT_EQ(t.levels[2], (std::vector<std::string>{"x", "y \"q\""}));
  EXPECT_EQ(t.codes, (std::vector<std::int32_t>{1, 2, 0, 0, 1, 1, 1, 0, 0}));
}

TEST(Categorical, MalformedTablesNameTheLine) {
  EXPECT_EQ(failure("a,b\n1,2\n3\n"), "t.csv:3: 1 cells, but the header names 2 variables");
  EXPECT_EQ(failure("a,b\n1,\n"),
            "t.csv:2, column 2 (variable 'b'): empty cell; code a missing answer as a category "
            "of its own");
  EXPECT_EQ(failure("a,a\n1,2\n"), "t.csv:1: the header names variable 'a' twice");
  EXPECT_EQ(failure("a,b\n"),
            "t.csv: no data: a header of variable names and at least one row are needed");
  EXPECT_EQ(failure("a,b\n\"x,1\n"), "t.csv:2: a quoted cell is not closed on its line");
}

// An id column (by name or 1-based number) is kept as row ids and is not a
// variable; the codes are those of the same table without it.
TEST(Categorical, IdColumnIsKeptAsRowIdsNotAsAVariable) {
  const std::string text = "colour,who,size\nred,r1,10\nblue,r2,2\nred,,2\n";
  for (const std::string id : {"who", "2"}) {
    const auto t = io::parse_categorical(text, "t.csv", id);
    EXPECT_EQ(t.variables, (std::vector<std::string>{"colour", "size"}));
    EXPECT_EQ(t.ids, (std::vector<std::string>{"r1", "r2", ""}));
    const auto plain = io::parse_categorical("colour,size\nred,10\nblue,2\nred,2\n", "t.csv");
    EXPECT_EQ(t.codes, plain.codes);
    EXPECT_EQ(t.levels, plain.levels);
  }
  EXPECT_TRUE(io::parse_categorical("colour,who\nred,r1\n", "t.csv").ids.empty());
  auto id_failure = [&](const std::string& body, const std::string& id) {
    try {
      io::parse_categorical(body, "t.csv", id);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(id_failure(text, "name"),
            "t.csv:1: --id-column 'name' is not in the header (colour, who, size)");
  EXPECT_EQ(id_failure(text, "4"), "t.csv:1: --id-column 4: columns are numbered 1 to 3");
  EXPECT_EQ(id_failure("who\nr1\n", "who"),
            "t.csv:1: the id column is the only column; no variable is left");
  EXPECT_EQ(id_failure("a,who,b\n1,r1,\n", "who"),
            "t.csv:2, column 3 (variable 'b'): empty cell; code a missing answer as a category "
            "of its own");
  EXPECT_EQ(id_failure("a,who\n1\n", "who"),
            "t.csv:2: 1 cells, but the header names 1 variables and the id column");
}

}  // namespace
