#pragma once
// Helpers shared by the MPI tests.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "kembed/core/error.hpp"
#include "kembed/core/simd_level.hpp"
#include "kembed/kernel/kernel.hpp"
#include "kembed/linalg/block_cyclic.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::test {

/// Collective: true on every rank iff `ok` holds on every rank. Use it so one
/// rank's failure fails the test everywhere: EXPECT_TRUE(all_ranks(comm, ok)).
bool all_ranks(const Comm& comm, bool ok);

/// Largest |a_i - b_i|; infinity when the sizes differ or a difference is
/// NaN, so that a NaN never passes a tolerance.
double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b);

/// Every P x Q process grid with P * Q == p (1 x p, ..., p x 1).
std::vector<std::pair<int, int>> grid_shapes(int p);

/// The rows of the row-major x (d columns) at the global indices `dist` deals
/// to this process, row-major: a rank's panel, built without kembed's readers.
std::vector<double> panel(const std::vector<double>& x, int d, const BlockCyclic1D& dist);

/// A kernel of `type` with the tests' parameters: gamma 0.3, degree 3, coef0 0.5.
kernel::Kernel test_kernel(kernel::KernelType type);

/// A fresh scratch directory for this test (same path on every rank).
std::string scratch_dir(const Comm& comm, const std::string& name);

/// The message of the kembed::Error that `body` threw on this rank (empty if
/// it did not throw).
template <class Body>
std::string caught(Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

/// The values of `a` converted to T, as the bytes a file of T would hold.
template <class T>
std::string raw_bytes(const std::vector<double>& a) {
  std::string out;
  for (double v : a) {
    const T x = static_cast<T>(v);
    out.append(reinterpret_cast<const char*>(&x), sizeof x);
  }
  return out;
}

/// The SIMD levels this CPU runs, baseline first: each kernel is tested at all.
std::vector<SimdLevel> supported_simd_levels();

}  // namespace kembed::test
