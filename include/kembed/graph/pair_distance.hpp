#pragma once
/// @file The distance of two points computed pair by pair from the
/// definition, shared by the neighbour selection and the joining of
/// components: exact ties stay ties (the Gram-matrix shortcut of the dense
/// assembly would not) and d(x, y) = d(y, x) bitwise.
#include <algorithm>
#include <cmath>

#include "kembed/kernel/distances.hpp"

namespace kembed::graph {

/// Euclidean norm of x (d entries).
inline double norm2(const double* x, int d) {
  double s = 0;
  for (int t = 0; t < d; ++t) s += x[t] * x[t];
  return std::sqrt(s);
}

/// d(x, y) under `metric`; nx, ny are the norms of x and y (used by cosine only).
inline double pair_distance(kernel::Metric metric, const double* x, const double* y, int d,
                            double nx, double ny) {
  double s = 0;
  switch (metric) {
    case kernel::Metric::euclidean:
    case kernel::Metric::sqeuclidean:
      for (int t = 0; t < d; ++t) s += (x[t] - y[t]) * (x[t] - y[t]);
      return metric == kernel::Metric::euclidean ? std::sqrt(s) : s;
    case kernel::Metric::manhattan:
      for (int t = 0; t < d; ++t) s += std::abs(x[t] - y[t]);
      return s;
    case kernel::Metric::cosine:
      for (int t = 0; t < d; ++t) s += x[t] * y[t];
      return std::max(0.0, 1 - s / (nx * ny));
  }
  return s;
}

}  // namespace kembed::graph
