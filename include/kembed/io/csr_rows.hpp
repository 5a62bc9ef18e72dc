#pragma once
/// @file This rank's rows of a sparse n x d data matrix in compressed sparse
/// row form (CSR): the layout every sparse reader produces (AnnData .h5ad,
/// scipy .npz, Matrix Market .mtx) and every sparse operator consumes. Each
/// rank holds one contiguous range of rows, chosen so that the ranks hold
/// about equal numbers of stored entries; no rank ever holds the whole matrix.
#include <cstdint>
#include <vector>

namespace kembed::io {

struct CsrRows {
  std::int64_t rows = 0;       ///< n, the global row count
  std::int64_t cols = 0;       ///< d, the column count (< 2^31)
  std::int64_t first_row = 0;  ///< global index of this rank's local row 0
  /// local_rows() + 1 entries, offsets[0] = 0: local row i holds the entries
  /// [offsets[i], offsets[i+1]) of `columns` and `values`.
  std::vector<std::int64_t> offsets{0};
  /// 0-based column of each stored entry: ascending within a row, no repeats
  /// (readers sum repeated entries and sort, as scipy's sum_duplicates does).
  std::vector<std::int32_t> columns;
  std::vector<double> values;  ///< finite

  std::int64_t local_rows() const { return static_cast<std::int64_t>(offsets.size()) - 1; }
  std::int64_t nonzeros() const { return static_cast<std::int64_t>(columns.size()); }
};

}  // namespace kembed::io
