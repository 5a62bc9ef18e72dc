// The note on OpenBLAS kernels older than the CPU: given for the cores
// without AVX2 on a CPU with AVX2 or AVX-512, naming the OPENBLAS_CORETYPE
// that fits; never for a core that fits, another BLAS, or a CPU without AVX2.
#include <gtest/gtest.h>

#include <string>

#include "kembed/linalg/library_versions.hpp"

using kembed::SimdLevel;
using kembed::linalg::blas_core;
using kembed::linalg::blas_core_note;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST(BlasCore, OldKernelsOnANewerCpuGetANoteNamingTheCoreType) {
  for (const char* core : {"Prescott", "Core2", "Nehalem", "Sandybridge", "Barcelona"}) {
    const std::string on_avx512 = blas_core_note(core, SimdLevel::avx512);
    EXPECT_TRUE(contains(on_avx512, "OPENBLAS_CORETYPE=SkylakeX")) << core << ": " << on_avx512;
    EXPECT_TRUE(contains(on_avx512, std::string("its ") + core + " kernels")) << on_avx512;
    const std::string on_avx2 = blas_core_note(core, SimdLevel::avx2);
    EXPECT_TRUE(contains(on_avx2, "OPENBLAS_CORETYPE=Haswell")) << core << ": " << on_avx2;
  }
}

TEST(BlasCore, FittingKernelsAnotherBlasOrAnOlderCpuGetNone) {
  for (const char* core : {"Haswell", "Zen", "SkylakeX", "skylakex", "Cooperlake"})
    for (SimdLevel level : {SimdLevel::avx2, SimdLevel::avx512})
      EXPECT_EQ(blas_core_note(core, level), "") << core;
  EXPECT_EQ(blas_core_note("", SimdLevel::avx512), "");  // not OpenBLAS
  EXPECT_EQ(blas_core_note("Prescott", SimdLevel::baseline), "");
}

TEST(BlasCore, TheLoadedOpenBlasNamesItsCore) {
  // kembed links Debian's OpenBLAS, which answers openblas_get_corename.
  EXPECT_FALSE(blas_core().empty());
}
