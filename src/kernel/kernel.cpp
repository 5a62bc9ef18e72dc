#include "kembed/kernel/kernel.hpp"

#include "kembed/core/error.hpp"

namespace kembed {

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

Kernel Kernel::with_default_gamma(long long d) const {
  Kernel k = *this;
  if (k.gamma == 0 && d > 0) k.gamma = 1.0 / static_cast<double>(d);
  return k;
}

}  // namespace kembed
