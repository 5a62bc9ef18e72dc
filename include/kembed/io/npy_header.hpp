#pragma once
/// @file Serial parser for the header of a NumPy .npy file (format 1.0-3.0).
/// No MPI and no file access: it works on bytes, so it can be fuzzed.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kembed::io {

/// What kembed needs from a .npy header: a C-ordered 2-D float matrix.
struct NpyHeader {
  /// 8 for float64 ('<f8'), 4 for float32 ('<f4'); data is little-endian.
  int item_size = 8;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  /// 2, or 1 for a vector of shape (rows,) (cols is then 1); only
  /// parse_npy_header(..., true) returns 1.
  int ndim = 2;
  /// Byte offset of the first element (preamble plus header dictionary).
  std::int64_t data_offset = 0;
  /// The dtype string as written in the file, e.g. "<f8".
  std::string descr;
};

/// The dictionary of any .npy header, checked for syntax only: for readers
/// of arrays other than a 2-D float matrix (the members of a scipy .npz).
struct NpyArrayHeader {
  std::string descr;                ///< as written, e.g. "<i4", "|S3", "<U3"
  bool fortran_order = false;
  std::vector<std::int64_t> shape;  ///< () for a 0-d array
  /// Byte offset of the first element (preamble plus header dictionary).
  std::int64_t data_offset = 0;
};

/// Smallest prefix of a .npy file from which npy_header_size() can work.
inline constexpr std::size_t npy_preamble_max = 12;

/// Validates the magic string and version at the start of `bytes` and returns
/// the total size in bytes of preamble plus header, i.e. how much of the file
/// parse_npy_header() needs. `name` starts every error message. Throws
/// kembed::Error (never anything else) on a bad magic, unknown version or too
/// few bytes.
std::int64_t npy_header_size(std::string_view bytes, const std::string& name);

/// Parses the header at the start of `bytes` (which may hold more than the
/// header). Accepts descr '<f8' or '<f4' (also '=' or '|' on little-endian
/// hosts), fortran_order False and a 2-D shape with both extents > 0.
/// Everything else, and any malformed or truncated input, throws
/// kembed::Error naming `name`; it never reads outside `bytes`. With
/// `allow_vector`, a 1-D shape (k,) with k > 0 is accepted too (saved
/// models hold vectors that way).
NpyHeader parse_npy_header(std::string_view bytes, const std::string& name,
                           bool allow_vector = false);

/// Parses the header at the start of `bytes` without asking for a float
/// matrix: any descr (not a structured one), either order, any shape.
/// Malformed or truncated input throws kembed::Error naming `name`; it never
/// reads outside `bytes`.
NpyArrayHeader parse_npy_array_header(std::string_view bytes, const std::string& name);

}  // namespace kembed::io
