// Matrix Market coordinate files: parsed on rank 0 (as kembed reads text),
// then each rank receives its rows of the split by stored entries.
#include <utility>

#include "io/csr_canonical.hpp"
#include "io/csr_row_split.hpp"
#include "io/mtx_parser.hpp"
#include "io/read_only_file.hpp"
#include "io/sparse_readers.hpp"
#include "kembed/core/error.hpp"

namespace kembed::io {

CsrRows read_mtx_csr(const std::string& path, const Comm& comm) {
  MtxMatrix matrix;
  std::vector<std::int64_t> split;
  collectively(comm, [&] {
    if (!comm.is_root()) return;
    const std::string text = ReadOnlyFile(path).read_all();
    matrix = parse_mtx(text, path);
    split = split_rows_by_entries(matrix.indptr, comm.size());
  });
  std::int64_t shape[2] = {matrix.rows, matrix.cols};
  comm.broadcast(shape, 2);
  comm.broadcast(split);

  // Rank 0 sends each rank its rows' lengths, columns and values; the CSR
  // arrays are in row order, so each rank's part is one contiguous piece.
  const auto p = static_cast<std::size_t>(comm.size());
  std::vector<std::int64_t> row_counts(p, 0), entry_counts(p, 0), lengths;
  if (comm.is_root()) {
    for (std::size_t r = 0; r < p; ++r) {
      row_counts[r] = split[r + 1] - split[r];
      entry_counts[r] = matrix.indptr[static_cast<std::size_t>(split[r + 1])] -
                        matrix.indptr[static_cast<std::size_t>(split[r])];
    }
    lengths.resize(static_cast<std::size_t>(matrix.rows));
    for (std::size_t i = 0; i < lengths.size(); ++i) lengths[i] = matrix.indptr[i + 1] - matrix.indptr[i];
  }
  RawCsrRows raw;
  raw.rows = shape[0];
  raw.cols = shape[1];
  raw.first_row = split[static_cast<std::size_t>(comm.rank())];
  const std::vector<std::int64_t> my_lengths = comm.alltoallv(lengths, row_counts);
  raw.columns = comm.alltoallv(matrix.columns, entry_counts);
  matrix.columns = {};
  raw.values = comm.alltoallv(matrix.values, entry_counts);
  matrix = MtxMatrix();
  raw.offsets.assign(1, 0);
  for (std::int64_t length : my_lengths) raw.offsets.push_back(raw.offsets.back() + length);

  CsrRows rows;
  collectively(comm, [&] {
    EntryNames names;
    names.file = names.indices = names.values = path;
    names.base = 1;
    rows = canonical_rows(std::move(raw), names);
  });
  return rows;
}

}  // namespace kembed::io
