#include "serial_reference.hpp"

#include <cmath>
#include <fstream>
#include <random>
#include <stdexcept>
#include <utility>

#include "linalg/fortran.hpp"

namespace kembed::test {

using kernel::KernelType;

std::vector<double> random_data(int n, int d, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal;
  std::vector<double> x(std::size_t(n) * d);
  for (double& v : x) v = normal(gen);
  return x;
}

std::string write_bin(const Comm& comm, const std::string& dir, const std::string& name,
                      const std::vector<double>& data) {
  const std::string path = dir + "/" + name;
  if (comm.is_root()) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data.data()),
              static_cast<std::streamsize>(data.size() * sizeof(double)));
  }
  comm.barrier();
  return path;
}

Dense serial_kernel(const kernel::Kernel& kernel, const std::vector<double>& x, int n, int d) {
  Dense k{n, std::vector<double>(std::size_t(n) * n)};
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double* a = &x[std::size_t(i) * d];
      const double* b = &x[std::size_t(j) * d];
      double dot = 0, sq = 0, l1 = 0, na = 0, nb = 0;
      for (int t = 0; t < d; ++t) {
        dot += a[t] * b[t];
        sq += (a[t] - b[t]) * (a[t] - b[t]);
        l1 += std::abs(a[t] - b[t]);
        na += a[t] * a[t];
        nb += b[t] * b[t];
      }
      double v = 0;
      switch (kernel.type) {
        case KernelType::linear: v = dot; break;
        case KernelType::poly: v = std::pow(kernel.gamma * dot + kernel.coef0, kernel.degree); break;
        case KernelType::rbf: v = std::exp(-kernel.gamma * sq); break;
        case KernelType::laplacian: v = std::exp(-kernel.gamma * l1); break;
        case KernelType::sigmoid: v = std::tanh(kernel.gamma * dot + kernel.coef0); break;
        case KernelType::cosine: v = (na > 0 && nb > 0) ? dot / std::sqrt(na * nb) : 0; break;
        case KernelType::precomputed: break;
      }
      k(i, j) = v;
    }
  return k;
}

Dense serial_center(const Dense& k) {
  const int n = k.n;
  Dense j{n, std::vector<double>(std::size_t(n) * n)};
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) j(r, c) = (r == c ? 1.0 : 0.0) - 1.0 / n;
  auto product = [n](const Dense& a, const Dense& b) {
    Dense c{n, std::vector<double>(std::size_t(n) * n, 0.0)};
    for (int col = 0; col < n; ++col)
      for (int t = 0; t < n; ++t)
        for (int row = 0; row < n; ++row) c(row, col) += a(row, t) * b(t, col);
    return c;
  };
  return product(product(j, k), j);
}

ReflectedSpectrum::ReflectedSpectrum(std::vector<double> lambda, std::vector<double> u)
    : lambda_(std::move(lambda)), u_(std::move(u)), w_(u_.size()) {
  double uu = 0;
  for (double x : u_) uu += x * x;
  for (std::size_t i = 0; i < u_.size(); ++i) {
    u_[i] /= std::sqrt(uu);
    w_[i] = lambda_[i] * u_[i];
    s_ += u_[i] * w_[i];
  }
}

double ReflectedSpectrum::operator()(std::int64_t i, std::int64_t j) const {
  return (i == j ? lambda_[i] : 0.0) - 2 * u_[i] * w_[j] - 2 * w_[i] * u_[j] +
         4 * s_ * u_[i] * u_[j];
}

std::vector<std::pair<double, double>> serial_eigenvalues_general(const Dense& a) {
  Dense h = a;
  int n = a.n, one = 1, info = 0, lwork = -1;
  std::vector<double> wr(n), wi(n);
  double q = 0, unused = 0;
  dgeev_("N", "N", &n, h.a.data(), &n, wr.data(), wi.data(), &unused, &one, &unused, &one, &q,
         &lwork, &info, 1, 1);
  lwork = int(q) + 1;
  std::vector<double> work(lwork);
  dgeev_("N", "N", &n, h.a.data(), &n, wr.data(), wi.data(), &unused, &one, &unused, &one,
         work.data(), &lwork, &info, 1, 1);
  if (info != 0) throw std::runtime_error("dgeev failed with INFO = " + std::to_string(info));
  std::vector<std::pair<double, double>> w(n);
  for (int i = 0; i < n; ++i) w[i] = {wr[i], wi[i]};
  return w;
}

std::vector<double> serial_eigh(const Dense& a, Dense& vectors) {
  vectors = a;
  int n = a.n, info = 0, lwork = -1, liwork = -1, iq = 0;
  double q = 0;
  std::vector<double> w(n);
  dsyevd_("V", "L", &n, vectors.a.data(), &n, w.data(), &q, &lwork, &iq, &liwork, &info, 1, 1);
  lwork = int(q) + 1;
  liwork = iq + 1;
  std::vector<double> work(lwork);
  std::vector<int> iwork(liwork);
  dsyevd_("V", "L", &n, vectors.a.data(), &n, w.data(), work.data(), &lwork, iwork.data(),
          &liwork, &info, 1, 1);
  return w;
}

void serial_fix_signs(std::vector<double>& v, int n, int k) {
  for (int j = 0; j < k; ++j) {
    double* col = &v[std::size_t(j) * n];
    double largest = 0;
    for (int i = 0; i < n; ++i) largest = std::max(largest, std::abs(col[i]));
    int first = 0;
    while (std::abs(col[first]) < largest * (1 - 1e-8)) ++first;
    if (col[first] < 0)
      for (int i = 0; i < n; ++i) col[i] = -col[i];
  }
}

SerialKpca serial_kpca(const Dense& kernel, int k) {
  const int n = kernel.n;
  Dense vectors;
  const Dense centered = serial_center(kernel);
  const auto w = serial_eigh(centered, vectors);
  std::vector<double> v(std::size_t(n) * k);
  SerialKpca ref;
  for (int i = 0; i < n; ++i) ref.trace += centered(i, i);
  for (int j = 0; j < k; ++j) {
    ref.values.push_back(w[n - 1 - j]);
    for (int i = 0; i < n; ++i) v[std::size_t(j) * n + i] = vectors(i, n - 1 - j);
  }
  serial_fix_signs(v, n, k);
  ref.embedding.resize(std::size_t(n) * k);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < k; ++j)
      ref.embedding[std::size_t(i) * k + j] = v[std::size_t(j) * n + i] * std::sqrt(ref.values[j]);
  return ref;
}

double procrustes_residual(const std::vector<double>& a, const std::vector<double>& b, int n, int k) {
  test::Dense m{k, std::vector<double>(std::size_t(k) * k, 0.0)};
  for (int i = 0; i < n; ++i)
    for (int s = 0; s < k; ++s)
      for (int t = 0; t < k; ++t) m(s, t) += a[std::size_t(i) * k + s] * b[std::size_t(i) * k + t];
  test::Dense mtm{k, std::vector<double>(std::size_t(k) * k, 0.0)};
  for (int s = 0; s < k; ++s)
    for (int t = 0; t < k; ++t)
      for (int r = 0; r < k; ++r) mtm(s, t) += m(r, s) * m(r, t);
  test::Dense v;
  const auto w = test::serial_eigh(mtm, v);
  test::Dense inv_sqrt{k, std::vector<double>(std::size_t(k) * k, 0.0)};
  for (int s = 0; s < k; ++s)
    for (int t = 0; t < k; ++t)
      for (int r = 0; r < k; ++r) inv_sqrt(s, t) += v(s, r) * v(t, r) / std::sqrt(w[r]);
  test::Dense q{k, std::vector<double>(std::size_t(k) * k, 0.0)};
  for (int s = 0; s < k; ++s)
    for (int t = 0; t < k; ++t)
      for (int r = 0; r < k; ++r) q(s, t) += m(s, r) * inv_sqrt(r, t);
  double err = 0, norm = 0;
  for (int i = 0; i < n; ++i)
    for (int t = 0; t < k; ++t) {
      double y = 0;
      for (int r = 0; r < k; ++r) y += a[std::size_t(i) * k + r] * q(r, t);
      err += (y - b[std::size_t(i) * k + t]) * (y - b[std::size_t(i) * k + t]);
      norm += b[std::size_t(i) * k + t] * b[std::size_t(i) * k + t];
    }
  return std::sqrt(err / norm);
}


std::vector<double> centered_columns(std::vector<double> y, int n, int k) {
  for (int t = 0; t < k; ++t) {
    double mean = 0;
    for (int i = 0; i < n; ++i) mean += y[std::size_t(i) * k + t] / n;
    for (int i = 0; i < n; ++i) y[std::size_t(i) * k + t] -= mean;
  }
  return y;
}

}  // namespace kembed::test
