// AnnData .h5ad: a CSR matrix as the group X (or /layers/NAME, /raw/X) with
// attributes encoding-type = "csr_matrix" and shape, and the 1-D datasets
// data, indices and indptr. Read by parallel HDF5: every rank reads all of
// indptr, then its slices of indices and data (one hyperslab each).
#include <hdf5.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "io/csr_canonical.hpp"
#include "io/csr_row_split.hpp"
#include "io/hdf5_handle.hpp"
#include "io/read_only_file.hpp"
#include "io/sparse_readers.hpp"
#include "kembed/core/error.hpp"

namespace kembed::io {

namespace {

/// A scalar string attribute of `object` (fixed or variable length);
/// `found` is false when it has none, and "" comes back for anything else
/// than one string.
std::string h5ad_string_attribute(hid_t object, const char* name, bool& found) {
  found = H5Aexists(object, name) > 0;
  if (!found) return {};
  const Handle attribute(H5Aopen(object, name, H5P_DEFAULT), H5Aclose);
  const Handle type(attribute.ok() ? H5Aget_type(attribute.get()) : -1, H5Tclose);
  const Handle space(attribute.ok() ? H5Aget_space(attribute.get()) : -1, H5Sclose);
  if (!type.ok() || !space.ok() || H5Tget_class(type.get()) != H5T_STRING ||
      H5Sget_simple_extent_npoints(space.get()) != 1)
    return {};
  std::string value;
  if (H5Tis_variable_str(type.get()) > 0) {
    const Handle memory(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(memory.get(), H5T_VARIABLE);
    H5Tset_cset(memory.get(), H5Tget_cset(type.get()));
    char* text = nullptr;
    if (H5Aread(attribute.get(), memory.get(), &text) >= 0 && text) value = text;
    if (text) H5free_memory(text);
  } else {
    const std::size_t size = H5Tget_size(type.get());
    if (size == 0 || size > 4096) return {};
    // One byte more for the terminator: a null-padded string of `size`
    // characters (h5py's numpy.bytes_) fills all of them.
    value.assign(size + 1, '\0');
    const Handle memory(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(memory.get(), size + 1);
    if (H5Aread(attribute.get(), memory.get(), value.data()) < 0) return {};
    value.erase(std::find(value.begin(), value.end(), '\0'), value.end());
  }
  return value;
}

/// The two integers of the shape attribute; false when it is not that.
bool h5ad_shape_attribute(hid_t object, const char* name, std::int64_t shape[2]) {
  if (H5Aexists(object, name) <= 0) return false;
  const Handle attribute(H5Aopen(object, name, H5P_DEFAULT), H5Aclose);
  const Handle type(attribute.ok() ? H5Aget_type(attribute.get()) : -1, H5Tclose);
  const Handle space(attribute.ok() ? H5Aget_space(attribute.get()) : -1, H5Sclose);
  if (!type.ok() || !space.ok() || H5Tget_class(type.get()) != H5T_INTEGER ||
      H5Sget_simple_extent_npoints(space.get()) != 2)
    return false;
  return H5Aread(attribute.get(), H5T_NATIVE_INT64, shape) >= 0;
}

/// One of the group's three datasets.
struct H5adMember {
  Handle set{-1, H5Dclose};
  std::int64_t length = 0;
  /// Contiguous, or chunked without filters and fully written: collective
  /// MPI-IO reads work. Anything else is read through each rank's own
  /// POSIX handle (as the dense HDF5 reader does).
  bool plain = true;
};

/// Opens `group`/`name` and checks it: 1-D, integer (or, with
/// `floating`, floating point too). "" or the problem.
std::string h5ad_open_member(hid_t file, const std::string& where, const std::string& group, const std::string& name,
                             bool floating, H5adMember& member) {
  const std::string path = group + "/" + name;
  if (H5Lexists(file, path.c_str(), H5P_DEFAULT) <= 0)
    return where + ": group " + group + " has no dataset '" + name + "' (an AnnData sparse matrix has data, indices "
           "and indptr)";
  member.set = Handle(H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose);
  if (!member.set.ok()) return where + ": " + path + " is not a dataset that can be opened";
  const Handle type(H5Dget_type(member.set.get()), H5Tclose);
  const Handle space(H5Dget_space(member.set.get()), H5Sclose);
  const H5T_class_t kind = type.ok() ? H5Tget_class(type.get()) : H5T_NO_CLASS;
  if (kind != H5T_INTEGER && !(floating && kind == H5T_FLOAT))
    return where + ": " + path + " holds " + (kind == H5T_ENUM ? "booleans or an enum" : "a non-numeric type") +
           "; expected " + (floating ? "numbers" : "integers");
  if (!space.ok() || H5Sget_simple_extent_ndims(space.get()) != 1)
    return where + ": " + path + " is not a 1-D dataset";
  hsize_t length = 0;
  H5Sget_simple_extent_dims(space.get(), &length, nullptr);
  member.length = static_cast<std::int64_t>(length);
  const Handle dcpl(H5Dget_create_plist(member.set.get()), H5Pclose);
  H5D_space_status_t status = H5D_SPACE_STATUS_ERROR;
  H5Dget_space_status(member.set.get(), &status);
  const H5D_layout_t layout = dcpl.ok() ? H5Pget_layout(dcpl.get()) : H5D_LAYOUT_ERROR;
  const bool external = dcpl.ok() && H5Pget_external_count(dcpl.get()) > 0;
  const int filters = dcpl.ok() ? H5Pget_nfilters(dcpl.get()) : 1;
  member.plain = (layout == H5D_CONTIGUOUS && !external) ||
                 (layout == H5D_CHUNKED && filters == 0 && status == H5D_SPACE_STATUS_ALLOCATED);
  return {};
}

/// What the MPI-IO phase learned about the group.
struct H5adLayout {
  std::int64_t rows = 0, cols = 0, entries = 0;
  bool independent = false;
};

/// The problem of `group` as an AnnData CSR matrix ("" if none), its shape
/// and whether its datasets need independent reads. Each step's error is
/// agreed before the next one reads metadata (collectively, on every rank).
H5adLayout h5ad_inspect(const Comm& comm, hid_t file, const std::string& path, const std::string& group) {
  H5adLayout out;
  std::string error;
  for (std::size_t at = group.find('/', 1);; at = group.find('/', at + 1)) {
    const std::string prefix = group.substr(0, at);
    if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) {
      error = path + ": no group " + group + " (AnnData keeps the matrix in /X, layers in /layers/NAME, the raw "
                     "matrix in /raw/X)";
      break;
    }
    if (at == std::string::npos) break;
  }
  agree(comm, error);
  {
    const Handle object(H5Oopen(file, group.c_str(), H5P_DEFAULT), H5Oclose);
    const H5I_type_t type = object.ok() ? H5Iget_type(object.get()) : H5I_BADID;
    if (type == H5I_DATASET)
      error = path + ": " + group + " is a dense dataset, not a sparse matrix; read it through kembed's dense HDF5 "
                     "reader (--dataset " + group + ")";
    else if (type != H5I_GROUP)
      error = path + ": " + group + " cannot be opened as a group";
    agree(comm, error);
    bool found = false;
    std::string encoding = h5ad_string_attribute(object.get(), "encoding-type", found);
    if (!found) {  // the layout of anndata before 0.7 (h5sparse)
      const std::string old = h5ad_string_attribute(object.get(), "h5sparse_format", found);
      if (found) encoding = old + "_matrix";
    }
    const std::string convert = "; convert it to CSR in Python: adata.X = scipy.sparse.csr_matrix(adata.X) (or "
                                "adata.layers[NAME] = ...), then adata.write_h5ad(...)";
    if (!found)
      error = path + ": group " + group + " has no encoding-type attribute; it is not an AnnData sparse matrix";
    else if (encoding == "csc_matrix")
      error = path + ": " + group + " is a CSC matrix (encoding-type csc_matrix); kembed reads CSR" + convert;
    else if (encoding != "csr_matrix")
      error = path + ": " + group + " has encoding-type '" + encoding + "', not csr_matrix" + convert;
    agree(comm, error);
    std::int64_t shape[2] = {-1, -1};
    if (!h5ad_shape_attribute(object.get(), "shape", shape) && !h5ad_shape_attribute(object.get(), "h5sparse_shape", shape))
      error = path + ": group " + group + " has no shape attribute of two integers";
    else if (shape[0] < 0 || shape[1] < 0)
      error = path + ": " + group + " has a negative shape (" + std::to_string(shape[0]) + ", " + std::to_string(shape[1]) + ")";
    else if (shape[0] > (std::int64_t{1} << 62))
      error = path + ": " + group + " has " + std::to_string(shape[0]) + " rows, more than kembed supports (2^62)";
    else if (shape[1] > std::numeric_limits<std::int32_t>::max())
      error = path + ": " + group + " has " + std::to_string(shape[1]) + " columns, more than kembed supports (2^31 - 1)";
    agree(comm, error);
    out.rows = shape[0];
    out.cols = shape[1];
  }
  H5adMember data, indices, indptr;
  agree(comm, h5ad_open_member(file, path, group, "data", true, data));
  agree(comm, h5ad_open_member(file, path, group, "indices", false, indices));
  agree(comm, h5ad_open_member(file, path, group, "indptr", false, indptr));
  if (indptr.length != out.rows + 1)
    error = path + ": " + group + "/indptr has " + std::to_string(indptr.length) + " values, but the shape (" +
            std::to_string(out.rows) + ", " + std::to_string(out.cols) + ") needs " + std::to_string(out.rows + 1);
  else if (indices.length != data.length)
    error = path + ": " + group + "/indices has " + std::to_string(indices.length) + " entries but " + group +
            "/data has " + std::to_string(data.length);
  agree(comm, error);
  out.entries = data.length;
  out.independent = !(data.plain && indices.plain && indptr.plain);
  return out;
}

/// Reads `count` elements from `first` of the 1-D dataset `name` of `group`
/// as `memory_type` into `out`; collective with `collective_read` (every
/// rank calls it, a rank with nothing selects none). false on failure.
bool h5ad_read_slice(hid_t file, const std::string& name, hid_t memory_type, std::int64_t first, std::int64_t count,
                     bool collective_read, void* out) {
  const Handle set(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!set.ok()) return false;
  const Handle file_space(H5Dget_space(set.get()), H5Sclose);
  const hsize_t length = static_cast<hsize_t>(std::max<std::int64_t>(count, 1));
  const Handle memory_space(H5Screate_simple(1, &length, nullptr), H5Sclose);
  bool ok = file_space.ok() && memory_space.ok();
  if (ok && count == 0) {
    H5Sselect_none(file_space.get());
    H5Sselect_none(memory_space.get());
  } else if (ok) {
    const hsize_t start = static_cast<hsize_t>(first), extent = static_cast<hsize_t>(count);
    ok = H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start, nullptr, &extent, nullptr) >= 0;
  }
  const Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  if (collective_read) H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE);
  // Collective reads are entered by every rank even after a failed
  // selection (with nothing selected), so that no rank waits alone.
  if (!ok && collective_read) {
    H5Sselect_none(file_space.get());
    H5Sselect_none(memory_space.get());
  }
  const herr_t rc = H5Dread(set.get(), memory_type, memory_space.get(), file_space.get(), dxpl.get(), out);
  return ok && rc >= 0;
}

/// The group of `dataset` ("" for /X), absolute, without a trailing slash.
std::string h5ad_group(const std::string& dataset) {
  std::string group = dataset.empty() ? "/X" : dataset;
  if (group.front() != '/') group = "/" + group;
  while (group.size() > 1 && group.back() == '/') group.pop_back();
  return group;
}

/// Collective: `path` opened through MPI-IO into `file` and `group`
/// inspected, every error agreed.
H5adLayout h5ad_open(const Comm& comm, const std::string& path, const std::string& group, Handle& file) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // kembed reports its own errors, once
  collectively(comm, [&] {
    if (comm.is_root()) ReadOnlyFile check(path);  // a missing file says so, as for every format
  });
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  H5Pset_fapl_mpio(fapl.get(), comm.get(), MPI_INFO_NULL);
  H5Pset_all_coll_metadata_ops(fapl.get(), true);
  file = Handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
  agree(comm, file.ok() ? "" : path + ": cannot open as an HDF5 file (not HDF5, or damaged)");
  return h5ad_inspect(comm, file.get(), path, group);
}

}  // namespace

SparseFileShape read_h5ad_shape(const std::string& path, const std::string& dataset, const Comm& comm) {
  Handle file(-1, H5Fclose);
  const H5adLayout layout = h5ad_open(comm, path, h5ad_group(dataset), file);
  SparseFileShape out;
  out.rows = layout.rows;
  out.cols = layout.cols;
  out.entries = layout.entries;
  out.format = "h5ad";
  return out;
}

CsrRows read_h5ad_csr(const std::string& path, const std::string& dataset, const Comm& comm) {
  const std::string group = h5ad_group(dataset);
  Handle file(-1, H5Fclose);
  const H5adLayout layout = h5ad_open(comm, path, group, file);
  if (layout.independent) {
    // Filters, unwritten chunks or external storage: each rank reads through
    // its own handle (nothing below is collective then).
    file = Handle(-1, H5Fclose);  // the MPI-IO file is closed on every rank together
    file = Handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    agree(comm, file.ok() ? "" : path + ": cannot open as an HDF5 file (not HDF5, or damaged)");
  }
  const bool collective_read = !layout.independent;
  std::vector<std::int64_t> indptr(static_cast<std::size_t>(layout.rows) + 1);
  const bool read = h5ad_read_slice(file.get(), group + "/indptr", H5T_NATIVE_INT64, 0, layout.rows + 1,
                                    collective_read, indptr.data());
  agree(comm, read ? "" : path + ": " + group + "/indptr cannot be read (damaged file?)");
  agree(comm, indptr_problem(indptr, layout.entries, path + ": " + group + "/indptr"));
  const std::vector<std::int64_t> split = split_rows_by_entries(indptr, comm.size());
  const auto me = static_cast<std::size_t>(comm.rank());
  RawCsrRows raw;
  raw.rows = layout.rows;
  raw.cols = layout.cols;
  raw.first_row = split[me];
  const std::int64_t first = indptr[static_cast<std::size_t>(split[me])];
  const std::int64_t count = indptr[static_cast<std::size_t>(split[me + 1])] - first;
  raw.offsets.assign(indptr.begin() + split[me], indptr.begin() + split[me + 1] + 1);
  for (std::int64_t& o : raw.offsets) o -= first;
  indptr = {};
  std::string error;
  collectively(comm, [&] {
    raw.columns.reserve(static_cast<std::size_t>(count));
    raw.values.resize(static_cast<std::size_t>(count));
  });
  // An empty matrix reads nothing (its datasets may never have been written).
  if (layout.entries > 0) {
    double none_value = 0;
    // The indices in bounded chunks, each narrowed as it arrives, so that no
    // rank holds a 64-bit copy of its columns; every rank enters the same
    // number of (collective) reads, the last ones empty where it has less.
    constexpr std::int64_t chunk = std::int64_t{1} << 20;
    const long long rounds = comm.max(static_cast<long long>((count + chunk - 1) / chunk));
    std::vector<std::int64_t> stored(static_cast<std::size_t>(std::min(count, chunk)));
    std::int64_t none = 0;
    for (long long r = 0; r < rounds; ++r) {
      const std::int64_t at = std::min<std::int64_t>(count, r * chunk), length = std::min(chunk, count - at);
      if (!h5ad_read_slice(file.get(), group + "/indices", H5T_NATIVE_INT64, first + at, length, collective_read,
                           length ? static_cast<void*>(stored.data()) : &none))
        error = path + ": " + group + "/indices cannot be read (damaged file?)";
      if (error.empty()) raw.append_columns(stored.data(), static_cast<std::size_t>(length));
    }
    if (!h5ad_read_slice(file.get(), group + "/data", H5T_NATIVE_DOUBLE, first, count, collective_read,
                         count ? static_cast<void*>(raw.values.data()) : &none_value) && error.empty())
      error = path + ": " + group + "/data cannot be read (damaged file?)";
  }
  agree(comm, error);
  CsrRows out;
  collectively(comm, [&] {
    EntryNames names;
    names.file = path;
    names.indices = path + ": " + group + "/indices";
    names.values = path + ": " + group + "/data";
    names.first_entry = first;
    out = canonical_rows(std::move(raw), names);
  });
  return out;
}

}  // namespace kembed::io
