#pragma once
/// @file The exponential of many doubles at once, in SIMD registers.
///
/// The elementwise pass of kernel assembly (rbf, laplacian) takes one exp per
/// matrix entry; with the scalar std::exp it costs as much as the dgemm that
/// precedes it. These functions compute the same function several lanes at a
/// time, with the instruction set chosen once at run time, so the binary stays
/// portable x86-64.
///
/// Method: exp(x) = 2^k e^r with k = round(x / ln 2) and r = x - k ln 2 (ln 2
/// split in two parts, Cody-Waite, so that k ln2_hi is exact), |r| <= ln(2)/2;
/// e^r = 1 + r + r^2 q(r) with q a degree-10 polynomial fitted to
/// (e^r - 1 - r) / r^2 on that interval (relative error of the fit 4e-19);
/// 2^k is built from its exponent bits, in two factors where the result is
/// subnormal (or overflows), so that it is rounded once.
///
/// Accuracy: within 1 ulp of std::exp (glibc's, itself within 1 ulp of the
/// exact value) everywhere, measured on every instruction set over millions of
/// points in [-745.2, 709.8] (tests/unit/test_vector_exp.cpp). Special values
/// as std::exp: exp(+-0) = 1 exactly, results below half the smallest
/// subnormal (x < -745.1332) are +0, subnormal results are rounded correctly
/// from the (within-1-ulp) value, exp(-inf) = 0, x > 709.7827 gives +inf, NaN
/// stays NaN. errno and the floating-point exception flags are not set as
/// std::exp would set them. Results can differ in the last bit between
/// instruction sets (fused multiply-add where the CPU has it), never between
/// positions in the array.
#include <cstddef>

#include "kembed/core/simd_level.hpp"

namespace kembed::kernel {

// Lanes: 2 at the baseline (SSE2), 4 with AVX2 and FMA, 8 with AVX-512.
using kembed::best_simd_level;
using kembed::simd_level_name;
using kembed::SimdLevel;

/// values[i] <- exp(values[i]) for i < count, at best_simd_level().
void exp_in_place(double* values, std::size_t count);

/// The same at a given level (tests and benchmarks compare the levels).
/// @pre level <= best_simd_level()
void exp_in_place(double* values, std::size_t count, SimdLevel level);

/// One column of an rbf kernel block from the same column of the Gram block,
/// in one pass: gram[i] <- exp(-gamma * max(0, row_norms[i] + col_norm -
/// 2 gram[i])), the squared distance ||x_i - y||^2 = ||x_i||^2 + ||y||^2 -
/// 2 x_i.y clamped at 0 against cancellation, evaluated in that order.
void exp_neg_squared_distances(double* gram, const double* row_norms, double col_norm, double gamma,
                               std::size_t count);

/// The same at a given level. @pre level <= best_simd_level()
void exp_neg_squared_distances(double* gram, const double* row_norms, double col_norm, double gamma,
                               std::size_t count, SimdLevel level);

}  // namespace kembed::kernel
