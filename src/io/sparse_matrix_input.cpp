#include "kembed/io/sparse_matrix_input.hpp"

#include <algorithm>
#include <stdexcept>

#include "kembed/io/sparse_matrix_file.hpp"

namespace kembed::io {

namespace {

std::string format_of(const std::string& path) {
  const auto dot = path.find_last_of('.');
  return dot == std::string::npos ? "sparse" : path.substr(dot + 1);
}

}  // namespace

std::unique_ptr<SparseMatrixInput> SparseMatrixInput::open(const Comm& comm,
                                                           const std::string& path,
                                                           const std::string& dataset) {
  CsrRows csr = read_csr(path, dataset, comm);
  return std::unique_ptr<SparseMatrixInput>(
      new SparseMatrixInput(comm, path, format_of(path), std::move(csr)));
}

std::unique_ptr<SparseMatrixInput> SparseMatrixInput::from_rows(
    const Comm& comm, std::string path, std::string format, CsrRows csr,
    std::vector<std::string> column_names, std::vector<std::string> row_ids) {
  std::unique_ptr<SparseMatrixInput> input(
      new SparseMatrixInput(comm, std::move(path), std::move(format), std::move(csr)));
  input->column_names_ = std::move(column_names);
  input->row_ids_ = std::move(row_ids);
  return input;
}

SparseMatrixInput::SparseMatrixInput(const Comm& comm, std::string path, std::string format,
                                     CsrRows csr)
    : MatrixFile(std::move(path), csr.rows, csr.cols),
      comm_(comm),
      format_(std::move(format)),
      csr_(std::move(csr)) {}

std::int64_t SparseMatrixInput::stored_entries() const {
  return comm_.sum(static_cast<long long>(csr_.nonzeros()));
}

std::int64_t SparseMatrixInput::busiest_entries() const {
  return comm_.max(static_cast<long long>(csr_.nonzeros()));
}

void SparseMatrixInput::release_rows() {
  csr_ = CsrRows();
  released_ = true;
}

std::vector<double> SparseMatrixInput::read_rows(const std::vector<RowRange>& ranges) {
  if (released_) throw std::logic_error("SparseMatrixInput::read_rows after release_rows");
  // Every rank learns every rank's ranges: [count, begin, end, begin, end, ...].
  std::vector<std::int64_t> mine{static_cast<std::int64_t>(ranges.size())};
  for (const RowRange& r : ranges) {
    mine.push_back(r.begin);
    mine.push_back(r.end);
  }
  const std::vector<std::int64_t> all = comm_.allgatherv(mine);
  const int ranks = comm_.size();
  const std::int64_t d = cols_, own_begin = csr_.first_row,
                     own_end = csr_.first_row + csr_.local_rows();
  // Rows this rank holds that rank q asked for, densified in q's row order.
  std::vector<double> send;
  std::vector<std::int64_t> send_counts(static_cast<std::size_t>(ranks), 0);
  std::size_t at = 0;
  for (int q = 0; q < ranks; ++q) {
    const std::int64_t count = all[at++];
    const std::size_t before = send.size();
    for (std::int64_t i = 0; i < count; ++i, at += 2) {
      const std::int64_t begin = std::max(all[at], own_begin), end = std::min(all[at + 1], own_end);
      for (std::int64_t row = begin; row < end; ++row) {
        const std::size_t base = send.size();
        send.resize(base + static_cast<std::size_t>(d), 0.0);
        const std::int64_t li = row - own_begin;
        for (std::int64_t e = csr_.offsets[li]; e < csr_.offsets[li + 1]; ++e)
          send[base + static_cast<std::size_t>(csr_.columns[e])] = csr_.values[e];
      }
    }
    send_counts[q] = static_cast<std::int64_t>(send.size() - before);
  }
  // The owners are consecutive ranks in row order, and the asked ranges are
  // ascending: the pieces arrive from ranks 0, 1, ... in row order.
  return comm_.alltoallv(send, send_counts);
}

}  // namespace kembed::io
