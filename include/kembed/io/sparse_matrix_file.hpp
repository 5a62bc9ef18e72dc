#pragma once
/// @file Sparse n x d matrices stored in files, read into each rank's rows
/// (io::CsrRows): AnnData .h5ad, scipy save_npz .npz and Matrix Market .mtx.
#include <string>

#include "kembed/io/csr_rows.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::io {

/// Not collective: true when `path` names a sparse matrix file, by its
/// extension (.h5ad, .npz, .mtx, any case) or, for another extension, by a
/// regular file's first bytes (the %%MatrixMarket banner). Opens nothing for
/// "-", FIFOs and devices (reading would consume what they deliver).
bool is_sparse_file(const std::string& path);

/// Collective: the rows of the sparse matrix in `path` that this rank holds,
/// contiguous and balanced by stored entries (the same split on every rank
/// and for every format), columns ascending and repeated entries summed.
/// The format follows the extension (.h5ad, .npz, .mtx) or, failing that,
/// the file's first bytes. `dataset` is the .h5ad group of the matrix
/// ("" for /X; e.g. /layers/counts or /raw/X) and must be empty for the
/// other formats. Every problem of the file (missing, truncated, corrupt,
/// wrong encoding, an index outside the shape, row pointers that are not
/// monotone, non-finite values) is one agreed kembed::Error naming the file
/// and the place in it, thrown on every rank.
CsrRows read_csr(const std::string& path, const std::string& dataset, const Comm& comm);

}  // namespace kembed::io
