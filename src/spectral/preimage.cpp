#include "kembed/spectral/preimage.hpp"

#include <algorithm>
#include <cmath>

#include "kembed/core/error.hpp"

namespace kembed::spectral {

namespace {

constexpr struct {
  PreimageMethod method;
  const char* name;
} kMethods[] = {{PreimageMethod::nearest, "nearest"},
                {PreimageMethod::fixed_point, "fixed-point"},
                {PreimageMethod::ridge, "ridge"}};

// Relative size of the fixed-point denominator below which a start is unstable.
constexpr double kUnstableWeight = 1e-10;

double norm(const double* x, int d) {
  double s = 0;
  for (int t = 0; t < d; ++t) s += x[t] * x[t];
  return std::sqrt(s);
}

Preimages start(FeatureReconstruction& r) {
  const std::int64_t m = r.points();
  Preimages p;
  p.nearest = r.nearest_training(std::vector<std::vector<std::int64_t>>(m));
  p.iterations.assign(m, 0);
  p.restarts.assign(m, 0);
  p.converged.assign(m, 1);
  return p;
}

}  // namespace

PreimageMethod parse_preimage_method(const std::string& name) {
  for (const auto& entry : kMethods)
    if (name == entry.name) return entry.method;
  throw Error("unknown pre-image method '" + name + "' (expected nearest, fixed-point or ridge)");
}

std::string preimage_method_name(PreimageMethod method) {
  for (const auto& entry : kMethods)
    if (method == entry.method) return entry.name;
  return "?";
}

Preimages nearest_preimages(FeatureReconstruction& r) {
  Preimages p = start(r);
  p.points = r.training_rows(p.nearest);
  p.distance = r.weighted_sums(p.points).distance;
  return p;
}

Preimages given_preimages(FeatureReconstruction& r, std::vector<double> points) {
  Preimages p = start(r);
  p.points = std::move(points);
  p.distance = r.weighted_sums(p.points).distance;
  return p;
}

Preimages fixed_point_preimages(FeatureReconstruction& r, const FixedPointSettings& s) {
  const kernel::KernelType type = r.model().kernel.type;
  if (type == kernel::KernelType::linear) {
    // phi is the identity: sum_i gamma_i x_i is phi_hat itself.
    Preimages p = start(r);
    p.points = r.weighted_sums({}, false).numerator;
    p.distance = r.weighted_sums(p.points).distance;
    p.start_distance = p.distance;
    return p;
  }
  if (type != kernel::KernelType::rbf)
    throw Error("--method fixed-point needs the rbf (Gaussian) kernel or the linear one; the "
                "model's kernel is " + kernel::Kernel::name(type) + ": use --method nearest or ridge");

  const std::int64_t m = r.points();
  const int d = static_cast<int>(r.model().d);
  Preimages p = start(r);
  const std::vector<double> nearest_rows = r.training_rows(p.nearest);
  std::vector<double> y = s.init.empty() ? nearest_rows : s.init;
  std::vector<std::vector<std::int64_t>> tried(m);
  // The training sample each start came from (none for --init input).
  std::vector<std::int64_t> current =
      s.init.empty() ? p.nearest : std::vector<std::int64_t>(m, -1);
  std::vector<char> active(m, 1);
  p.converged.assign(m, 0);
  bool first = true;
  // Every rank sees the same sums, so every rank takes the same branches.
  for (;;) {
    const WeightedSums w = r.weighted_sums(y);
    if (first) p.start_distance = w.distance;
    first = false;
    std::vector<std::int64_t> restart;
    for (std::int64_t q = 0; q < m; ++q) {
      if (!active[q]) continue;
      const double den = w.weight[q];
      if (!(std::abs(den) > kUnstableWeight * w.abs_weight[q]) || w.abs_weight[q] == 0) {
        restart.push_back(q);
        continue;
      }
      double* yq = &y[std::size_t(q) * d];
      double change = 0;
      for (int t = 0; t < d; ++t) {
        const double next = w.numerator[std::size_t(q) * d + t] / den;
        change += (next - yq[t]) * (next - yq[t]);
        yq[t] = next;
      }
      ++p.iterations[q];
      if (std::sqrt(change) <= s.tol * std::max(1.0, norm(yq, d))) {
        active[q] = 0;
        p.converged[q] = 1;
      } else if (p.iterations[q] >= s.max_iter) {
        active[q] = 0;
      }
    }
    if (!restart.empty()) {
      // Abandon these starts for the nearest sample not tried yet.
      for (std::int64_t q : restart) {
        if (current[q] >= 0) tried[q].push_back(current[q]);
        ++p.restarts[q];
      }
      const auto next = r.nearest_training(tried);
      const auto rows = r.training_rows(next);
      for (std::int64_t q : restart) {
        p.iterations[q] = 0;
        current[q] = next[q];
        // Out of starts: give up and report the nearest sample, not converged.
        const bool give_up = p.restarts[q] > s.max_restarts || next[q] < 0;
        if (give_up) active[q] = 0;
        const auto& from = give_up ? nearest_rows : rows;
        std::copy(&from[std::size_t(q) * d], &from[std::size_t(q) * d] + d,
                  &y[std::size_t(q) * d]);
      }
    }
    if (std::none_of(active.begin(), active.end(), [](char a) { return a != 0; })) break;
  }
  p.points = std::move(y);
  p.distance = r.weighted_sums(p.points).distance;
  return p;
}

}  // namespace kembed::spectral
