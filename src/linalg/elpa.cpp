#include "kembed/linalg/elpa.hpp"

#include <string>

#include "kembed/core/error.hpp"

#ifdef KEMBED_HAVE_ELPA
// ELPA's header declares C++ overloads itself: include it outside extern "C".
#include <elpa/elpa.h>
#endif

namespace kembed::elpa {

#ifdef KEMBED_HAVE_ELPA

bool available() { return true; }

namespace {

// Owns one ELPA handle (and the library initialization around it).
class Handle {
 public:
  Handle() {
    if (elpa_init(ELPA_API_VERSION) != ELPA_OK) throw Error("ELPA: API version not supported");
    int error = 0;
    handle_ = elpa_allocate(&error);
    if (error != ELPA_OK) throw Error("ELPA: cannot allocate a handle");
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    int error = 0;
    if (handle_) elpa_deallocate(handle_, &error);
    elpa_uninit(&error);
  }
  void set(const char* name, int value) {
    int error = 0;
    elpa_set(handle_, name, value, &error);
    if (error != ELPA_OK) throw Error(std::string("ELPA: cannot set ") + name);
  }
  elpa_t get() const { return handle_; }

 private:
  elpa_t handle_ = nullptr;
};

}  // namespace

std::vector<double> lowest_eigenpairs(DistMatrix& a, int nev, DistMatrix& z) {
  const Comm& comm = a.grid().comm();
  std::vector<double> w(a.rows());
  int error = ELPA_OK;
  std::string message;
  {
    Handle handle;
    handle.set("na", static_cast<int>(a.rows()));
    handle.set("nev", nev);
    handle.set("local_nrows", a.local_rows());
    handle.set("local_ncols", a.local_cols());
    handle.set("nblk", a.row_dist().block_size());
    handle.set("mpi_comm_parent", static_cast<int>(MPI_Comm_c2f(comm.get())));
    handle.set("process_row", a.grid().myrow());
    handle.set("process_col", a.grid().mycol());
    if (elpa_setup(handle.get()) != ELPA_OK) message = "ELPA: setup failed";
    if (message.empty()) {
      handle.set("solver", ELPA_SOLVER_2STAGE);
      elpa_eigenvectors(handle.get(), a.data(), w.data(), z.data(), &error);
      if (error != ELPA_OK) message = "ELPA: eigensolver failed with error " + std::to_string(error);
    }
  }
  agree(comm, message);
  MPI_Bcast(w.data(), static_cast<int>(w.size()), MPI_DOUBLE, 0, comm.get());
  w.resize(nev);
  return w;
}

#else

bool available() { return false; }

std::vector<double> lowest_eigenpairs(DistMatrix& a, int, DistMatrix&) {
  agree(a.grid().comm(), "this kembed was built without ELPA (--solver elpa is not available)");
  return {};
}

#endif

}  // namespace kembed::elpa
