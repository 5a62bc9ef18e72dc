#pragma once
/// @file Private: a scipy.sparse.save_npz file of a CSR matrix, opened and
/// checked: format.npy says 'csr', shape.npy holds (rows, columns), the
/// lengths and types of indices.npy and data.npy agree, and indptr.npy
/// (read whole) starts at 0, never decreases and ends at the entry count.
/// Serial, no MPI: npz_csr_reader.cpp runs it on every rank, and
/// fuzz/fuzz_npz.cpp on arbitrary bytes.
#include <cstdint>
#include <string>
#include <vector>

#include "io/csr_canonical.hpp"
#include "io/zip_archive.hpp"

namespace kembed::io {

/// The element type of a member: 'f' float, 'i' signed, 'u' unsigned, 'b' bool.
struct NpzElement {
  char kind = 'f';
  int size = 8;
};

class NpzCsrArchive {
 public:
  /// Opens `path` and checks everything but the entries themselves (their
  /// columns and values are checked by canonical_rows). Every problem
  /// throws kembed::Error naming the file and the member. Memory: indptr,
  /// whose length the members' data bound.
  explicit NpzCsrArchive(const std::string& path);
  NpzCsrArchive(const NpzCsrArchive&) = delete;
  NpzCsrArchive& operator=(const NpzCsrArchive&) = delete;

  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t entries() const { return entries_; }
  /// indptr.npy as int64 (rows + 1 values); empty after take_indptr().
  const std::vector<std::int64_t>& indptr() const { return indptr_; }
  /// Hands indptr over (the reader frees it once its rows are known).
  std::vector<std::int64_t> take_indptr() { return std::move(indptr_); }
  /// Appends the entries [first, first + count) of indices.npy to
  /// `raw.columns` (narrowed by RawCsrRows::append_columns, so `raw.cols`
  /// must be set) and of data.npy to `raw.values` (as double), unchecked.
  /// @pre 0 <= first, first + count <= entries()
  void read_entries(std::int64_t first, std::int64_t count, RawCsrRows& raw) const;

 private:
  ZipArchive zip_;
  std::int64_t rows_ = 0, cols_ = 0, entries_ = 0;
  std::vector<std::int64_t> indptr_;
  NpzElement index_type_, data_type_;
};

}  // namespace kembed::io
