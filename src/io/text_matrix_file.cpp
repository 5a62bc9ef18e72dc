#include "io/text_matrix_file.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

#include "io/mpi_datatype.hpp"
#include "io/row_ranges.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/text_parser.hpp"

namespace kembed::io {

std::unique_ptr<TextMatrixFile> TextMatrixFile::open(const Comm& comm, const std::string& path,
                                                     const TextOptions& options) {
  const std::string name = path == "-" ? standard_input_name() : path;
  ParsedText parsed;
  collectively(comm, [&] {
    if (!comm.is_root()) return;
    parsed = parse_text_file(path, options);
    // The scatter sends whole rows as one MPI datatype of `cols` doubles.
    if (parsed.cols > INT_MAX)
      throw Error(name + ": " + std::to_string(parsed.cols) + " columns is more than kembed supports");
  });
  if (comm.is_root() && !parsed.note.empty()) {
    std::fprintf(stderr, "kembed: note: %s: %s\n", name.c_str(), parsed.note.c_str());
    std::fflush(stderr);
  }
  long long shape[2] = {parsed.rows, parsed.cols};
  comm.broadcast(shape, 2);
  return std::unique_ptr<TextMatrixFile>(new TextMatrixFile(comm.dup(), name, shape[0], shape[1], std::move(parsed)));
}

TextMatrixFile::TextMatrixFile(Comm comm, std::string path, std::int64_t rows, std::int64_t cols,
                               ParsedText root_parsed)
    : MatrixFile(std::move(path), rows, cols), comm_(std::move(comm)), root_parsed_(std::move(root_parsed)) {}

std::vector<double> TextMatrixFile::read_rows(const std::vector<RowRange>& ranges) {
  const int p = comm_.size();
  const bool root = comm_.is_root();
  const std::int64_t my_rows = total_rows(ranges);
  // Ranges travel as (begin, end) pairs; counts are MPI ints.
  std::vector<long long> my_pairs;
  collectively(comm_, [&] {
    const std::string bad = check_row_ranges(ranges, rows_, path_);
    if (!bad.empty()) throw Error(bad);
    if (2 * ranges.size() > static_cast<std::size_t>(INT_MAX))
      throw Error(path_ + ": too many row ranges in one request");
    for (const RowRange& r : ranges) {
      my_pairs.push_back(r.begin);
      my_pairs.push_back(r.end);
    }
  });

  const int my_pair_count = static_cast<int>(my_pairs.size());
  std::vector<int> pair_counts(root ? p : 0), pair_displs(root ? p : 0);
  MPI_Gather(&my_pair_count, 1, MPI_INT, pair_counts.data(), 1, MPI_INT, 0, comm_.get());
  std::vector<long long> all_pairs;
  collectively(comm_, [&] {
    if (!root) return;
    long long total = 0;
    for (int r = 0; r < p; ++r) {
      if (total > INT_MAX) break;
      pair_displs[r] = static_cast<int>(total);
      total += pair_counts[r];
    }
    if (total > INT_MAX) throw Error(path_ + ": too many row ranges requested in total");
    all_pairs.resize(static_cast<std::size_t>(total));
  });
  MPI_Gatherv(my_pairs.data(), my_pair_count, MPI_LONG_LONG, all_pairs.data(), pair_counts.data(),
              pair_displs.data(), MPI_LONG_LONG, 0, comm_.get());

  // Rank 0 packs each rank's rows in request order; the scatter counts whole
  // rows, so only row counts (not value counts) must fit in an int.
  std::vector<int> row_counts(root ? p : 0), row_displs(root ? p : 0);
  std::vector<double> packed;
  std::vector<double> mine;
  collectively(comm_, [&] {
    mine.resize(static_cast<std::size_t>(my_rows * cols_));
    if (!root) return;
    long long total = 0;
    for (int r = 0; r < p; ++r) {
      long long rank_rows = 0;
      for (int k = pair_displs[r]; k < pair_displs[r] + pair_counts[r]; k += 2)
        rank_rows += all_pairs[k + 1] - all_pairs[k];
      if (total + rank_rows > INT_MAX)
        throw Error(path_ + ": requests total more than " + std::to_string(INT_MAX) +
                    " rows in one read; request fewer rows per call");
      row_counts[r] = static_cast<int>(rank_rows);
      row_displs[r] = static_cast<int>(total);
      total += rank_rows;
    }
    packed.resize(static_cast<std::size_t>(total * cols_));
    double* out = packed.data();
    const auto row_len = static_cast<std::size_t>(cols_);
    for (std::size_t k = 0; k < all_pairs.size(); k += 2) {
      const auto begin = static_cast<std::size_t>(all_pairs[k]);
      const auto end = static_cast<std::size_t>(all_pairs[k + 1]);
      out = std::copy(root_parsed_.values.begin() + begin * row_len, root_parsed_.values.begin() + end * row_len, out);
    }
  });

  MPI_Datatype row_type = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(static_cast<int>(cols_), MPI_DOUBLE, &row_type);
  const MpiDatatype row(row_type);
  MPI_Scatterv(packed.data(), row_counts.data(), row_displs.data(), row.get(), mine.data(),
               static_cast<int>(my_rows), row.get(), 0, comm_.get());
  return mine;
}

}  // namespace kembed::io
