#pragma once
/// @file Approximate pre-images: points x in input space whose phi(x) is
/// closest to a feature-space reconstruction phi_hat (FeatureReconstruction).
#include <cstdint>
#include <string>
#include <vector>

#include "kembed/spectral/feature_reconstruction.hpp"

namespace kembed::spectral {

enum class PreimageMethod { nearest, fixed_point, ridge };

/// Parses "nearest", "fixed-point" or "ridge"; throws Error naming them.
PreimageMethod parse_preimage_method(const std::string& name);
std::string preimage_method_name(PreimageMethod method);

struct FixedPointSettings {
  double tol = 1e-8;     ///< stop when ||x_new - x|| <= tol * max(1, ||x_new||)
  int max_iter = 500;    ///< per start
  int max_restarts = 5;  ///< unstable starts replaced by the next-nearest sample
  /// Starting points (m x d row-major, every rank); empty: the nearest
  /// training sample of each reconstruction.
  std::vector<double> init;
};

/// Pre-images of m points and how they were found (identical on every rank).
struct Preimages {
  std::vector<double> points;            ///< m x d row-major
  std::vector<double> distance;          ///< ||phi(x*) - phi_hat||^2
  std::vector<double> start_distance;    ///< the same at the first start (fixed-point)
  std::vector<std::int64_t> nearest;     ///< nearest training sample (0-based)
  std::vector<int> iterations;           ///< fixed-point steps from the last start
  std::vector<int> restarts;             ///< unstable starts abandoned
  std::vector<char> converged;           ///< 1: converged (nearest, ridge: always 1)
};

/// Collective: the nearest training sample of each reconstruction.
Preimages nearest_preimages(FeatureReconstruction& r);

/// Collective: the fixed-point iteration of the Gaussian (rbf) kernel,
///   x <- sum_i gamma_i k(x_i, x) x_i / sum_i gamma_i k(x_i, x),
/// a stationary point of ||phi(x) - phi_hat||^2. A start whose denominator
/// vanishes (|sum w_i| <= 1e-10 sum |w_i|, or underflow to 0) is abandoned
/// for the next-nearest training sample. For the linear kernel the exact
/// pre-image sum_i gamma_i x_i is returned (0 iterations). Other kernels:
/// throws Error naming the methods that apply.
Preimages fixed_point_preimages(FeatureReconstruction& r, const FixedPointSettings& s);

/// Collective: wraps pre-images computed elsewhere (the ridge map) with
/// their feature-space distances and nearest training samples.
Preimages given_preimages(FeatureReconstruction& r, std::vector<double> points);

}  // namespace kembed::spectral
