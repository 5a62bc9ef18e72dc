#pragma once
/// @file Kernel functions k(x, y) and their parameters.
#include <string>

namespace kembed::kernel {

enum class KernelType { linear, poly, rbf, laplacian, sigmoid, cosine, precomputed };

/// A kernel with its parameters, as scikit-learn defines them:
///   linear     x.y
///   poly       (gamma x.y + coef0)^degree
///   rbf        exp(-gamma ||x - y||^2)
///   laplacian  exp(-gamma ||x - y||_1)
///   sigmoid    tanh(gamma x.y + coef0)
///   cosine     x.y / (||x|| ||y||)   (0 when either norm is 0)
///   precomputed: the input is the kernel matrix itself.
struct Kernel {
  KernelType type = KernelType::rbf;
  double gamma = 0;  ///< 0 means "not given": resolved to 1/d by with_default_gamma.
  int degree = 3;
  double coef0 = 1;

  /// Parses a kernel name; throws Error naming the valid ones.
  static KernelType parse(const std::string& name);
  static std::string name(KernelType type);
  std::string name() const { return name(type); }
  /// True if gamma is a parameter of this kernel.
  bool uses_gamma() const;
  /// True if k(x, y) is a function of the dot product x.y alone (plus norms),
  /// so a block of K is one dgemm followed by an elementwise map.
  bool is_dot_product_based() const;
  /// k(x, y) of two d-vectors, evaluated directly from the definition.
  /// @pre type != precomputed, gamma resolved
  double operator()(const double* x, const double* y, int d) const;
  /// This kernel with gamma = 1/d where gamma was not given (scikit-learn's default).
  Kernel with_default_gamma(long long d) const;
};

}  // namespace kembed::kernel
