#pragma once
/// @file Private: the Matrix Market coordinate format parsed from its text
/// into CSR. Serial, no MPI and no file access, so that it can be fuzzed
/// (fuzz/fuzz_mtx.cpp); mtx_csr_reader.cpp calls it on rank 0.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kembed::io {

/// The whole matrix in CSR form, entries of a row in file order (mirrored
/// entries of a symmetric file right after their originals), not yet
/// canonical: repeats are kept, columns of a row unsorted.
struct MtxMatrix {
  std::int64_t rows = 0, cols = 0;
  std::vector<std::int64_t> indptr{0};  ///< rows + 1 values, from 0 to the entry count
  std::vector<std::int32_t> columns;    ///< 0-based, each in [0, cols) (cols < 2^31)
  std::vector<double> values;           ///< finite; 1 for a pattern file
};

/// The most rows the readers of sparse files accept (as for .npz and .h5ad).
inline constexpr std::int64_t mtx_max_rows = std::int64_t{1} << 62;

/// The banner and the size line: what a Matrix Market file holds, before
/// any entry is read.
struct MtxHeader {
  std::int64_t rows = 0, cols = 0, entries = 0;  ///< as the size line says
  bool pattern = false;                          ///< no values (each is 1)
  bool symmetric = false;                        ///< one triangle stored
  std::int64_t size_line = 0;                    ///< the size line's number
  std::size_t body = 0;                          ///< offset of the line after it
};

/// Parses the banner, the comments and the size line at the start of
/// `text`, with the checks and messages of parse_mtx (which starts with
/// it); `text` may end anywhere after the size line.
MtxHeader parse_mtx_header(std::string_view text, const std::string& path, std::int64_t max_rows = mtx_max_rows);

/// Parses a '%%MatrixMarket matrix coordinate real|integer|pattern
/// general|symmetric' file held in `text`. A symmetric file's entries off
/// the diagonal stand for themselves and their mirrors (as scipy.io.mmread
/// reads them). Memory: the entries, bounded by the text's length, and
/// rows + 1 offsets; a size line with more than `max_rows` rows (the fuzzer
/// passes a small bound) or more than 2^31 - 1 columns is refused before
/// anything of that size is allocated. Any problem throws kembed::Error
/// naming `path` and the line.
MtxMatrix parse_mtx(std::string_view text, const std::string& path, std::int64_t max_rows = mtx_max_rows);

}  // namespace kembed::io
