// libFuzzer target: the Matrix Market parser (io::parse_mtx: banner, size
// line, real/integer/pattern entries, general/symmetric) on arbitrary text,
// then what the reader does with an accepted matrix: the split of its rows
// over 1 to 4 ranks and each part put into canonical CSR form.
// kembed::Error is the documented rejection; anything else is a bug, as is
// an accepted matrix that breaks a CSR invariant (fuzz/csr_invariants.hpp).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "csr_invariants.hpp"
#include "io/mtx_parser.hpp"
#include "kembed/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace io = kembed::io;
  using kembed::fuzz::require;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Rows cost 16 bytes each on rank 0 whatever the file's length; the
  // bound keeps the fuzzer inside -rss_limit_mb and tests the refusal.
  constexpr std::int64_t max_rows = 1 << 20;
  io::MtxMatrix m;
  try {
    m = io::parse_mtx(text, "fuzz.mtx", max_rows);
  } catch (const kembed::Error&) {
    return 0;
  }
  require(m.rows <= max_rows);
  kembed::fuzz::check_indptr(m.rows, m.cols, m.indptr, static_cast<std::int64_t>(m.columns.size()));
  require(m.values.size() == m.columns.size());
  for (std::int64_t c : m.columns) require(c >= 0 && c < m.cols);
  for (double v : m.values) require(std::isfinite(v));
  // Every stored entry came from a line of at least four bytes ("1 1\n"
  // holds one entry, two when mirrored).
  require(m.columns.size() <= 2 * (size / 3 + 1));
  const std::vector<std::int64_t> columns(m.columns.begin(), m.columns.end());
  for (int parts = 1; parts <= 4; ++parts)
    kembed::fuzz::check_split(m.rows, m.cols, m.indptr, columns, m.values, parts);
  return 0;
}
