#pragma once
/// @file What a sparse matrix file (.h5ad, .npz, .mtx) says about its shape
/// and stored entries, read from its header and metadata without its
/// entries: `kembed plan` prices a sparse fit from it before anything is
/// read.
#include <cstdint>
#include <string>

#include "kembed/mpi/comm.hpp"

namespace kembed::io {

struct SparseFileShape {
  std::int64_t rows = 0, cols = 0;
  /// Entries as the file stores them: the length of X/data (.h5ad), of
  /// data.npy (.npz), the size line's count (.mtx). Repeated entries, which
  /// the readers sum, are counted each.
  std::int64_t entries = 0;
  /// A symmetric .mtx stores one triangle: each entry off the diagonal
  /// stands for two, so the matrix holds at most 2 entries.
  bool one_triangle = false;
  std::string format;  ///< "h5ad", "npz" or "mtx"
};

/// Collective: the shape and stored entries of the sparse matrix in `path`,
/// from the .h5ad group's shape attribute and the size of its data (the
/// group `dataset`, "" for /X), the headers of the .npz's members
/// (format.npy, shape.npy and the .npy headers of indptr.npy and
/// data.npy), or the .mtx banner and size line. Nothing of the entries or
/// the row pointers is read. A file that is not a sparse matrix, or whose
/// header says it cannot be one, is an agreed kembed::Error naming the file
/// and the place in it; the entries are checked only when a fit reads them.
SparseFileShape read_sparse_shape(const std::string& path, const std::string& dataset,
                                  const Comm& comm);

}  // namespace kembed::io
