#pragma once
// Serial reference computations for the tests: plain loops and LAPACK on one
// process, written independently of kembed's distributed code paths.
#include <cstdint>
#include <string>
#include <vector>

#include "kembed/kernel/kernel.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::test {

/// Column-major n x n matrix.
struct Dense {
  int n = 0;
  std::vector<double> a;
  double& operator()(int i, int j) { return a[std::size_t(j) * n + i]; }
  double operator()(int i, int j) const { return a[std::size_t(j) * n + i]; }
};

/// Reproducible standard-normal data, row-major n x d.
std::vector<double> random_data(int n, int d, unsigned seed);

/// Writes row-major data as raw float64 on rank 0 (then barrier); returns the path.
std::string write_bin(const Comm& comm, const std::string& dir, const std::string& name,
                      const std::vector<double>& data);

/// k(x_i, x_j) evaluated pair by pair from the definitions (no Gram trick).
Dense serial_kernel(const kernel::Kernel& kernel, const std::vector<double>& x, int n, int d);

/// J K J with J = I - 11^T/n, by explicit matrix products.
Dense serial_center(const Dense& k);

/// All eigenpairs by LAPACK dsyevd: ascending values; vectors overwrite a copy.
std::vector<double> serial_eigh(const Dense& a, Dense& vectors);

/// Flips column j of the n x k column-major `v` so its largest-magnitude entry
/// (first within a relative 1e-8) is positive.
void serial_fix_signs(std::vector<double>& v, int n, int k);

/// Kernel PCA computed serially: the top k eigenpairs of serial_center(kernel).
struct SerialKpca {
  std::vector<double> values;     ///< top k, descending
  std::vector<double> embedding;  ///< n x k row-major, sqrt(lambda) v, signs fixed
  double trace = 0;               ///< of the centered kernel
};
SerialKpca serial_kpca(const Dense& kernel, int k);

}  // namespace kembed::test
