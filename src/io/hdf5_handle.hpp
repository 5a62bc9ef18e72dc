#pragma once
/// @file Private: the owner of one HDF5 identifier, for the files that call
/// HDF5 (hdf5_matrix_file.cpp, h5ad_csr_reader.cpp; only they see hdf5.h).
#include <hdf5.h>

namespace kembed::io {

/// Owner of one HDF5 identifier, closed with the function that matches its
/// kind. Closing a file opened with the MPI-IO driver is collective: every
/// rank leaves the scope together because every error is agreed first.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
  /// Closes the identifier held, then takes `other`'s.
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      if (id_ >= 0) close_(id_);
      id_ = other.id_;
      close_ = other.close_;
      other.id_ = -1;
    }
    return *this;
  }
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

}  // namespace kembed::io
