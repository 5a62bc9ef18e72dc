// io::format_double and the CSV writer built on it: exact round trip through
// strtod (an independent parser) and the shortest text.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "kembed/io/csv_writer.hpp"
#include "kembed/io/format_double.hpp"

using kembed::io::format_double;

namespace {

/// True when `a` and `b` have the same bits (so -0 differs from 0).
bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

double parse(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  EXPECT_EQ(*end, '\0') << "'" << text << "' is not one number";
  return v;
}

const std::vector<double>& tricky() {
  using limits = std::numeric_limits<double>;
  static const std::vector<double> values = {
      0.1, 0.2, 0.3, 1.0 / 3, -0.0, 0.0, 1e308, -1e308, limits::max(), -limits::max(),
      limits::min(), limits::denorm_min(), -limits::denorm_min(), limits::min() / 3,
      limits::epsilon(), 1 + limits::epsilon(), 123456789012345678.0, 5e-324, 2.2250738585072009e-308,
      9007199254740993.0, 1e23, 8.41e21, 0.30000000000000004};
  return values;
}

}  // namespace

TEST(FormatDouble, TrickyValuesRoundTripExactly) {
  for (const double v : tricky()) {
    const std::string text = format_double(v);
    EXPECT_LE(text.size(), static_cast<std::size_t>(kembed::io::kMaxDoubleChars));
    EXPECT_TRUE(same_bits(parse(text), v)) << text;
  }
}

TEST(FormatDouble, ShortestText) {
  EXPECT_EQ(format_double(0.1), "0.1");
  EXPECT_EQ(format_double(-0.0), "-0");
  EXPECT_EQ(format_double(1e308), "1e+308");
  EXPECT_EQ(format_double(5e-324), "5e-324");
  EXPECT_EQ(format_double(2.5), "2.5");
  EXPECT_EQ(format_double(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  EXPECT_EQ(format_double(std::numeric_limits<double>::infinity()), "inf");
  // Shortest: dropping the last digit never reads back as the same double.
  // (Large integers printed in full, such as 53165205877497296, are as short
  // in characters as their scientific form; they are exact, not minimal.)
  std::mt19937_64 gen(7);
  for (int t = 0; t < 2000; ++t) {
    double v;
    const std::uint64_t bits = gen();
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isfinite(v)) continue;
    const std::string text = format_double(v);
    if (text.find_first_of(".e") == std::string::npos) continue;
    char shorter[64];
    std::string digits;
    for (const char c : text.substr(0, text.find('e')))
      if (c >= '0' && c <= '9') digits += c;
    digits.erase(0, digits.find_first_not_of('0'));
    digits.erase(digits.find_last_not_of('0') + 1);
    const int significant = static_cast<int>(digits.size());
    if (significant <= 1) continue;
    std::snprintf(shorter, sizeof shorter, "%.*e", significant - 2, v);
    EXPECT_FALSE(same_bits(parse(shorter), v)) << text << " is not the shortest: " << shorter;
  }
}

TEST(FormatDouble, RandomBitsRoundTrip) {
  std::mt19937_64 gen(42);
  for (int t = 0; t < 100000; ++t) {
    double v;
    const std::uint64_t bits = gen();
    std::memcpy(&v, &bits, sizeof v);
    if (std::isnan(v)) continue;
    ASSERT_TRUE(same_bits(parse(format_double(v)), v)) << format_double(v);
  }
}

TEST(FormatDouble, CsvTableReadsBackExactly) {
  std::vector<double> values = tricky();
  values.resize(values.size() / 3 * 3);
  const std::string csv = kembed::io::format_csv({"a", "b", "c"}, values);
  std::vector<double> back;
  std::size_t at = csv.find('\n') + 1;
  EXPECT_EQ(csv.substr(0, at), "a,b,c\n");
  while (at < csv.size()) {
    const std::size_t end = csv.find_first_of(",\n", at);
    back.push_back(parse(csv.substr(at, end - at)));
    at = end + 1;
  }
  ASSERT_EQ(back.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_TRUE(same_bits(back[i], values[i])) << i;
  EXPECT_EQ(csv.back(), '\n');

  const std::string with_ids = kembed::io::format_csv({"x"}, {0.1, -0.0}, "id", {"a,b", "c"});
  EXPECT_EQ(with_ids, "id,x\n\"a,b\",0.1\nc,-0\n");
}

// A table of several MiB reaches the sink in pieces of about 1 MiB (an id
// longer than that in a piece of its own), and the pieces joined read back
// as the table: every id and every double exactly.
TEST(FormatDouble, CsvStreamsInBoundedPieces) {
  const std::size_t rows = 200000, cols = 3, long_id_row = 5;
  std::vector<double> values(rows * cols);
  std::vector<std::string> ids(rows);
  for (std::size_t i = 0; i < rows; ++i) {
    ids[i] = "r" + std::to_string(i);
    for (std::size_t j = 0; j < cols; ++j) values[i * cols + j] = 0.1 * double(i) - double(j) / 3;
  }
  ids[long_id_row] = std::string(3 << 20, 'x');
  std::string text;
  std::vector<std::size_t> pieces;
  kembed::io::write_csv(
      [&](std::string_view piece) {
        pieces.push_back(piece.size());
        text.append(piece);
      },
      {"a", "b", "c"}, values, "id", ids);
  ASSERT_GT(pieces.size(), 8u);
  int oversized = 0;
  for (std::size_t size : pieces)
    if (size > (std::size_t{1} << 20) + 64) {
      ++oversized;
      EXPECT_EQ(size, ids[long_id_row].size() + 1);  // the id and its comma
    }
  EXPECT_EQ(oversized, 1);
  std::size_t at = text.find('\n') + 1;
  ASSERT_EQ(text.substr(0, at), "id,a,b,c\n");
  for (std::size_t i = 0; i < rows; ++i) {
    const std::size_t comma = text.find(',', at);
    ASSERT_EQ(text.substr(at, comma - at), ids[i]) << i;
    at = comma + 1;
    for (std::size_t j = 0; j < cols; ++j) {
      const std::size_t end = text.find_first_of(",\n", at);
      ASSERT_TRUE(same_bits(parse(text.substr(at, end - at)), values[i * cols + j])) << i << "," << j;
      ASSERT_EQ(text[end], j + 1 == cols ? '\n' : ',');
      at = end + 1;
    }
  }
  EXPECT_EQ(at, text.size());
}
