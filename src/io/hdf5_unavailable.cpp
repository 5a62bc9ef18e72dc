// Built instead of hdf5_matrix_file.cpp when kembed has no parallel HDF5.
#include "kembed/core/error.hpp"
#include "io/sparse_readers.hpp"
#include "kembed/io/hdf5.hpp"

namespace kembed::io {

std::string hdf5_version() { return {}; }

void annotate_hdf5_result(const std::string& path, const std::string&, const std::vector<double>&) {
  throw Error("cannot write '" + path + "': this kembed was built without HDF5 (see kembed --version)");
}

Hdf5Writer::Hdf5Writer(const Comm& comm, std::string path, std::string, std::int64_t, std::int64_t)
    : comm_(comm), path_(std::move(path)) {
  throw Error("cannot write '" + path_ + "': this kembed was built without HDF5 (see kembed --version)");
}
Hdf5Writer::~Hdf5Writer() = default;
void Hdf5Writer::write_rows(std::int64_t, const std::vector<double>&) {}
void Hdf5Writer::commit() {}

void write_hdf5_matrix(const Comm& comm, const std::string& path, const std::string& dataset, std::int64_t rows,
                       std::int64_t cols, std::int64_t first_row, const std::vector<double>& values) {
  Hdf5Writer writer(comm, path, dataset, rows, cols);
  writer.write_rows(first_row, values);
  writer.commit();
}

SparseFileShape read_h5ad_shape(const std::string& path, const std::string&, const Comm&) {
  throw Error(path + ": this kembed was built without HDF5, so it cannot read .h5ad files (see kembed --version)");
}

CsrRows read_h5ad_csr(const std::string& path, const std::string&, const Comm&) {
  throw Error(path + ": this kembed was built without HDF5, so it cannot read .h5ad files (see kembed --version); "
                     "save the matrix with scipy.sparse.save_npz and read the .npz");
}

}  // namespace kembed::io
