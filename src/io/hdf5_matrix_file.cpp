#include "io/hdf5_matrix_file.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "io/block_cyclic_exchange.hpp"
#include "io/block_cyclic_rows.hpp"
#include "io/read_only_file.hpp"
#include "io/row_ranges.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/hdf5.hpp"

namespace fs = std::filesystem;

namespace kembed::io {

namespace {

/// Owner of one HDF5 identifier, closed with the function that matches its
/// kind. Closing a file opened with the MPI-IO driver is collective: every
/// rank leaves the scope together because every error is agreed first.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
  Handle& operator=(Handle&&) = delete;
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }
  /// Hands the identifier over to the caller, who closes it.
  hid_t release() {
    const hid_t id = id_;
    id_ = -1;
    return id;
  }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

/// kembed reports its own errors; HDF5's stack dumps would repeat them on
/// every rank.
void silence_hdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

/// File access through MPI-IO on `comm`, with metadata read once and shared.
Handle mpio_access(const Comm& comm) {
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  H5Pset_fapl_mpio(fapl.get(), comm.get(), MPI_INFO_NULL);
  H5Pset_all_coll_metadata_ops(fapl.get(), true);
  H5Pset_coll_metadata_write(fapl.get(), true);
  return fapl;
}

Handle collective_transfer() {
  Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE);
  return dxpl;
}

/// Every dataset of the file, as absolute paths, in name order.
std::vector<std::string> datasets_in(hid_t file) {
  std::vector<std::string> names;
  const auto visit = [](hid_t group, const char* name, const H5L_info_t*, void* data) -> herr_t {
    const hid_t object = H5Oopen(group, name, H5P_DEFAULT);
    if (object < 0) return 0;  // a dangling soft or external link
    if (H5Iget_type(object) == H5I_DATASET) static_cast<std::vector<std::string>*>(data)->push_back("/" + std::string(name));
    H5Oclose(object);
    return 0;
  };
  H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, visit, &names);
  return names;
}

std::string listing(const std::vector<std::string>& names) {
  if (names.empty()) return "the file has no datasets";
  std::string text = "datasets in the file: ";
  for (std::size_t i = 0; i < names.size() && i < 20; ++i) text += (i ? ", " : "") + names[i];
  if (names.size() > 20) text += ", ... (" + std::to_string(names.size()) + " in all)";
  return text;
}

/// "" when every group on the way to `dataset` and the dataset itself exist.
bool link_exists(hid_t file, const std::string& dataset) {
  for (std::size_t at = dataset.find('/', 1);; at = dataset.find('/', at + 1)) {
    const std::string prefix = dataset.substr(0, at);
    if (!prefix.empty() && prefix != "/" && H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (at == std::string::npos) return true;
  }
}

/// Opens `path` on every rank; an agreed error names the file.
Handle open_file(const Comm& comm, const std::string& path) {
  collectively(comm, [&] {
    if (comm.is_root()) ReadOnlyFile check(path);  // a missing file says so, as for every format
  });
  const Handle fapl = mpio_access(comm);
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
  agree(comm, file.ok() ? "" : path + ": cannot open as an HDF5 file (not HDF5, or damaged)");
  return file;
}

}  // namespace

std::unique_ptr<Hdf5MatrixFile> Hdf5MatrixFile::open(const Comm& comm, const std::string& path, std::string dataset) {
  silence_hdf5();
  std::int64_t shape[2] = {0, 0};
  std::string error;
  {
    const Handle file = open_file(comm, path);
    // Every rank sees the same metadata (read collectively), so every rank
    // reaches the same verdict without a further exchange.
    if (dataset.empty()) {
      const std::vector<std::string> names = datasets_in(file.get());
      if (names.size() == 1) dataset = names.front();
      else error = path + ": which dataset? give --dataset /PATH (or --input " + path + ":/PATH); " + listing(names);
    } else if (dataset.front() != '/') {
      dataset = "/" + dataset;
    }
    const std::string where = path + ", dataset " + dataset + ": ";
    if (error.empty() && !link_exists(file.get(), dataset))
      error = path + ": no dataset " + dataset + "; " + listing(datasets_in(file.get()));
    if (error.empty()) {
      const Handle object(H5Oopen(file.get(), dataset.c_str(), H5P_DEFAULT), H5Oclose);
      if (!object.ok() || H5Iget_type(object.get()) != H5I_DATASET)
        error = path + ": " + dataset + " is not a dataset (a group?); " + listing(datasets_in(file.get()));
    }
    if (error.empty()) {
      const Handle set(H5Dopen2(file.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
      const Handle type(H5Dget_type(set.get()), H5Tclose);
      const Handle space(H5Dget_space(set.get()), H5Sclose);
      const int ndims = H5Sget_simple_extent_ndims(space.get());
      const H5T_class_t kind = H5Tget_class(type.get());
      const std::size_t size = H5Tget_size(type.get());
      if (kind != H5T_FLOAT || (size != 4 && size != 8)) {
        const std::string what = kind == H5T_INTEGER ? "integers" : kind == H5T_STRING ? "strings"
                                 : kind == H5T_COMPOUND ? "compound records" : kind == H5T_FLOAT ? "floats" : "not numbers";
        error = where + "holds " + what + " of " + std::to_string(size) +
                " bytes; kembed reads float64 or float32 (convert with numpy: f['X'][...].astype('float64'))";
      } else if (ndims != 2) {
        error = where + "has " + std::to_string(ndims) + " dimensions; kembed reads 2-D (rows x columns) datasets";
      } else {
        hsize_t dims[2] = {0, 0};
        H5Sget_simple_extent_dims(space.get(), dims, nullptr);
        shape[0] = static_cast<std::int64_t>(dims[0]);
        shape[1] = static_cast<std::int64_t>(dims[1]);
      }
    }
  }
  agree(comm, error);
  return std::unique_ptr<Hdf5MatrixFile>(new Hdf5MatrixFile(comm.dup(), path, dataset, shape[0], shape[1]));
}

Hdf5MatrixFile::Hdf5MatrixFile(Comm comm, std::string path, std::string dataset, std::int64_t rows, std::int64_t cols)
    : MatrixFile(std::move(path), rows, cols), comm_(std::move(comm)), dataset_(std::move(dataset)) {}

Hdf5MatrixFile::~Hdf5MatrixFile() {
  if (set_ >= 0) H5Dclose(set_);
  if (file_ >= 0) H5Fclose(file_);
}

std::vector<double> Hdf5MatrixFile::read_rows(const std::vector<RowRange>& ranges) {
  const std::int64_t my_rows = total_rows(ranges);
  std::vector<double> values;
  collectively(comm_, [&] {
    const std::string bad = check_row_ranges(ranges, rows_, path_);
    if (!bad.empty()) throw Error(bad);
    values = fresh_values(static_cast<std::size_t>(std::max<std::int64_t>(my_rows * cols_, 1)));
  });
  if (set_ < 0) {
    Handle file = open_file(comm_, path_);
    Handle set(H5Dopen2(file.get(), dataset_.c_str(), H5P_DEFAULT), H5Dclose);
    agree(comm_, set.ok() ? "" : path_ + ": cannot open dataset " + dataset_);
    file_ = file.release();
    set_ = set.release();
  }
  herr_t rc = 0;
  {
    const Handle file_space(H5Dget_space(set_), H5Sclose);
    const hsize_t length = static_cast<hsize_t>(std::max<std::int64_t>(my_rows * cols_, 1));
    const Handle memory_space(H5Screate_simple(1, &length, nullptr), H5Sclose);
    // One regular hyperslab per group of equal, evenly spaced runs: HDF5
    // builds a union of many blocks slowly (a block-cyclic panel of 10^6 rows
    // read at a quarter to a sixth of the .npy rate when each block was OR-ed
    // in).
    const std::vector<RegularRuns> groups = regular_groups(contiguous_runs(ranges));
    if (groups.empty()) {
      H5Sselect_none(file_space.get());
      H5Sselect_none(memory_space.get());
    }
    H5S_seloper_t op = H5S_SELECT_SET;
    bool selected = true;
    for (const RegularRuns& g : groups) {
      const hsize_t start[2] = {static_cast<hsize_t>(g.first), 0};
      const hsize_t stride[2] = {static_cast<hsize_t>(g.stride), 1};
      const hsize_t count[2] = {static_cast<hsize_t>(g.count), 1};
      const hsize_t block[2] = {static_cast<hsize_t>(g.length), static_cast<hsize_t>(cols_)};
      selected = selected && H5Sselect_hyperslab(file_space.get(), op, start, stride, count, block) >= 0;
      op = H5S_SELECT_OR;
    }
    // The read is collective: a rank whose selection failed must not leave
    // the others waiting in it.
    agree(comm_, selected ? "" : path_ + ", dataset " + dataset_ + ": cannot select the requested rows");
    const Handle dxpl = collective_transfer();
    rc = H5Dread(set_, H5T_NATIVE_DOUBLE, memory_space.get(), file_space.get(), dxpl.get(), values.data());
  }
  agree(comm_, rc >= 0 ? "" : path_ + ", dataset " + dataset_ + ": read failed");
  values.resize(static_cast<std::size_t>(my_rows * cols_));
  collectively(comm_, [&] {
    const std::int64_t index = first_non_finite(values.data(), static_cast<std::int64_t>(values.size()));
    if (index < 0) return;
    throw Error(path_ + ", dataset " + dataset_ + ": row " + std::to_string(global_row(ranges, index / cols_) + 1) +
                ", column " + std::to_string(index % cols_ + 1) + " (1-based): non-finite value");
  });
  return values;
}

void Hdf5MatrixFile::read_block_cyclic(const BlockCyclicLayout& layout, const LocalRowsSink& sink) {
  if (!exchange_fits(comm_, layout)) {
    MatrixFile::read_block_cyclic(layout, sink);
    return;
  }
  // read_rows is collective and agrees its own errors; the exchange calls
  // it on every rank in every round.
  const auto read = [&](const std::vector<RowRange>& ranges, std::vector<double>& out) {
    out = read_rows(ranges);
    return std::string();
  };
  exchange_block_cyclic(comm_, path_ + ", dataset " + dataset_, rows_, cols_, layout, read, sink);
}

Hdf5Writer::Hdf5Writer(const Comm& comm, std::string path, std::string dataset, std::int64_t rows,
                       std::int64_t cols)
    : comm_(comm), path_(std::move(path)), dataset_(std::move(dataset)), rows_(rows), cols_(cols) {
  static_assert(sizeof(hid_t) == sizeof(file_), "hid_t is held as int64");
  silence_hdf5();
  collectively(comm_, [&] {
    if (rows_ < 0 || cols_ < 1) throw Error(path_ + ": invalid shape");
    if (dataset_.empty() || dataset_.front() != '/') dataset_ = "/" + dataset_;
    if (!comm_.is_root()) return;
    const fs::path p(path_);
    if (p.extension() != ".h5" && p.extension() != ".hdf5")
      throw Error("output file '" + path_ + "' must end in .h5 or .hdf5");
    std::error_code ec;
    if (fs::exists(fs::symlink_status(p, ec)))
      throw Error("output file '" + path_ + "' exists; kembed does not overwrite files: remove it or choose another name");
    const fs::path parent = p.parent_path().empty() ? fs::path(".") : p.parent_path();
    if (!fs::is_directory(parent, ec))
      throw Error("cannot write '" + path_ + "': directory '" + parent.string() + "' does not exist");
    if (::access(parent.c_str(), W_OK | X_OK) != 0)
      throw Error("cannot write '" + path_ + "': directory '" + parent.string() + "' is not writable");
    temp_ = (parent / ("." + p.filename().string() + ".tmp-" + std::to_string(::getpid()))).string();
    ::unlink(temp_.c_str());  // a stale one from an earlier, killed run
  });
  comm_.broadcast(temp_);
  {
    const Handle fapl = mpio_access(comm_);
    file_ = H5Fcreate(temp_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
  }
  if (file_ >= 0) {
    const hsize_t dims[2] = {static_cast<hsize_t>(rows_), static_cast<hsize_t>(cols_)};
    const Handle space(H5Screate_simple(2, dims, nullptr), H5Sclose);
    const Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
    H5Pset_create_intermediate_group(lcpl.get(), 1);
    set_ = H5Dcreate2(file_, dataset_.c_str(), H5T_IEEE_F64LE, space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT);
  }
  try {
    agree(comm_, file_ < 0   ? "cannot create '" + temp_ + "' (HDF5)"
                 : set_ < 0 ? "cannot create dataset " + dataset_ + " in '" + temp_ + "'"
                            : "");
  } catch (const Error&) {
    close();
    if (comm_.is_root()) ::unlink(temp_.c_str());
    throw;
  }
}

void Hdf5Writer::close() {
  if (set_ >= 0) H5Dclose(set_);
  if (file_ >= 0) H5Fclose(file_);
  set_ = file_ = -1;
}

Hdf5Writer::~Hdf5Writer() {
  if (committed_) return;
  close();
  if (comm_.is_root() && !temp_.empty()) ::unlink(temp_.c_str());
}

void Hdf5Writer::write_rows(std::int64_t first_row, const std::vector<double>& values) {
  const auto count = static_cast<std::int64_t>(values.size());
  const std::int64_t my_rows = count / cols_;
  collectively(comm_, [&] {
    if (committed_) throw Error(path_ + ": write after commit");
    if (count % cols_ != 0 || first_row < 0 || first_row + my_rows > rows_)
      throw Error(path_ + ": rows [" + std::to_string(first_row) + ", " + std::to_string(first_row + my_rows) +
                  ") are outside the matrix of " + std::to_string(rows_) + " rows");
  });
  const Handle file_space(H5Dget_space(set_), H5Sclose);
  const hsize_t length = static_cast<hsize_t>(std::max<std::int64_t>(count, 1));
  const Handle memory_space(H5Screate_simple(1, &length, nullptr), H5Sclose);
  if (my_rows == 0) {
    H5Sselect_none(file_space.get());
    H5Sselect_none(memory_space.get());
  } else {
    const hsize_t start[2] = {static_cast<hsize_t>(first_row), 0};
    const hsize_t extent[2] = {static_cast<hsize_t>(my_rows), static_cast<hsize_t>(cols_)};
    H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, extent, nullptr);
  }
  const double none = 0;
  const Handle dxpl = collective_transfer();
  const herr_t rc = H5Dwrite(set_, H5T_NATIVE_DOUBLE, memory_space.get(), file_space.get(), dxpl.get(),
                             values.empty() ? &none : values.data());
  agree(comm_, rc >= 0 ? "" : "cannot write '" + temp_ + "' (disk full?)");
}

void Hdf5Writer::commit() {
  const herr_t set_rc = H5Dclose(set_);
  const herr_t file_rc = H5Fclose(file_);
  set_ = file_ = -1;
  agree(comm_, set_rc >= 0 && file_rc >= 0 ? "" : "cannot close '" + temp_ + "' (disk full?)");
  // Every rank's data is on disk before rank 0 makes the file visible.
  comm_.barrier();
  collectively(comm_, [&] {
    if (!comm_.is_root()) return;
    // NOREPLACE: a file that appeared at path_ during the run is kept.
    if (::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE) != 0)
      throw Error("cannot rename '" + temp_ + "' to '" + path_ + "': " + std::strerror(errno));
  });
  committed_ = true;
}

void write_hdf5_matrix(const Comm& comm, const std::string& path, const std::string& dataset, std::int64_t rows,
                       std::int64_t cols, std::int64_t first_row, const std::vector<double>& values) {
  Hdf5Writer writer(comm, path, dataset, rows, cols);
  writer.write_rows(first_row, values);
  writer.commit();
}

void annotate_hdf5_result(const std::string& path, const std::string& report,
                          const std::vector<double>& eigenvalues) {
  silence_hdf5();
  const Handle file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) throw Error("cannot open '" + path + "' to add the run report");
  // One fixed-length string: h5py reads it as bytes, HDF5 tools as text.
  const Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  bool ok = type.ok() && H5Tset_size(type.get(), std::max<std::size_t>(report.size(), 1)) >= 0 &&
            H5Tset_cset(type.get(), H5T_CSET_UTF8) >= 0;
  const Handle scalar(H5Screate(H5S_SCALAR), H5Sclose);
  const Handle attribute(ok ? H5Acreate2(file.get(), "run.json", type.get(), scalar.get(),
                                         H5P_DEFAULT, H5P_DEFAULT)
                            : -1,
                         H5Aclose);
  const std::string text = report.empty() ? std::string(1, ' ') : report;
  ok = attribute.ok() && H5Awrite(attribute.get(), type.get(), text.data()) >= 0;
  if (ok && !eigenvalues.empty()) {
    const hsize_t length = eigenvalues.size();
    const Handle space(H5Screate_simple(1, &length, nullptr), H5Sclose);
    const Handle set(H5Dcreate2(file.get(), "/eigenvalues", H5T_IEEE_F64LE, space.get(),
                                H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                     H5Dclose);
    ok = set.ok() && H5Dwrite(set.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                              eigenvalues.data()) >= 0;
  }
  if (!ok) throw Error("cannot add the run report to '" + path + "' (disk full?)");
}

std::string hdf5_version() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);
}

}  // namespace kembed::io
