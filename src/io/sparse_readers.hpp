#pragma once
/// @file Private: the per-format readers behind read_csr(), each collective
/// and with every error agreed (see sparse_matrix_file.hpp).
#include <string>

#include "kembed/io/csr_rows.hpp"
#include "kembed/io/sparse_file_shape.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::io {

/// AnnData: the group `dataset` ("" for /X) of a .h5ad file, encoded as
/// csr_matrix, read by parallel HDF5 (h5ad_csr_reader.cpp; without HDF5,
/// hdf5_unavailable.cpp throws).
CsrRows read_h5ad_csr(const std::string& path, const std::string& dataset, const Comm& comm);

/// AnnData: the shape attribute of the group `dataset` ("" for /X) and the
/// length of its data, read as read_h5ad_csr checks them (nothing of the
/// entries or indptr is read; without HDF5, hdf5_unavailable.cpp throws).
SparseFileShape read_h5ad_shape(const std::string& path, const std::string& dataset, const Comm& comm);

/// scipy.sparse.save_npz of a CSR matrix, stored or deflated (npz_csr_reader.cpp).
CsrRows read_npz_csr(const std::string& path, const Comm& comm);

/// Matrix Market coordinate file, parsed on rank 0 (mtx_csr_reader.cpp).
CsrRows read_mtx_csr(const std::string& path, const Comm& comm);

}  // namespace kembed::io
