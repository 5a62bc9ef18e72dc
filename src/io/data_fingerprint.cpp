// The model's copy of the training data (X.npy) and its fingerprint, both
// declared in kembed/io/model.hpp.
#include <algorithm>
#include <cstdint>
#include <memory>

#include "core/fingerprint_sum.hpp"
#include "io/data_fingerprint.hpp"
#include "kembed/core/data_fingerprint.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/model.hpp"
#include "kembed/io/npy_writer.hpp"

namespace kembed::io {

std::string fingerprint_rows(const Comm& comm, MatrixFile& source, const std::string& path) {
  // Each round every rank reads (and writes) its own 16 MB of consecutive
  // rows, rank after rank, so the rows of a round follow one another in the
  // file and no rank ever holds more than its share of one round.
  const std::int64_t chunk_rows =
      std::max<std::int64_t>(1, (std::int64_t{16} << 20) / (8 * std::max<std::int64_t>(1, source.cols())));
  return fingerprint_rows_in_rounds(comm, source, path, chunk_rows);
}

std::string fingerprint_rows_in_rounds(const Comm& comm, MatrixFile& source, const std::string& path,
                                       std::int64_t chunk) {
  const std::int64_t rows = source.rows(), cols = source.cols();
  const int ranks = comm.size(), rank = comm.rank();
  const std::int64_t per_round = chunk * ranks;
  std::unique_ptr<NpyWriter> writer;
  if (!path.empty()) writer = std::make_unique<NpyWriter>(comm, path, rows, cols);
  std::uint64_t sum = 0;
  for (std::int64_t round_begin = 0; round_begin < rows; round_begin += per_round) {
    const std::int64_t begin = std::min(rows, round_begin + chunk * rank);
    const std::int64_t end = std::min(rows, begin + chunk);
    const std::vector<double> values =
        source.read_rows(begin < end ? std::vector<RowRange>{{begin, end}} : std::vector<RowRange>{});
    if (writer) writer->write_rows(begin, values);
    sum += fingerprint_strided(values.data(), values.size(), static_cast<std::uint64_t>(begin * cols), 1);
  }
  if (writer) writer->commit();
  return fingerprint_hex(comm.sum_modular(sum));
}

std::string copy_to_npy(const Comm& comm, MatrixFile& source, const std::string& path) {
  return fingerprint_rows(comm, source, path);
}

}  // namespace kembed::io
