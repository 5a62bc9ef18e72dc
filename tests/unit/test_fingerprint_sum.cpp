// The SIMD fingerprint sum against the scalar definition (fingerprint_term of
// include/kembed/core/data_fingerprint.hpp, summed in a plain loop), on each
// instruction set: random bit patterns and the special values (NaN payloads,
// infinities, signed zeros, subnormals), every length 0..40 (so every
// position of the masked last step on 1, 4 and 8 lanes), odd strides, start
// indices near 2^64 (the index arithmetic wraps) and unaligned starts. A lane
// offset or mask off by one, a wrong step or a wrong constant changes sums.
// A variant this CPU lacks is reported as skipped, never as passed.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <vector>

#include "core/fingerprint_sum.hpp"
#include "kembed/core/data_fingerprint.hpp"

using namespace kembed;

namespace {

double from_bits(std::uint64_t bits) {
  double x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// Random doubles, one in three a special value.
std::vector<double> test_values(std::size_t count, std::uint64_t seed) {
  const double specials[] = {
      0.0,
      -0.0,
      std::numeric_limits<double>::infinity(),
      -std::numeric_limits<double>::infinity(),
      std::numeric_limits<double>::quiet_NaN(),
      from_bits(0xfff8000000000001ull),  // negative NaN with a payload
      from_bits(0x7ff0000000000001ull),  // signalling NaN
      std::numeric_limits<double>::denorm_min(),
      -from_bits(0x000fffffffffffffull),  // largest subnormal, negative
      from_bits(0x0000000012345678ull),   // a subnormal
      std::numeric_limits<double>::max(),
      std::numeric_limits<double>::min(),
  };
  constexpr std::size_t kSpecials = sizeof specials / sizeof specials[0];
  std::mt19937_64 gen(seed);
  std::vector<double> values(count);
  for (double& v : values) {
    const std::uint64_t r = gen();
    v = r % 3 == 0 ? specials[(r >> 8) % kSpecials] : from_bits(gen());
  }
  return values;
}

std::uint64_t reference(const double* values, std::uint64_t count, std::uint64_t first,
                        std::uint64_t stride) {
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < count; ++i) sum += fingerprint_term(values[i], first + i * stride);
  return sum;
}

class FingerprintSum : public ::testing::TestWithParam<SimdLevel> {};

}  // namespace

TEST_P(FingerprintSum, EqualsTheScalarDefinition) {
  const SimdLevel variant = GetParam();
  if (static_cast<int>(variant) > static_cast<int>(best_simd_level()))
    GTEST_SKIP() << simd_level_name(variant)
                 << " not run: this CPU does not support it (best: "
                 << simd_level_name(best_simd_level()) << ")";
  const std::vector<double> values = test_values(48, 11);
  const std::uint64_t firsts[] = {0, 1, 12345, ~std::uint64_t{0} - 20};
  const std::uint64_t strides[] = {1, 3, 65, (std::uint64_t{1} << 40) + 7};
  int cases = 0;
  for (std::size_t start = 0; start < 3; ++start)  // unaligned loads
    for (std::uint64_t count = 0; count <= 40; ++count)
      for (const std::uint64_t first : firsts)
        for (const std::uint64_t stride : strides) {
          const double* run = values.data() + start;
          const std::uint64_t want = reference(run, count, first, stride);
          const std::uint64_t got = fingerprint_strided(run, count, first, stride, variant);
          ++cases;
          ASSERT_EQ(got, want) << simd_level_name(variant) << ": start " << start
                               << ", count " << count << ", first " << first << ", stride "
                               << stride;
        }
  // The empty run adds nothing; a run is the sum of its parts (split anywhere).
  EXPECT_EQ(fingerprint_strided(values.data(), 0, 5, 3, variant), 0u);
  const std::uint64_t whole = fingerprint_strided(values.data(), 37, 9, 5, variant);
  for (std::uint64_t cut = 0; cut <= 37; ++cut)
    EXPECT_EQ(fingerprint_strided(values.data(), cut, 9, 5, variant) +
                  fingerprint_strided(values.data() + cut, 37 - cut, 9 + cut * 5, 5, variant),
              whole)
        << "cut at " << cut;
  std::cout << "  " << simd_level_name(variant) << ": " << cases << " runs equal\n";
}

INSTANTIATE_TEST_SUITE_P(Variants, FingerprintSum,
                         ::testing::Values(SimdLevel::baseline, SimdLevel::avx2,
                                           SimdLevel::avx512),
                         [](const auto& info) { return simd_level_name(info.param); });

TEST(FingerprintSum, DefaultIsTheBestVariant) {
  const std::vector<double> values = test_values(29, 12);
  EXPECT_EQ(fingerprint_strided(values.data(), 29, 100, 7),
            fingerprint_strided(values.data(), 29, 100, 7, best_simd_level()));
  EXPECT_EQ(fingerprint_strided(values.data(), 29, 100, 7), reference(values.data(), 29, 100, 7));
}
