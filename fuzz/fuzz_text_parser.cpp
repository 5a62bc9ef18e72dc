// libFuzzer target: io::parse_text (CSV, TSV, whitespace text matrices) on
// arbitrary bytes. kembed::Error is the parser's documented rejection; any
// other exception, a crash, a sanitizer report or a broken invariant of an
// accepted matrix is a bug.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kembed/core/error.hpp"
#include "kembed/io/text_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  kembed::io::ParsedText parsed;
  try {
    parsed = kembed::io::parse_text(text, "fuzz.csv");
  } catch (const kembed::Error&) {
    return 0;
  }
  // What the readers downstream rely on.
  if (parsed.rows < 1 || parsed.cols < 1 ||
      parsed.values.size() != static_cast<std::size_t>(parsed.rows * parsed.cols))
    __builtin_trap();
  for (const double v : parsed.values)
    if (!std::isfinite(v)) __builtin_trap();
  return 0;
}
