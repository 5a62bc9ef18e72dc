#pragma once
/// @file The fingerprint models keep of their training data: the sum, modulo
/// 2^64, of mix64(bits(x_t) + (t + 1) * gamma) over the float64 values x_t
/// at row-major index t (mix64 and gamma are SplitMix64's). Each term depends
/// only on a value and its position, so every rank hashes the entries it
/// holds, in any layout and order, and the parts add: no pass over the data
/// is serial, unlike a recurrence such as FNV-1a.
#include <cstdint>
#include <cstring>
#include <string>

#include "kembed/core/splitmix64.hpp"

namespace kembed {

/// The term of value `x` at row-major index `t`.
inline std::uint64_t fingerprint_term(double x, std::uint64_t t) {
  std::uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return mix64(bits + (t + 1) * SplitMix64::kGoldenGamma);
}

/// 16 lower-case hex digits, as manifests store it.
inline std::string fingerprint_hex(std::uint64_t fingerprint) {
  std::string hex(16, '0');
  for (int i = 15; i >= 0; --i, fingerprint >>= 4) hex[i] = "0123456789abcdef"[fingerprint & 15];
  return hex;
}

}  // namespace kembed
