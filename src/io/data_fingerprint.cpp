// The model's copy of the training data (X.npy) and its fingerprint, both
// declared in kembed/io/model.hpp.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>

#include "io/data_fingerprint.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/model.hpp"
#include "kembed/io/npy_writer.hpp"

namespace kembed::io {

namespace {

/// 64-bit FNV-1a over `bytes`, continuing from `hash`.
std::uint64_t fnv1a(std::uint64_t hash, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ULL;
  return hash;
}

}  // namespace

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
  std::uint64_t hash = 1469598103934665603ULL;
  for (std::int64_t round_begin = 0; round_begin < rows; round_begin += per_round) {
    const std::int64_t begin = std::min(rows, round_begin + chunk * rank);
    const std::int64_t end = std::min(rows, begin + chunk);
    const std::vector<double> values =
        source.read_rows(begin < end ? std::vector<RowRange>{{begin, end}} : std::vector<RowRange>{});
    if (writer) writer->write_rows(begin, values);
    // FNV-1a is a sequential recurrence, so the bytes must be hashed in file
    // order: the state passes from rank to rank (8 bytes; the data stay
    // where they were read). The hashing itself is the one serial pass left.
    for (int r = 0; r < ranks; ++r) {
      if (r == rank) hash = fnv1a(hash, values.data(), values.size() * sizeof(double));
      if (ranks > 1) comm.broadcast(&hash, 1, r);
    }
  }
  if (writer) writer->commit();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

std::string copy_to_npy(const Comm& comm, MatrixFile& source, const std::string& path) {
  return fingerprint_rows(comm, source, path);
}

}  // namespace kembed::io
