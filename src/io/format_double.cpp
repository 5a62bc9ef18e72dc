#include "kembed/io/format_double.hpp"

#include <charconv>

namespace kembed::io {

char* format_double(char* first, double value) {
  // Shortest round trip never needs more than kMaxDoubleChars, so this
  // cannot fail.
  return std::to_chars(first, first + kMaxDoubleChars, value).ptr;
}

std::string format_double(double value) {
  char buffer[kMaxDoubleChars];
  return std::string(buffer, format_double(buffer, value));
}

}  // namespace kembed::io
