#include "kembed/core/simd_level.hpp"

#include "kembed/core/error.hpp"

namespace kembed {

namespace {

SimdLevel detect_level() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  // __builtin_cpu_supports also checks that the OS saves the wider registers.
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq"))
    return SimdLevel::avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return SimdLevel::avx2;
#endif
  return SimdLevel::baseline;
}

}  // namespace

SimdLevel best_simd_level() {
  static const SimdLevel level = detect_level();
  return level;
}

std::string simd_level_name(SimdLevel level) {
  switch (level) {
    case SimdLevel::baseline: return "baseline";
    case SimdLevel::avx2: return "avx2";
    case SimdLevel::avx512: return "avx512";
  }
  return "unknown";
}

void check_simd_level(SimdLevel level, const std::string& what) {
  if (static_cast<int>(level) > static_cast<int>(best_simd_level()))
    throw Error(what + ": this CPU does not support " + simd_level_name(level));
}

}  // namespace kembed
