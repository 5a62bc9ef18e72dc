#pragma once
/// @file A sparse file (AnnData .h5ad, scipy .npz, Matrix Market .mtx), or
/// a matrix kembed builds sparse (mca's indicator matrix), seen as a
/// MatrixFile: every command can read it, densifying only the rows each rank
/// asks for, and the commands with a sparse path (pca, ca, mca) take its CSR
/// rows instead, never forming the dense matrix.
#include <memory>
#include <string>
#include <vector>

#include "kembed/io/csr_rows.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::io {

class SparseMatrixInput : public MatrixFile {
 public:
  /// Collective: reads the file's CSR rows (read_csr: rows balanced by
  /// stored entries over the ranks of `comm`); `dataset` as --dataset.
  static std::unique_ptr<SparseMatrixInput> open(const Comm& comm, const std::string& path,
                                                 const std::string& dataset);
  /// Rows built elsewhere: `csr` is this rank's (contiguous ranges in rank
  /// order, as read_csr lays them out); `format` names them in reports;
  /// `column_names` and `row_ids` as MatrixFile's (rank 0 only; empty: none).
  static std::unique_ptr<SparseMatrixInput> from_rows(const Comm& comm, std::string path,
                                                      std::string format, CsrRows csr,
                                                      std::vector<std::string> column_names = {},
                                                      std::vector<std::string> row_ids = {});

  std::string format() const override { return format_; }
  /// Collective: the asked rows, dense, moved from the ranks that hold them
  /// (one all-to-all of the rows themselves; nothing else densified).
  std::vector<double> read_rows(const std::vector<RowRange>& ranges) override;
  std::vector<std::string> column_names() const override { return column_names_; }
  std::vector<std::string> row_ids() const override { return row_ids_; }

  /// This rank's rows, as read.
  const CsrRows& csr() const { return csr_; }
  /// Frees this rank's rows once a fit has no more use for them (before its
  /// results are gathered, so the two are never held at once); csr() is then
  /// empty and read_rows a logic error.
  void release_rows();
  /// Collective: the stored entries of all ranks together (the memory plan
  /// prices the busiest rank from them: spectral::sparse_problem_shape).
  std::int64_t stored_entries() const;
  /// Collective: the most stored entries any rank holds.
  std::int64_t busiest_entries() const;

 private:
  SparseMatrixInput(const Comm& comm, std::string path, std::string format, CsrRows csr);
  const Comm& comm_;
  std::string format_;
  CsrRows csr_;
  bool released_ = false;
  std::vector<std::string> column_names_;  ///< rank 0 only
  std::vector<std::string> row_ids_;       ///< rank 0 only
};

}  // namespace kembed::io
