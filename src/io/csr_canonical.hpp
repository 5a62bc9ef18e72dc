#pragma once
/// @file Private: a rank's rows of a sparse matrix as a file stores them
/// (any column order, repeated columns), put into CsrRows' canonical form.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kembed/io/csr_rows.hpp"

namespace kembed::io {

/// This rank's rows as read: entries in file order.
struct RawCsrRows {
  std::int64_t rows = 0, cols = 0;  ///< the matrix's shape
  std::int64_t first_row = 0;       ///< global index of local row 0
  std::vector<std::int64_t> offsets{0};  ///< local row i: entries [offsets[i], offsets[i+1])
  /// 0-based, narrowed as they are read (append_columns) so that no reader
  /// holds a second, wider copy; -1 marks a stored index outside [0, cols).
  std::vector<std::int32_t> columns;
  std::vector<double> values;  ///< not yet checked
  std::int64_t first_bad_entry = -1;  ///< local entry of the first index outside [0, cols)
  std::int64_t first_bad_column = 0;  ///< that index as stored, for the message

  /// Appends stored column indices (`cols` must be set), each narrowed to
  /// int32, or -1 where it lies outside [0, cols).
  void append_columns(const std::int64_t* stored, std::size_t count);
};

/// How messages name an entry: "<indices>[k] (row r): ..." and
/// "<values>[k] (row r, column c): ...", where k = first_entry + the local
/// entry and rows and columns count from `base` (0 for scipy and AnnData,
/// 1 for Matrix Market, whose readers check ranges themselves).
struct EntryNames {
  std::string file;     ///< the file, for messages about summed entries
  std::string indices;  ///< e.g. "x.npz: indices.npy"
  std::string values;   ///< e.g. "x.npz: data.npy"
  std::int64_t first_entry = 0;
  int base = 0;
};

/// Serial: checks every column (0 <= c < cols) and value (finite), then sorts
/// each row by column and sums the repeats in file order, as scipy's
/// sum_duplicates does (explicit zeros are kept). Throws kembed::Error naming
/// the first bad entry, or a repeated column whose sum is not finite. Works
/// in place: the result owns `raw`'s arrays, with at most one row copied
/// aside at a time.
CsrRows canonical_rows(RawCsrRows raw, const EntryNames& names);

}  // namespace kembed::io
