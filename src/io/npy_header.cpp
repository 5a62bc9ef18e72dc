#include "kembed/io/npy_header.hpp"

#include <cctype>
#include <cstring>
#include <limits>
#include <vector>

#include "io/read_only_file.hpp"
#include "kembed/core/error.hpp"

namespace kembed::io {

namespace {

constexpr std::string_view magic = "\x93NUMPY";

std::uint32_t little_endian_uint(std::string_view bytes, std::size_t pos, int width) {
  std::uint32_t value = 0;
  for (int i = width - 1; i >= 0; --i)
    value = (value << 8) | static_cast<unsigned char>(bytes[pos + static_cast<std::size_t>(i)]);
  return value;
}

/// Printable rendering of header text for messages (bounded, no control chars).
std::string printable(std::string_view s) {
  constexpr std::size_t max_shown = 40;
  std::string out;
  for (char c : s.substr(0, max_shown))
    out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  if (s.size() > max_shown) out += "...";
  return out;
}

/// Recursive-descent reader for the Python literal dict of a .npy header:
/// {'descr': '<f8', 'fortran_order': False, 'shape': (37, 5), }
class DictReader {
 public:
  DictReader(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(name_ + ": malformed .npy header: " + what);
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r'))
      ++pos_;
  }

  /// Skips space, then consumes `c` if it is next.
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void expect(char c) {
    if (!accept(c)) fail(std::string("expected '") + c + "'");
  }

  bool peek(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }

  std::string string_literal() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) fail("expected a string");
    const char quote = text_[pos_++];
    const std::size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string value(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return value;
  }

  bool boolean_literal() {
    skip_space();
    for (const auto& [word, value] : {std::pair<std::string_view, bool>{"True", true}, {"False", false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    fail("expected True or False");
  }

  std::int64_t integer_literal() {
    skip_space();
    const std::size_t start = pos_;
    std::int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      const int digit = text_[pos_++] - '0';
      if (value > (std::numeric_limits<std::int64_t>::max() - digit) / 10) fail("shape extent too large");
      value = value * 10 + digit;
    }
    if (pos_ == start) fail("expected a non-negative integer in 'shape'");
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2 long suffix
    return value;
  }

  std::vector<std::int64_t> tuple_literal() {
    expect('(');
    std::vector<std::int64_t> items;
    while (!accept(')')) {
      if (items.size() >= 64) fail("too many dimensions in 'shape'");
      items.push_back(integer_literal());
      if (!accept(',')) {
        expect(')');
        break;
      }
    }
    return items;
  }

  /// Skips a value of a key kembed does not use (only simple literals).
  void skip_value() {
    skip_space();
    if (peek('\'') || peek('"')) {
      string_literal();
    } else if (peek('(')) {
      tuple_literal();
    } else {
      boolean_literal();
    }
  }

  bool at_end() {
    skip_space();
    return pos_ == text_.size();
  }

 private:
  std::string_view text_;
  const std::string& name_;
  std::size_t pos_ = 0;
};

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

int item_size_of(const std::string& descr, const std::string& name) {
  const std::string supported = "; expected '<f8' (float64) or '<f4' (float32), little-endian";
  if (descr.size() == 3 && descr[1] == 'f' && (descr[2] == '8' || descr[2] == '4')) {
    const char order = descr[0];
    if (order == '>') throw Error(name + ": dtype '" + descr + "' is big-endian, which is not supported" + supported);
    // '=' (native) and '|' (not applicable) mean host order, i.e. little-endian only here.
    if (order == '<' || ((order == '=' || order == '|') && host_is_little_endian()))
      return descr[2] - '0';
  }
  throw Error(name + ": dtype '" + printable(descr) + "' is not supported" + supported);
}

}  // namespace

std::int64_t npy_header_size(std::string_view bytes, const std::string& name) {
  if (bytes.size() < magic.size() + 2 || bytes.substr(0, magic.size()) != magic)
    throw Error(name + ": not a .npy file (missing \\x93NUMPY magic)");
  const int major = static_cast<unsigned char>(bytes[6]);
  const int minor = static_cast<unsigned char>(bytes[7]);
  int length_width = 0;
  if (major == 1 && minor == 0) length_width = 2;
  if ((major == 2 || major == 3) && minor == 0) length_width = 4;
  if (length_width == 0)
    throw Error(name + ": unsupported .npy format version " + std::to_string(major) + "." +
                std::to_string(minor) + " (expected 1.0, 2.0 or 3.0)");
  const std::size_t preamble = 8 + static_cast<std::size_t>(length_width);
  if (bytes.size() < preamble) throw Error(name + ": truncated .npy header");
  return static_cast<std::int64_t>(preamble) + little_endian_uint(bytes, 8, length_width);
}

NpyArrayHeader parse_npy_array_header(std::string_view bytes, const std::string& name) {
  const std::int64_t total = npy_header_size(bytes, name);
  if (static_cast<std::int64_t>(bytes.size()) < total)
    throw Error(name + ": truncated .npy header (needs " + std::to_string(total) + " bytes, have " +
                std::to_string(bytes.size()) + ")");
  const std::size_t preamble = bytes[6] == 1 ? 10 : 12;
  DictReader reader(bytes.substr(preamble, static_cast<std::size_t>(total) - preamble), name);

  NpyArrayHeader header;
  bool have_descr = false, have_order = false, have_shape = false;
  reader.expect('{');
  while (!reader.accept('}')) {
    const std::string key = reader.string_literal();
    reader.expect(':');
    if (key == "descr") {
      if (reader.peek('[')) throw Error(name + ": structured .npy dtypes are not supported; expected '<f8' or '<f4'");
      header.descr = reader.string_literal();
      have_descr = true;
    } else if (key == "fortran_order") {
      header.fortran_order = reader.boolean_literal();
      have_order = true;
    } else if (key == "shape") {
      header.shape = reader.tuple_literal();
      have_shape = true;
    } else {
      reader.skip_value();
    }
    if (!reader.accept(',')) {
      reader.expect('}');
      break;
    }
  }
  if (!reader.at_end()) reader.fail("unexpected text after the dictionary");
  if (!have_descr || !have_order || !have_shape)
    reader.fail("missing key '" + std::string(!have_descr ? "descr" : !have_order ? "fortran_order" : "shape") + "'");
  header.data_offset = total;
  return header;
}

NpyHeader parse_npy_header(std::string_view bytes, const std::string& name, bool allow_vector) {
  const NpyArrayHeader array = parse_npy_array_header(bytes, name);
  const std::int64_t total = array.data_offset;
  const std::string& descr = array.descr;
  const bool fortran_order = array.fortran_order;
  std::vector<std::int64_t> shape = array.shape;
  const auto fail = [&](const std::string& what) { throw Error(name + ": malformed .npy header: " + what); };

  NpyHeader header;
  header.descr = descr;
  header.item_size = item_size_of(descr, name);
  if (fortran_order)
    throw Error(name + ": Fortran-ordered .npy is not supported; save with numpy.ascontiguousarray");
  if (shape.size() == 1 && allow_vector && shape[0] > 0) {
    header.ndim = 1;
    shape.push_back(1);
  }
  if (shape.size() == 1)
    throw Error(name + ": .npy array is 1-D (shape " + shape_text(shape) +
                "); expected a 2-D matrix, e.g. save x.reshape(-1, 1)");
  if (shape.size() != 2)
    throw Error(name + ": .npy array has " + std::to_string(shape.size()) + " dimensions (shape " +
                shape_text(shape) + "); expected a 2-D matrix");
  if (shape[0] == 0 || shape[1] == 0)
    throw Error(name + ": .npy array has shape " + shape_text(shape) +
                "; a matrix needs at least one row and one column");
  // rows * cols * item_size + offset must fit in a file offset.
  const std::int64_t limit = (std::numeric_limits<std::int64_t>::max() - total) / header.item_size;
  if (shape[0] > limit / shape[1]) fail("shape " + shape_text(shape) + " is too large");
  header.rows = shape[0];
  header.cols = shape[1];
  header.data_offset = total;
  return header;
}

}  // namespace kembed::io
