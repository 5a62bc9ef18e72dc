// normal_sweep, the inner loop of the sparse normal product, at every
// instruction set this CPU has, against an explicit dense B = D_a X D_b - a b^T
// evaluated in long double: U += X^T D_a (B V) and gamma += a^T (B V), added
// to what u and gamma held, within a bound on any order of summation. The
// rows have every parity of length (the AVX-512 loop takes entries in pairs),
// none at all, and the last entries of the arrays (the prefetch looks ahead).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <random>
#include <vector>

#include "kembed/spectral/sparse_normal_sweep.hpp"
#include "test_support.hpp"

using namespace kembed;
using kembed::spectral::NormalFactors;

namespace {

struct Case {
  io::CsrRows x;
  NormalFactors f;
};

Case random_case(std::int64_t n, std::int64_t d, std::mt19937_64& gen) {
  std::uniform_real_distribution<double> value(-2, 2);
  std::uniform_int_distribution<int> length(0, int(std::min<std::int64_t>(d, 11)));
  Case c;
  c.x.rows = n;
  c.x.cols = d;
  c.x.offsets.assign(1, 0);
  for (std::int64_t i = 0; i < n; ++i) {
    // Row i holds a random subset of the columns, ascending; every third row
    // as many as the generator gives, the others up to 11 (odd and even).
    std::vector<std::int32_t> cols;
    const int want = i % 3 == 0 ? int(d) : length(gen);
    for (std::int32_t j = 0; j < d && int(cols.size()) < want; ++j)
      if (i % 3 == 0 || gen() % 2 == 0) cols.push_back(j);
    if (i % 7 == 3) cols.clear();
    for (std::int32_t j : cols) {
      c.x.columns.push_back(j);
      c.x.values.push_back(value(gen));
    }
    c.x.offsets.push_back(c.x.nonzeros());
  }
  for (std::int64_t i = 0; i < n; ++i) {
    c.f.row_scale.push_back(value(gen));
    c.f.row_shift.push_back(value(gen));
  }
  for (std::int64_t j = 0; j < d; ++j) {
    c.f.col_scale.push_back(value(gen));
    c.f.col_shift.push_back(value(gen));
  }
  return c;
}

void check_sweep(const Case& c, std::size_t w, SimdLevel level, std::mt19937_64& gen) {
  std::uniform_real_distribution<double> value(-1, 1);
  const std::int64_t n = c.x.local_rows(), d = c.x.cols;
  std::vector<double> v(std::size_t(d) * w), u0(std::size_t(d) * w), gamma0(w);
  for (double& e : v) e = value(gen);
  for (double& e : u0) e = value(gen);
  for (double& e : gamma0) e = value(gen);
  std::vector<double> beta(w, 0.0);
  for (std::int64_t j = 0; j < d; ++j)
    for (std::size_t k = 0; k < w; ++k) beta[k] += c.f.col_shift[j] * v[j * w + k];

  // Dense B, then T = B V, U = u0 + X^T D_a T, gamma = gamma0 + a^T T, with
  // the sums of absolute values for the bound.
  std::vector<long double> b(std::size_t(n) * d), x(std::size_t(n) * d, 0.0L);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t e = c.x.offsets[i]; e < c.x.offsets[i + 1]; ++e)
      x[i * d + c.x.columns[e]] = c.x.values[e];
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < d; ++j)
      b[i * d + j] = (long double)c.f.row_scale[i] * x[i * d + j] * c.f.col_scale[j] -
                     (long double)c.f.row_shift[i] * c.f.col_shift[j];
  std::vector<long double> t(std::size_t(n) * w, 0.0L), t_abs(std::size_t(n) * w, 0.0L);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < w; ++k)
      for (std::int64_t j = 0; j < d; ++j) {
        t[i * w + k] += b[i * d + j] * v[j * w + k];
        t_abs[i * w + k] += std::fabs(b[i * d + j] * v[j * w + k]);
      }
  std::vector<long double> u(u0.begin(), u0.end()), u_abs(u0.size());
  std::vector<long double> g(gamma0.begin(), gamma0.end()), g_abs(w);
  for (std::size_t q = 0; q < u0.size(); ++q) u_abs[q] = std::fabs(u0[q]);
  for (std::size_t k = 0; k < w; ++k) g_abs[k] = std::fabs(gamma0[k]);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < w; ++k) {
      g[k] += c.f.row_shift[i] * t[i * w + k];
      g_abs[k] += std::fabs(c.f.row_shift[i]) * t_abs[i * w + k];
      for (std::int64_t j = 0; j < d; ++j) {
        u[j * w + k] += x[i * d + j] * c.f.row_scale[i] * t[i * w + k];
        u_abs[j * w + k] += std::fabs(x[i * d + j] * c.f.row_scale[i]) * t_abs[i * w + k];
      }
    }

  std::vector<double> got_u = u0, got_gamma = gamma0;
  spectral::normal_sweep(c.x, c.f, v.data(), w, beta.data(), got_u.data(), got_gamma.data(),
                         level);
  // Any order of summation of m terms errs by at most about m eps times the
  // sum of their absolute values; the terms here go through two sums of at
  // most d + 2 and n + 1 terms.
  const double bound = 4.0 * double(d + n + 4) * DBL_EPSILON;
  const std::string where = simd_level_name(level) + ", width " + std::to_string(w) + ", " +
                            std::to_string(n) + " x " + std::to_string(d);
  for (std::size_t q = 0; q < u.size(); ++q)
    ASSERT_LE(std::fabs(got_u[q] - double(u[q])), bound * double(u_abs[q]) + 1e-300)
        << where << ", u entry " << q;
  for (std::size_t k = 0; k < w; ++k)
    ASSERT_LE(std::fabs(got_gamma[k] - double(g[k])), bound * double(g_abs[k]) + 1e-300)
        << where << ", gamma " << k;
}

TEST(NormalSweep, MatchesTheDenseProductAtEveryInstructionSet) {
  std::mt19937_64 gen(11);
  for (const auto& [n, d] : std::vector<std::pair<int, int>>{{0, 5}, {1, 1}, {7, 3}, {60, 37},
                                                              {201, 90}}) {
    const Case c = random_case(n, d, gen);
    for (SimdLevel level : kembed::test::supported_simd_levels())
      for (std::size_t w : {std::size_t(8), std::size_t(5), std::size_t(1), std::size_t(9)})
        check_sweep(c, w, level, gen);
  }
}

}  // namespace
