#include "kembed/linalg/library_versions.hpp"

#include <dlfcn.h>

#include <climits>
#include <cstdlib>

#include "fortran.hpp"

#ifdef KEMBED_HAVE_ELPA
#include <elpa/elpa.h>
#endif

namespace kembed::linalg {

namespace {

// The file that defines `symbol` in this process, symlinks resolved ("" if the
// symbol is not exported by a shared object, e.g. linked statically).
std::string defining_file(const char* symbol) {
  void* address = dlsym(RTLD_DEFAULT, symbol);
  Dl_info info{};
  if (!address || !dladdr(address, &info) || !info.dli_fname || !*info.dli_fname) return "";
  char resolved[PATH_MAX];
  return realpath(info.dli_fname, resolved) ? resolved : info.dli_fname;
}

std::string with_file(std::string text, const char* symbol) {
  const std::string file = defining_file(symbol);
  return text + (file.empty() ? " (linked statically)" : " (" + file + ")");
}

// Vendor queries by name: each exists in one BLAS only, so none can be a link
// dependency; dlsym finds whichever library is loaded.
std::string blas_description() {
  using ConfigFn = char* (*)();
  using ThreadsFn = int (*)();
  if (auto config = reinterpret_cast<ConfigFn>(dlsym(RTLD_DEFAULT, "openblas_get_config"))) {
    std::string text = config();
    if (auto threads = reinterpret_cast<ThreadsFn>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads")))
      text += ", " + std::to_string(threads()) + " thread(s)";
    return text;
  }
  using MklFn = void (*)(char*, int);
  if (auto mkl = reinterpret_cast<MklFn>(dlsym(RTLD_DEFAULT, "MKL_Get_Version_String"))) {
    char text[256] = {};
    mkl(text, static_cast<int>(sizeof text) - 1);
    return text;
  }
  using BlisFn = const char* (*)();
  if (auto blis = reinterpret_cast<BlisFn>(dlsym(RTLD_DEFAULT, "bli_info_get_version_str")))
    return std::string("BLIS ") + blis();
  return "version unknown";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> library_versions() {
  std::vector<std::pair<std::string, std::string>> result;
  result.emplace_back("BLAS", with_file(blas_description(), "dgemm_"));
  int major = 0, minor = 0, patch = 0;
  ilaver_(&major, &minor, &patch);
  result.emplace_back("LAPACK", with_file(std::to_string(major) + "." + std::to_string(minor) +
                                              "." + std::to_string(patch),
                                          "dsyevd_"));
  // ScaLAPACK has no version query; the loaded file's name carries it
  // (Debian: libscalapack-openmpi.so.2.2.1).
  result.emplace_back("ScaLAPACK", with_file("version not queryable", "pdsyevd_"));
#ifdef KEMBED_HAVE_ELPA
  result.emplace_back("ELPA", with_file("API " + std::to_string(ELPA_API_VERSION), "elpa_init"));
#endif
  return result;
}

}  // namespace kembed::linalg
