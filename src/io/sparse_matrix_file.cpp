#include "kembed/io/sparse_matrix_file.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "io/read_only_file.hpp"
#include "io/sparse_readers.hpp"
#include "kembed/core/error.hpp"

namespace kembed::io {

namespace {

enum class SparseFormat { none, h5ad, npz, mtx };

SparseFormat format_by_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".h5ad") return SparseFormat::h5ad;
  if (ext == ".npz") return SparseFormat::npz;
  if (ext == ".mtx") return SparseFormat::mtx;
  return SparseFormat::none;
}

/// The format a regular file's first bytes announce: the Matrix Market
/// banner (a zip or HDF5 file may hold a dense matrix). Never throws.
SparseFormat format_by_content(const std::string& path) {
  struct stat st {};
  if (path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return SparseFormat::none;
  try {
    const ReadOnlyFile file(path);
    std::string head(static_cast<std::size_t>(std::min<std::int64_t>(file.size(), 14)), '\0');
    file.read_at(0, head.data(), static_cast<std::int64_t>(head.size()));
    std::string lowered = head;
    std::transform(lowered.begin(), lowered.end(), lowered.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lowered.rfind("%%matrixmarket", 0) == 0) return SparseFormat::mtx;
  } catch (const Error&) {
  }
  return SparseFormat::none;
}

}  // namespace

bool is_sparse_file(const std::string& path) {
  return format_by_extension(path) != SparseFormat::none || format_by_content(path) != SparseFormat::none;
}

CsrRows read_csr(const std::string& path, const std::string& dataset, const Comm& comm) {
  SparseFormat format = format_by_extension(path);
  collectively(comm, [&] {
    if (!comm.is_root()) return;
    if (format == SparseFormat::none) format = format_by_content(path);
    if (format == SparseFormat::none) {
      ReadOnlyFile check(path);  // a missing file says so first
      throw Error(path + ": not a sparse matrix file; kembed reads sparse matrices from AnnData .h5ad, "
                         "scipy.sparse.save_npz .npz and Matrix Market .mtx files");
    }
    if (format != SparseFormat::h5ad && !dataset.empty())
      throw Error(path + ": --dataset " + dataset + " names a group of an .h5ad file; this is not one");
  });
  int chosen = static_cast<int>(format);
  comm.broadcast(&chosen, 1);
  switch (static_cast<SparseFormat>(chosen)) {
    case SparseFormat::h5ad:
      return read_h5ad_csr(path, dataset, comm);
    case SparseFormat::npz:
      return read_npz_csr(path, comm);
    default:
      return read_mtx_csr(path, comm);
  }
}

}  // namespace kembed::io
