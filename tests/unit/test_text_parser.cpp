#include <gtest/gtest.h>

#include <random>
#include <string>

#include "kembed/core/error.hpp"
#include "kembed/io/csv_writer.hpp"
#include "kembed/io/text_parser.hpp"

using kembed::io::parse_text;
using kembed::io::ParsedText;
using kembed::io::TextOptions;
using Header = kembed::io::TextOptions::Header;

namespace {

/// The message of the kembed::Error that parsing throws, or "" if none.
std::string error_of(const std::string& text, const std::string& name = "X.csv",
                     const TextOptions& options = {}) {
  try {
    parse_text(text, name, options);
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
  const std::string alphabet = "0123456789.,+-eEnaifINF# \t\r\n\xEFx\"\"";
  std::uniform_int_distribution<std::size_t> length(0, 60), pick(0, alphabet.size() - 1);
  const TextOptions variants[] = {{}, {Header::yes, 0, ""}, {Header::no, 1, ""}, {Header::automatic, 0, "1"}};
  for (int trial = 0; trial < 5000; ++trial) {
    std::string text(length(gen), ' ');
    for (char& c : text) c = alphabet[pick(gen)];
    try {
      const auto p = parse_text(text, "F", variants[trial % 4]);
      EXPECT_EQ(static_cast<std::int64_t>(p.values.size()), p.rows * p.cols);
      if (!variants[trial % 4].id_column.empty()) {
        EXPECT_EQ(static_cast<std::int64_t>(p.row_ids.size()), p.rows);
      }
      if (p.has_header) {
        EXPECT_EQ(static_cast<std::int64_t>(p.column_names.size()), p.cols);
      }
    } catch (const kembed::Error&) {
    }
  }
}

// --- Files as pandas and R write them (literal strings, as those writers produce) ---

TEST(TextParser, PandasUnnamedFrameHeaderIsAHeader) {
  // DataFrame(x).to_csv(index=False) of an unnamed 300 x 16 frame: labels 0..15.
  std::string text;
  for (int j = 0; j < 16; ++j) text += (j ? "," : "") + std::to_string(j);
  text += "\n";
  std::vector<double> expected;
  for (int i = 0; i < 300; ++i)
    for (int j = 0; j < 16; ++j) {
      const double v = i * 16 + j + 0.25;
      expected.push_back(v);
      text += std::to_string(v) + (j == 15 ? "\n" : ",");
    }
  const auto p = parse_text(text, "X.csv");
  EXPECT_TRUE(p.has_header);
  expect_values(p, 300, 16, expected);
  ASSERT_EQ(p.column_names.size(), 16u);
  EXPECT_EQ(p.column_names.front(), "0");
  EXPECT_EQ(p.column_names.back(), "15");
  // Both readings are numbers, so the decision is told.
  EXPECT_NE(p.note.find("first line '0,1,2,3"), std::string::npos) << p.note;
  EXPECT_NE(p.note.find("read as a header (pandas' column labels 0..15)"), std::string::npos) << p.note;
}

TEST(TextParser, PandasIndexAndHeader) {
  // DataFrame(x).to_csv(): an empty cell, the labels, then the index in every row.
  const auto p = parse_text(",0,1,2\n0,1.5,2.5,3.5\n1,4,5,6\n", "X.csv");
  EXPECT_TRUE(p.has_header);
  EXPECT_EQ(p.index_cols, 1);
  expect_values(p, 2, 3, {1.5, 2.5, 3.5, 4, 5, 6});
  EXPECT_EQ(p.column_names, (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_NE(p.note.find("column 1 holds row names"), std::string::npos) << p.note;
  // A named frame with its index: the header's empty first cell says the same.
  const auto q = parse_text(",x,y\n0,1,2\n1,3,4\n", "X.csv");
  EXPECT_EQ(q.index_cols, 1);
  expect_values(q, 2, 2, {1, 2, 3, 4});
  EXPECT_EQ(q.column_names, (std::vector<std::string>{"x", "y"}));
}

TEST(TextParser, RWriteCsv) {
  // write.csv(as.data.frame(x)): quoted header with an empty first name, quoted row names.
  const std::string text = "\"\",\"V1\",\"V2\"\n\"1\",1.5,2.5\n\"2\",-3,4e-1\n";
  const auto p = parse_text(text, "X.csv");
  EXPECT_TRUE(p.has_header);
  EXPECT_EQ(p.index_cols, 1);
  expect_values(p, 2, 2, {1.5, 2.5, -3, 0.4});
  EXPECT_EQ(p.column_names, (std::vector<std::string>{"V1", "V2"}));
  EXPECT_TRUE(p.row_ids.empty());
  // The row names as ids: column 1 of the file.
  const auto ids = parse_text(text, "X.csv", {Header::automatic, 0, "1"});
  EXPECT_EQ(ids.row_ids, (std::vector<std::string>{"1", "2"}));
  expect_values(ids, 2, 2, {1.5, 2.5, -3, 0.4});
}

TEST(TextParser, RWriteTableHeaderOneShort) {
  // write.table(x): space separated, the header has no cell over the row names.
  const auto p = parse_text("\"V1\" \"V2\"\n\"a\" 1.5 2.5\n\"b\" 3.5 4.5\n", "X.txt");
  EXPECT_EQ(p.index_cols, 1);
  expect_values(p, 2, 2, {1.5, 2.5, 3.5, 4.5});
  EXPECT_EQ(p.column_names, (std::vector<std::string>{"V1", "V2"}));
  EXPECT_NE(p.note.find("one name fewer"), std::string::npos) << p.note;
}

TEST(TextParser, QuotedNumbersInTheFirstRowAreData) {
  const auto p = parse_text("\"1.5\",\"2.5\"\n3,\"4\"\n", "X.csv");
  EXPECT_FALSE(p.has_header);
  expect_values(p, 2, 2, {1.5, 2.5, 3, 4});
  EXPECT_TRUE(p.note.empty()) << p.note;
  // Quoted names make a header; quoted numbers are numbers on every line.
  const auto q = parse_text("\"a\",\"b\"\n\"1\",\" -2e1 \"\n", "X.csv");
  EXPECT_TRUE(q.has_header);
  expect_values(q, 1, 2, {1, -20});
}

TEST(TextParser, HeaderYesAndNo) {
  const auto yes = parse_text("1,2\n3,4\n", "X.csv", {Header::yes, 0, ""});
  EXPECT_TRUE(yes.has_header);
  expect_values(yes, 1, 2, {3, 4});
  EXPECT_EQ(yes.column_names, (std::vector<std::string>{"1", "2"}));
  const auto no = parse_text("0,1\n2,3\n", "X.csv", {Header::no, 0, ""});
  EXPECT_FALSE(no.has_header);
  expect_values(no, 2, 2, {0, 1, 2, 3});
  EXPECT_TRUE(no.note.empty());
  EXPECT_EQ(error_of("x,y\n1,2\n", "X.csv", {Header::no, 0, ""}), "X.csv:1: column 1: not a number: 'x'");
  EXPECT_EQ(error_of("x,y\n", "X.csv", {Header::yes, 0, ""}), "X.csv: header line but no data rows");
}

TEST(TextParser, IndexColumns) {
  const auto one = parse_text("id,x,y\nr1,1,2\n\"r 2\",3,4\n", "X.csv", {Header::automatic, 1, ""});
  expect_values(one, 2, 2, {1, 2, 3, 4});
  EXPECT_EQ(one.column_names, (std::vector<std::string>{"x", "y"}));
  const auto two = parse_text("a,b,1,2\nc,d,3,4\n", "X.csv", {Header::no, 2, ""});
  expect_values(two, 2, 2, {1, 2, 3, 4});
  EXPECT_EQ(error_of("1,2\n3,4\n", "X.csv", {Header::no, 2, ""}),
            "X.csv:1: --index-col 2 leaves no data column (the line has 2 values)");
}

TEST(TextParser, IdColumnByNameAndNumber) {
  const std::string text = "x,name,y\n1,\"alice, A\",2\n3,bob,4\n5,\"say \"\"hi\"\"\",6\n";
  const auto by_name = parse_text(text, "X.csv", {Header::automatic, 0, "name"});
  expect_values(by_name, 3, 2, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(by_name.row_ids, (std::vector<std::string>{"alice, A", "bob", "say \"hi\""}));
  EXPECT_EQ(by_name.column_names, (std::vector<std::string>{"x", "y"}));
  const auto by_number = parse_text(text, "X.csv", {Header::automatic, 0, "2"});
  EXPECT_EQ(by_number.values, by_name.values);
  EXPECT_EQ(by_number.row_ids, by_name.row_ids);
  // Numbers count index columns: the id may be one of them.
  const auto in_index = parse_text("a,b,c\nr1,1,2\nr2,3,4\n", "X.csv", {Header::automatic, 1, "1"});
  EXPECT_EQ(in_index.row_ids, (std::vector<std::string>{"r1", "r2"}));
  expect_values(in_index, 2, 2, {1, 2, 3, 4});
  // Without a header, by number only.
  const auto plain = parse_text("7,1\n8,2\n", "X.csv", {Header::automatic, 0, "1"});
  EXPECT_EQ(plain.row_ids, (std::vector<std::string>{"7", "8"}));
  expect_values(plain, 2, 1, {1, 2});
}

TEST(TextParser, IdColumnErrors) {
  EXPECT_EQ(error_of("x,y\n1,2\n", "X.csv", {Header::automatic, 0, "z"}),
            "X.csv: --id-column 'z': no such column in the header (it has: x, y)");
  EXPECT_EQ(error_of("1,2\n1,2\n", "X.csv", {Header::automatic, 0, "z"}),
            "X.csv: --id-column 'z' names a column, but the file has no header line (give its number instead)");
  EXPECT_EQ(error_of("1,2\n", "X.csv", {Header::automatic, 0, "3"}),
            "X.csv: --id-column 3: the file has only 2 columns");
  EXPECT_EQ(error_of("1,2\n", "X.csv", {Header::automatic, 0, "0"}),
            "X.csv: --id-column 0: column numbers start at 1");
  EXPECT_EQ(error_of("x,x,y\n1,2,3\n", "X.csv", {Header::automatic, 0, "x"}),
            "X.csv: --id-column 'x': 2 columns of the header have that name (give the column number instead)");
  EXPECT_EQ(error_of("a\nr1\n", "X.csv", {Header::automatic, 0, "a"}),
            "X.csv:2: no data column left besides the index and id columns");
}

TEST(TextParser, AmbiguousFirstLineGivesANote) {
  // Labels then data: a header (told).
  const auto header = parse_text("0,1,2\n5,6,7\n", "X.csv");
  EXPECT_TRUE(header.has_header);
  expect_values(header, 1, 3, {5, 6, 7});
  EXPECT_NE(header.note.find("give --header no if it is data"), std::string::npos) << header.note;
  // Twice the same "labels": data (told).
  const auto data = parse_text("0,1,2\n0,1,2\n5,6,7\n", "X.csv");
  EXPECT_FALSE(data.has_header);
  expect_values(data, 3, 3, {0, 1, 2, 0, 1, 2, 5, 6, 7});
  EXPECT_NE(data.note.find("but so does the next line: read as data"), std::string::npos) << data.note;
  // Other numbers are plainly data, and a plain header needs no note.
  EXPECT_TRUE(parse_text("1,2,3\n4,5,6\n", "X.csv").note.empty());
  EXPECT_TRUE(parse_text("0,2\n4,5\n", "X.csv").note.empty());
  EXPECT_TRUE(parse_text("x,y\n4,5\n", "X.csv").note.empty());
}

TEST(TextParser, QuotingErrorsNameLineAndColumn) {
  EXPECT_EQ(error_of("a,b\n1,\"x\"\n"), "X.csv:2: column 2: not a number: '\"x\"'");
  EXPECT_EQ(error_of("a,b\n1,\"2\n"),
            "X.csv:2: column 2: unterminated quote (a quoted cell cannot span lines): '\"2'");
  EXPECT_EQ(error_of("a,b\n\"1\"x,2\n"), "X.csv:2: column 1: text after the closing quote: '\"1\"x'");
  EXPECT_EQ(error_of("a,b,c,d\n1,2\n"), "X.csv:1: header has 4 names, but line 2 has 2 values");
  EXPECT_EQ(error_of("a,b\n1,\"nan\"\n"), "X.csv:2: column 2: non-finite value '\"nan\"'");
  // Quoted text is fine in index and id columns only.
  EXPECT_EQ(error_of("\"r\",\"s\",1\n", "X.csv", {Header::no, 1, ""}), "X.csv:1: column 2: not a number: '\"s\"'");
}

TEST(TextParser, QuotedSeparatorsStayInTheirCell) {
  const auto tsv = parse_text("\"a,b\"\tc\n1\t2\n", "X.tsv");
  EXPECT_EQ(tsv.column_names, (std::vector<std::string>{"a,b", "c"}));
  expect_values(tsv, 1, 2, {1, 2});
  const auto ws = parse_text("\"a b\" c\n1 2\n", "X.txt");
  EXPECT_EQ(ws.column_names, (std::vector<std::string>{"a b", "c"}));
  expect_values(ws, 1, 2, {1, 2});
}

TEST(TextParser, CsvWithIdsReadsBackThroughIdColumn) {
  // format_csv's id column, read back with --id-column: the same ids and the same doubles.
  const std::vector<std::string> ids = {"a", "b,c", "say \"hi\"", "#4", " 5", "6"};
  std::vector<double> values;
  for (int i = 0; i < 12; ++i) values.push_back(1.0 / (i + 3) - 0.1 * i);
  const std::string text = kembed::io::format_csv({"c1", "c2"}, values, "id", ids);
  EXPECT_EQ(text.substr(0, 9), "id,c1,c2\n");
  const auto p = parse_text(text, "E.csv", {Header::automatic, 0, "id"});
  EXPECT_EQ(p.row_ids, ids);
  EXPECT_EQ(p.column_names, (std::vector<std::string>{"c1", "c2"}));
  expect_values(p, 6, 2, values);
  EXPECT_THROW(kembed::io::format_csv({"c1", "c2"}, values, "id", {"x"}), kembed::Error);
}
