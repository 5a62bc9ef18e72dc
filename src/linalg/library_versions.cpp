#include "kembed/linalg/library_versions.hpp"

#include <dlfcn.h>

#include <cctype>
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

std::string blas_core() {
  using CoreFn = char* (*)();
  auto core = reinterpret_cast<CoreFn>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  const char* name = core ? core() : nullptr;
  return name ? name : "";
}

std::string blas_core_note(const std::string& core, SimdLevel level) {
  if (core.empty() || level == SimdLevel::baseline) return "";
  // OpenBLAS 0.3's x86-64 cores whose kernels use AVX2 (or more).
  static const char* const avx2_cores[] = {"Haswell",        "Zen",      "SkylakeX", "Cooperlake",
                                           "SapphireRapids", "Excavator"};
  std::string name = core;
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string known : avx2_cores) {
    for (char& c : known) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (known == name) return "";
  }
  const std::string suggested = level == SimdLevel::avx512 ? "SkylakeX" : "Haswell";
  return "OpenBLAS runs its " + core + " kernels, which use no AVX2, on a CPU with " +
         simd_level_name(level) +
         " (its CPU detection can fail in a virtual machine); its "
         "matrix products may be several times slower than they can be: set "
         "OPENBLAS_CORETYPE=" +
         suggested + " in the job's environment";
}

}  // namespace kembed::linalg
