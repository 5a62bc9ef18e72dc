#pragma once
/// @file Private: owner of a committed derived MPI datatype.
#include <mpi.h>

#include <utility>

namespace kembed::io {

/// Commits a derived datatype on construction and frees it on destruction.
/// Move-only, so the type is freed exactly once.
class MpiDatatype {
 public:
  explicit MpiDatatype(MPI_Datatype type) : type_(type) { MPI_Type_commit(&type_); }
  MpiDatatype(const MpiDatatype&) = delete;
  MpiDatatype& operator=(const MpiDatatype&) = delete;
  MpiDatatype(MpiDatatype&& other) noexcept : type_(std::exchange(other.type_, MPI_DATATYPE_NULL)) {}
  MpiDatatype& operator=(MpiDatatype&& other) noexcept {
    std::swap(type_, other.type_);
    return *this;
  }
  ~MpiDatatype() {
    if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
  }
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

}  // namespace kembed::io
