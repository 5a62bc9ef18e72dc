#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "kembed/core/error.hpp"
#include "kembed/io/npy_header.hpp"

using kembed::io::NpyHeader;
using kembed::io::parse_npy_header;

namespace {

/// A .npy preamble and header written from the format spec: magic, version,
/// little-endian header length (2 bytes for 1.0, 4 for 2.0/3.0), then the
/// dict padded with spaces and ended by '\n' so the data starts 64-aligned.
std::string npy_header(const std::string& dict, int major = 1) {
  const std::size_t preamble = major == 1 ? 10 : 12;
  std::string text = dict;
  const std::size_t unpadded = preamble + text.size() + 1;
  text.append((64 - unpadded % 64) % 64, ' ');
  text += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  const std::size_t width = major == 1 ? 2 : 4;
  for (std::size_t i = 0; i < width; ++i) out += static_cast<char>((text.size() >> (8 * i)) & 0xff);
  return out + text;
}

std::string dict(const std::string& descr, const std::string& order, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape + ", }";
}

std::string npy_error(const std::string& bytes) {
  try {
    parse_npy_header(bytes, "M.npy");
  } catch (const kembed::Error& e) {
    return e.what();
  }
  return {};
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(NpyHeader, Version1Float64) {
  const std::string bytes = npy_header(dict("<f8", "False", "(37, 5)"));
  const NpyHeader h = parse_npy_header(bytes + std::string(37 * 5 * 8, '\0'), "M.npy");
  EXPECT_EQ(h.item_size, 8);
  EXPECT_EQ(h.rows, 37);
  EXPECT_EQ(h.cols, 5);
  EXPECT_EQ(h.data_offset, static_cast<std::int64_t>(bytes.size()));
  EXPECT_EQ(h.data_offset % 64, 0);
  EXPECT_EQ(kembed::io::npy_header_size(bytes, "M.npy"), h.data_offset);
}

TEST(NpyHeader, Version2Float32) {
  const std::string bytes = npy_header(dict("<f4", "False", "(3, 1)"), 2);
  const NpyHeader h = parse_npy_header(bytes, "M.npy");
  EXPECT_EQ(h.item_size, 4);
  EXPECT_EQ(h.rows, 3);
  EXPECT_EQ(h.cols, 1);
  EXPECT_EQ(h.data_offset, static_cast<std::int64_t>(bytes.size()));
}

TEST(NpyHeader, Version3KeyOrderDoubleQuotesAndNoTrailingComma) {
  const NpyHeader h =
      parse_npy_header(npy_header("{\"shape\": (2,3), \"fortran_order\": False, \"descr\": \"<f8\"}", 3), "M.npy");
  EXPECT_EQ(h.rows, 2);
  EXPECT_EQ(h.cols, 3);
}

TEST(NpyHeader, NativeOrderMarksAccepted) {
  EXPECT_EQ(parse_npy_header(npy_header(dict("=f8", "False", "(2, 2)")), "M.npy").item_size, 8);
  EXPECT_EQ(parse_npy_header(npy_header(dict("|f4", "False", "(2, 2)")), "M.npy").item_size, 4);
}

TEST(NpyHeader, FortranOrderRefused) {
  EXPECT_EQ(npy_error(npy_header(dict("<f8", "True", "(4, 2)"))),
            "M.npy: Fortran-ordered .npy is not supported; save with numpy.ascontiguousarray");
}

TEST(NpyHeader, OneDimensionalRefused) {
  const std::string message = npy_error(npy_header(dict("<f8", "False", "(37,)")));
  EXPECT_TRUE(contains(message, "M.npy: .npy array is 1-D (shape (37,))")) << message;
  EXPECT_TRUE(contains(message, "2-D")) << message;
}

TEST(NpyHeader, OtherDimensionsAndEmptyShapesRefused) {
  EXPECT_TRUE(contains(npy_error(npy_header(dict("<f8", "False", "(2, 3, 4)"))), "has 3 dimensions"));
  EXPECT_TRUE(contains(npy_error(npy_header(dict("<f8", "False", "()"))), "has 0 dimensions"));
  EXPECT_TRUE(contains(npy_error(npy_header(dict("<f8", "False", "(0, 5)"))), "at least one row"));
  EXPECT_TRUE(contains(npy_error(npy_header(dict("<f8", "False", "(5, 0)"))), "at least one row"));
}

TEST(NpyHeader, BigEndianAndOtherDtypesRefusedByName) {
  const std::string big = npy_error(npy_header(dict(">f8", "False", "(2, 2)")));
  EXPECT_TRUE(contains(big, "M.npy: dtype '>f8' is big-endian")) << big;
  EXPECT_TRUE(contains(npy_error(npy_header(dict("<i8", "False", "(2, 2)"))), "dtype '<i8' is not supported"));
  EXPECT_TRUE(contains(npy_error(npy_header(dict("<f2", "False", "(2, 2)"))), "dtype '<f2' is not supported"));
  EXPECT_TRUE(contains(npy_error(npy_header(dict("<c16", "False", "(2, 2)"))), "dtype '<c16'"));
  EXPECT_TRUE(contains(npy_error(npy_header("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2, 2)}")),
                       "structured"));
}

TEST(NpyHeader, BadMagicAndVersion) {
  EXPECT_TRUE(contains(npy_error("PK\x03\x04 not numpy at all"), "M.npy: not a .npy file"));
  std::string v9 = npy_header(dict("<f8", "False", "(2, 2)"));
  v9[6] = 9;
  EXPECT_TRUE(contains(npy_error(v9), "unsupported .npy format version 9.0"));
}

TEST(NpyHeader, MalformedDictionaries) {
  EXPECT_TRUE(contains(npy_error(npy_header("{'descr': '<f8', 'shape': (2, 2)}")), "missing key 'fortran_order'"));
  EXPECT_TRUE(contains(npy_error(npy_header("{'descr': '<f8', 'fortran_order': Maybe, 'shape': (2, 2)}")),
                       "malformed .npy header"));
  EXPECT_TRUE(contains(npy_error(npy_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2, -2)}")),
                       "malformed .npy header"));
  EXPECT_TRUE(contains(npy_error(npy_header("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999, 2)}")),
                       "too large"));
  EXPECT_TRUE(contains(npy_error(npy_header("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 2)}")),
                       "too large"));
  EXPECT_TRUE(contains(npy_error(npy_header("{'descr: '<f8'")), "malformed .npy header"));
}

TEST(NpyHeader, TruncatedHeaderDoesNotCrash) {
  const std::string full = npy_header(dict("<f8", "False", "(37, 5)"), 2);
  for (std::size_t n = 0; n < full.size(); ++n) {
    const std::string message = npy_error(full.substr(0, n));
    EXPECT_TRUE(contains(message, "M.npy: ")) << "prefix " << n << ": " << message;
  }
  EXPECT_TRUE(contains(npy_error(full.substr(0, 20)), "truncated .npy header (needs 128 bytes, have 20)"));
}

TEST(NpyHeader, EveryByteFlipOnlyEverThrowsError) {
  const std::string good = npy_header(dict("<f4", "False", "(10, 20)"), 1);
  for (std::size_t i = 0; i < good.size(); ++i) {
    for (int value : {0, 0x27, 0x28, 0x29, 0x2c, 0x3a, 0x7b, 0x7d, 0xff}) {
      std::string bytes = good;
      bytes[i] = static_cast<char>(value);
      try {
        const NpyHeader h = parse_npy_header(bytes, "F");
        EXPECT_GT(h.rows, 0);
        EXPECT_GT(h.cols, 0);
        EXPECT_LE(h.data_offset, static_cast<std::int64_t>(bytes.size()));
      } catch (const kembed::Error&) {
      }
    }
  }
}
