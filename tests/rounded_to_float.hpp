#pragma once
/// @file The float32 value of each double, as float32 files store them: the
/// oracle for tests that read float32 input.
#include <vector>

namespace kembed::test {

/// Each value rounded to the nearest float32, back in a double. The volatile
/// float keeps the compiler from vectorizing the loop: in loops of
/// `d[i] = static_cast<float>(e[i])`, GCC 12.2 at -O3 left the last elements
/// of some test arrays unrounded.
inline std::vector<double> rounded_to_float(std::vector<double> values) {
  for (double& v : values) {
    volatile float narrow = static_cast<float>(v);
    v = narrow;
  }
  return values;
}

}  // namespace kembed::test
