#pragma once
// Serial reference computations for the tests: plain loops and LAPACK on one
// process, written independently of kembed's distributed code paths.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
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

/// All eigenvalues of the general (nonsymmetric) matrix `a` by LAPACK dgeev,
/// without vectors: real parts in .first, imaginary parts in .second.
std::vector<std::pair<double, double>> serial_eigenvalues_general(const Dense& a);

/// A = H diag(lambda) H with the reflector H = I - 2 u u^T (u normalized
/// here): the spectrum is exactly `lambda`, the eigenvectors H e_i are dense,
/// and each entry is O(1) to compute on its owner.
class ReflectedSpectrum {
 public:
  ReflectedSpectrum(std::vector<double> lambda, std::vector<double> u);
  double operator()(std::int64_t i, std::int64_t j) const;

 private:
  std::vector<double> lambda_, u_, w_;  // w = diag(lambda) u
  double s_ = 0;                        // u^T w
};

/// ||A v - theta v||_2 from A's entries, with plain loops: v of length n.
template <class Entry>
double serial_residual(const Entry& a, const double* v, double theta, int n) {
  double r2 = 0;
  for (int i = 0; i < n; ++i) {
    double av = 0;
    for (int t = 0; t < n; ++t) av += a(i, t) * v[t];
    r2 += (av - theta * v[i]) * (av - theta * v[i]);
  }
  return std::sqrt(r2);
}

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

/// min over orthogonal Q of ||A Q - B||_F / ||B||_F for n x k row-major A, B:
/// Q = M (M^T M)^(-1/2) with M = A^T B (the polar factor).
double procrustes_residual(const std::vector<double>& a, const std::vector<double>& b, int n,
                           int k);
/// The n x k row-major y with each column's mean subtracted.
std::vector<double> centered_columns(std::vector<double> y, int n, int k);

}  // namespace kembed::test
