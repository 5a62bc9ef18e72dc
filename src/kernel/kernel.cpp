#include "kembed/kernel/kernel.hpp"

#include <cmath>

#include "kembed/core/error.hpp"

namespace kembed::kernel {

namespace {
constexpr struct {
  KernelType type;
  const char* name;
} kNames[] = {{KernelType::linear, "linear"},   {KernelType::poly, "poly"},
              {KernelType::rbf, "rbf"},         {KernelType::laplacian, "laplacian"},
              {KernelType::sigmoid, "sigmoid"}, {KernelType::cosine, "cosine"},
              {KernelType::precomputed, "precomputed"}};
}  // namespace

KernelType Kernel::parse(const std::string& name) {
  for (const auto& entry : kNames)
    if (name == entry.name) return entry.type;
  throw Error("unknown kernel '" + name +
              "' (expected linear, poly, rbf, laplacian, sigmoid, cosine or precomputed)");
}

std::string Kernel::name(KernelType type) {
  for (const auto& entry : kNames)
    if (type == entry.type) return entry.name;
  return "?";
}

bool Kernel::uses_gamma() const {
  return type == KernelType::poly || type == KernelType::rbf || type == KernelType::laplacian ||
         type == KernelType::sigmoid;
}

bool Kernel::is_dot_product_based() const {
  return type != KernelType::laplacian && type != KernelType::precomputed;
}

double Kernel::operator()(const double* x, const double* y, int d) const {
  double dot = 0, xx = 0, yy = 0, l1 = 0, l2 = 0;
  for (int t = 0; t < d; ++t) {
    dot += x[t] * y[t];
    xx += x[t] * x[t];
    yy += y[t] * y[t];
    l1 += std::abs(x[t] - y[t]);
    l2 += (x[t] - y[t]) * (x[t] - y[t]);
  }
  switch (type) {
    case KernelType::linear: return dot;
    case KernelType::poly: return std::pow(gamma * dot + coef0, degree);
    case KernelType::rbf: return std::exp(-gamma * l2);
    case KernelType::laplacian: return std::exp(-gamma * l1);
    case KernelType::sigmoid: return std::tanh(gamma * dot + coef0);
    case KernelType::cosine: return xx > 0 && yy > 0 ? dot / std::sqrt(xx * yy) : 0;
    case KernelType::precomputed: break;
  }
  throw Error("a precomputed kernel cannot be evaluated on points");
}

Kernel Kernel::with_default_gamma(long long d) const {
  Kernel k = *this;
  if (k.gamma == 0 && d > 0) k.gamma = 1.0 / static_cast<double>(d);
  return k;
}

}  // namespace kembed::kernel
