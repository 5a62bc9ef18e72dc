// libFuzzer target: io::parse_text (CSV, TSV, whitespace text matrices,
// quoted cells, pandas' and R's layouts) on arbitrary bytes, under each kind
// of text option. kembed::Error is the parser's documented rejection; any
// other exception, a crash, a sanitizer report or a broken invariant of an
// accepted matrix is a bug.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kembed/core/error.hpp"
#include "kembed/io/text_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using kembed::io::TextOptions;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const TextOptions variants[] = {
      {},
      {TextOptions::Header::yes, 0, ""},
      {TextOptions::Header::no, 1, ""},
      {TextOptions::Header::automatic, 0, "1"},
      {TextOptions::Header::automatic, 0, "x"},
  };
  for (const TextOptions& options : variants) {
    kembed::io::ParsedText parsed;
    try {
      parsed = kembed::io::parse_text(text, "fuzz.csv", options);
    } catch (const kembed::Error&) {
      continue;
    }
    // What the readers downstream rely on.
    if (parsed.rows < 1 || parsed.cols < 1 ||
        parsed.values.size() != static_cast<std::size_t>(parsed.rows * parsed.cols))
      __builtin_trap();
    if (!options.id_column.empty() && parsed.row_ids.size() != static_cast<std::size_t>(parsed.rows))
      __builtin_trap();
    if (parsed.has_header && parsed.column_names.size() != static_cast<std::size_t>(parsed.cols))
      __builtin_trap();
    for (const double v : parsed.values)
      if (!std::isfinite(v)) __builtin_trap();
  }
  return 0;
}
