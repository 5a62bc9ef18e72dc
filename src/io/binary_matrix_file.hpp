#pragma once
/// @file Private: a row-major little-endian float matrix at a byte offset in a
/// file (.npy after its header, or a headerless .bin), read with MPI-IO.
#include <memory>
#include <string>
#include <vector>

#include "kembed/io/matrix_file.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::io {

/// Binary matrix read collectively with MPI-IO; nothing is held in memory.
class BinaryMatrixFile final : public MatrixFile {
 public:
  /// Collective: rank 0 parses and checks the .npy header and that the file
  /// size matches it; errors are agreed.
  static std::unique_ptr<BinaryMatrixFile> open_npy(const Comm& comm, const std::string& path);
  /// Collective: shape from `hints` (both > 0); the file must hold exactly
  /// rows * cols float64 values. Errors are agreed.
  static std::unique_ptr<BinaryMatrixFile> open_bin(const Comm& comm, const std::string& path,
                                                    const FileHints& hints);

  std::string format() const override { return format_; }
  /// Collective in its errors; the reads themselves are independent, run of
  /// contiguous rows after run, in 1 MB pieces checked as they land.
  std::vector<double> read_rows(const std::vector<RowRange>& ranges) override;
  /// Collective: the ranks of a process row each read a contiguous piece of
  /// its rows and exchange the columns (exchange_block_cyclic), so each entry
  /// is read once over all ranks; other layouts take MatrixFile's stripe path.
  void read_block_cyclic(const BlockCyclicLayout& layout, const LocalRowsSink& sink) override;
  /// Collective: closes the file if a read opened it.
  ~BinaryMatrixFile() override;

 private:
  struct Layout {
    std::int64_t rows = 0;
    std::int64_t cols = 0;
    std::int64_t data_offset = 0;
    std::int64_t item_size = 8;
  };
  static std::unique_ptr<BinaryMatrixFile> share(const Comm& comm, const std::string& path,
                                                 Layout layout, const std::string& format);
  BinaryMatrixFile(Comm comm, std::string path, const Layout& layout, std::string format);
  /// Collective: opens the file on the first read.
  void open_once();
  /// What a local read left: an error message, or the index in `out` of the
  /// first non-finite value (-1: none).
  struct Landed {
    std::string error;
    std::int64_t first_non_finite = -1;
  };
  /// Local: reads the rows of `ranges` into `out` as float64, checking each
  /// piece for non-finite values as it lands; stops at the first.
  Landed read_ranges(const std::vector<RowRange>& ranges, double* out);

  Comm comm_;  ///< private duplicate of the opening communicator
  std::int64_t data_offset_ = 0;
  std::int64_t item_size_ = 8;
  std::string format_;
  /// Opened by the first read and kept: block-cyclic layouts read stripe
  /// after stripe, and a collective open per stripe cost more than the reads.
  MPI_File file_ = MPI_FILE_NULL;
};

}  // namespace kembed::io
