#include "kembed/kernel/vector_exp.hpp"

#include <cstdint>
#include <cstring>

#include "kembed/core/error.hpp"

// The algorithm is written once on GCC/Clang vector types (vector_size), whose
// arithmetic compiles to the SIMD instructions of the enclosing function's
// target: 2 lanes in the baseline build, 4 and 8 lanes in the functions
// compiled with target("avx2,fma") and target("avx512f"). Writing the lanes
// explicitly, rather than leaving a scalar loop to the auto-vectorizer, keeps
// the speed independent of the optimizer (which may not if-convert the range
// checks under -ftrapping-math) and the results independent of a value's
// position in the array (no scalar remainder loop).

namespace kembed::kernel {

namespace {

template <int Lanes>
struct Simd {
  typedef double Real __attribute__((vector_size(Lanes * sizeof(double))));
  typedef std::int64_t Int __attribute__((vector_size(Lanes * sizeof(double))));
  typedef std::uint64_t UInt __attribute__((vector_size(Lanes * sizeof(double))));
};

// Coefficients c2..c12 of e^r ~ 1 + r + c2 r^2 + ... + c12 r^12 on
// |r| <= ln(2)/2: a degree-10 Chebyshev fit of (e^r - 1 - r) / r^2 in
// 60-digit arithmetic (mpmath.chebyfit), rounded to double; the fit's
// relative error in e^r is below 4e-19 (0.003 ulp).
constexpr double kC2 = 0x1.0000000000000p-1;
constexpr double kC3 = 0x1.5555555555557p-3;
constexpr double kC4 = 0x1.5555555555556p-5;
constexpr double kC5 = 0x1.11111111100dfp-7;
constexpr double kC6 = 0x1.6c16c16c162d6p-10;
constexpr double kC7 = 0x1.a01a01abe6327p-13;
constexpr double kC8 = 0x1.a01a01a6d7833p-16;
constexpr double kC9 = 0x1.71de0237479e4p-19;
constexpr double kC10 = 0x1.27e4db67abc75p-22;
constexpr double kC11 = 0x1.af4ddda32bea9p-26;
constexpr double kC12 = 0x1.1f72fc848c527p-29;

constexpr double kLog2e = 0x1.71547652b82fep0;
// ln 2 = kLn2Hi + kLn2Lo; kLn2Hi has 32 significant bits, so k * kLn2Hi is
// exact for |k| < 2^21 and x - k * kLn2Hi is exact (fdlibm's split).
constexpr double kLn2Hi = 0x1.62e42fee00000p-1;
constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
// Adding 1.5 * 2^52 rounds to an integer, which then sits in the low bits.
constexpr double kShifter = 0x1.8p52;

// exp of every lane of x, in place. Inlined into each instruction set's loop.
template <class Real, class Int, class UInt>
__attribute__((always_inline)) inline void exp_lanes(Real& x) {
  const Real zero{};
  // Below -708 the result is subnormal or 0: scale by 2^(k + 64), then by
  // 2^-64 (one rounding). Above 709 by 2^(k - 64), then 2^64 (overflow to inf).
  const Int tiny = (x < -708.0), huge = (x > 709.0);
  // Outside [-746, 710] the result is 0 or inf already; clamping keeps k small.
  // NaN fails both comparisons and propagates through the polynomial.
  x = x < -746.0 ? zero - 746.0 : x;
  x = x > 710.0 ? zero + 710.0 : x;
  const Real shifted = x * kLog2e + kShifter;
  const Real k = shifted - kShifter;
  const Real r = (x - k * kLn2Hi) - k * kLn2Lo;
  const Real r2 = r * r;
  Real q = zero + kC12;
  q = q * r + kC11;
  q = q * r + kC10;
  q = q * r + kC9;
  q = q * r + kC8;
  q = q * r + kC7;
  q = q * r + kC6;
  q = q * r + kC5;
  q = q * r + kC4;
  q = q * r + kC3;
  q = q * r + kC2;
  // 1 is added last: the rounding errors of the smaller terms shrink with r.
  const Real expr = 1.0 + (r + r2 * q);
  Real bias = tiny ? zero + 64.0 : zero;
  bias = huge ? zero - 64.0 : bias;
  Real factor = tiny ? zero + 0x1p-64 : zero + 1.0;
  factor = huge ? zero + 0x1p64 : factor;
  // The low bits of shifted + bias hold k + bias (the shifter's own low 52
  // bits are 2^51, which the shift by 52 drops): the exponent field of
  // 2^(k + bias) is k + bias + 1023, in [11, 2046]. Unsigned lanes: the
  // shift pushes the double's own exponent bits out, which would overflow
  // a signed lane.
  const Real scale =
      reinterpret_cast<Real>((reinterpret_cast<UInt>(shifted + bias) + 1023u) << 52);
  x = expr * scale * factor;
}

// The exponent of each lane, from the value in it (by reference, in place:
// vector values passed by value would change the ABI between targets): the
// value itself ...
struct PlainArgument {
  template <class Real>
  __attribute__((always_inline)) void operator()(Real&, std::size_t, std::size_t) const {}
};

// ... or an rbf entry's -gamma * max(0, ||x_i||^2 + ||y||^2 - 2 x_i.y) from
// the Gram entry x_i.y, with the expression and rounding of the scalar code.
// `lanes` entries of row_norms from i on are read.
struct SquaredDistanceArgument {
  const double* row_norms;
  double col_norm, minus_gamma;
  template <class Real>
  __attribute__((always_inline)) void operator()(Real& gram, std::size_t i,
                                                 std::size_t lanes) const {
    Real norms{};
    std::memcpy(&norms, row_norms + i, lanes * sizeof(double));
    const Real d2 = norms + col_norm - 2 * gram;
    gram = minus_gamma * (d2 > 0 ? d2 : Real{});
  }
};

// values[i] <- exp(argument(values[i], i)), Lanes at a time. The last values
// go through the same lanes (padded with zeros), so a value's result does not
// depend on its position.
template <int Lanes, class Argument>
__attribute__((always_inline)) inline void exp_array(double* values, std::size_t count,
                                                     const Argument& argument) {
  using Real = typename Simd<Lanes>::Real;
  using Int = typename Simd<Lanes>::Int;
  using UInt = typename Simd<Lanes>::UInt;
  std::size_t i = 0;
  for (; i + Lanes <= count; i += Lanes) {
    Real x;
    std::memcpy(&x, values + i, sizeof x);
    argument(x, i, Lanes);
    exp_lanes<Real, Int, UInt>(x);
    std::memcpy(values + i, &x, sizeof x);
  }
  if (i < count) {
    const std::size_t left = count - i;
    Real x{};
    std::memcpy(&x, values + i, left * sizeof(double));
    argument(x, i, left);
    exp_lanes<Real, Int, UInt>(x);
    std::memcpy(values + i, &x, left * sizeof(double));
  }
}

// One function per instruction set and argument kind; the x86 ones are
// compiled for their target whatever the flags of the build.
#define KEMBED_EXP_FUNCTIONS(SUFFIX, TARGET, LANES)                                       \
  TARGET void exp_##SUFFIX(double* values, std::size_t count) {                           \
    exp_array<LANES>(values, count, PlainArgument{});                                     \
  }                                                                                       \
  TARGET void exp_sqdist_##SUFFIX(double* gram, const double* row_norms, double col_norm, \
                                  double gamma, std::size_t count) {                      \
    exp_array<LANES>(gram, count, SquaredDistanceArgument{row_norms, col_norm, -gamma});  \
  }

KEMBED_EXP_FUNCTIONS(baseline, , 2)

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KEMBED_X86_DISPATCH 1

KEMBED_EXP_FUNCTIONS(avx2, __attribute__((target("avx2,fma"))), 4)
KEMBED_EXP_FUNCTIONS(avx512, __attribute__((target("avx512f"))), 8)
#endif

}  // namespace

void exp_in_place(double* values, std::size_t count) {
  exp_in_place(values, count, best_simd_level());
}

void exp_in_place(double* values, std::size_t count, SimdLevel level) {
  check_simd_level(level, "vector exp");
  switch (level) {
#ifdef KEMBED_X86_DISPATCH
    case SimdLevel::avx512: exp_avx512(values, count); return;
    case SimdLevel::avx2: exp_avx2(values, count); return;
#else
    case SimdLevel::avx512:
    case SimdLevel::avx2:
#endif
    case SimdLevel::baseline: exp_baseline(values, count); return;
  }
}

void exp_neg_squared_distances(double* gram, const double* row_norms, double col_norm,
                               double gamma, std::size_t count) {
  exp_neg_squared_distances(gram, row_norms, col_norm, gamma, count, best_simd_level());
}

void exp_neg_squared_distances(double* gram, const double* row_norms, double col_norm,
                               double gamma, std::size_t count, SimdLevel level) {
  check_simd_level(level, "vector exp");
  switch (level) {
#ifdef KEMBED_X86_DISPATCH
    case SimdLevel::avx512: exp_sqdist_avx512(gram, row_norms, col_norm, gamma, count); return;
    case SimdLevel::avx2: exp_sqdist_avx2(gram, row_norms, col_norm, gamma, count); return;
#else
    case SimdLevel::avx512:
    case SimdLevel::avx2:
#endif
    case SimdLevel::baseline: exp_sqdist_baseline(gram, row_norms, col_norm, gamma, count); return;
  }
}

}  // namespace kembed::kernel
