// libFuzzer target: the .npy header parser (io::npy_header_size and
// io::parse_npy_header) on arbitrary bytes, used the way the .npy reader
// uses them: the size from the first bytes, then the whole header.
// kembed::Error is the documented rejection; anything else is a bug, as is an
// accepted header whose shape and offset do not describe a readable file.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

#include "kembed/core/error.hpp"
#include "kembed/io/npy_header.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace io = kembed::io;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::int64_t total = 0;
  try {
    total = io::npy_header_size(bytes.substr(0, std::min(size, io::npy_preamble_max)), "fuzz.npy");
  } catch (const kembed::Error&) {
    total = -1;
  }
  io::NpyHeader header;
  try {
    header = io::parse_npy_header(bytes, "fuzz.npy");
  } catch (const kembed::Error&) {
    return 0;
  }
  // Accepted: the size the prefix announced, inside the bytes, a 2-D float
  // matrix whose data end fits in a file offset.
  if (total != header.data_offset || header.data_offset > static_cast<std::int64_t>(size))
    __builtin_trap();
  if (header.rows < 1 || header.cols < 1 || (header.item_size != 4 && header.item_size != 8))
    __builtin_trap();
  std::int64_t elements = 0, data_bytes = 0, end = 0;
  if (__builtin_mul_overflow(header.rows, header.cols, &elements) ||
      __builtin_mul_overflow(elements, std::int64_t{header.item_size}, &data_bytes) ||
      __builtin_add_overflow(data_bytes, header.data_offset, &end))
    __builtin_trap();
  return 0;
}
