#include "kembed/spectral/normalized_affinity.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace kembed::spectral {

OperatorCost normalized_affinity_cost(double local_rows, double nonzeros, double fetched,
                                      double sent, double width) {
  OperatorCost c;
  c.held_bytes = static_cast<std::size_t>(nonzeros * (4 + 8) + (local_rows + 1) * 8 +
                                          local_rows * 8 + nonzeros * 4 + sent * 4);
  c.work_bytes = static_cast<std::size_t>((local_rows + fetched + sent) * width * 8 + width * 8);
  c.flops = 2 * nonzeros * width;
  return c;
}

NormalizedAffinity::NormalizedAffinity(graph::SparseRows w, const BlacsGrid& grid)
    : grid_(grid),
      rows_(w.rows),
      offsets_(std::move(w.offsets)),
      values_(std::move(w.values)),
      exchange_(w.rows, w.columns, grid.comm()) {
  index_ = exchange_.take_buffer_index();
  std::vector<std::int64_t>().swap(w.columns);
  const int local = rows_.local_size();
  degree_.assign(static_cast<std::size_t>(local), 0.0);
  std::vector<double> inv_sqrt(static_cast<std::size_t>(local));
  for (int li = 0; li < local; ++li) {
    for (std::int64_t t = offsets_[li]; t < offsets_[li + 1]; ++t) degree_[li] += values_[t];
    inv_sqrt[li] = 1 / std::sqrt(degree_[li]);
  }
  // 1/sqrt(d) of the fetched rows too, through the product's own exchange.
  std::vector<double> all;
  exchange_.gather(inv_sqrt.data(), std::max(1, local), 1, all);
  for (int li = 0; li < local; ++li)
    for (std::int64_t t = offsets_[li]; t < offsets_[li + 1]; ++t)
      values_[t] *= inv_sqrt[li] * all[index_[t]];
}

void NormalizedAffinity::apply(const double* x, int ldx, int width, double* y, int ldy) {
  exchange_.gather(x, ldx, width, gathered_);
  const std::size_t w = static_cast<std::size_t>(width);
  sum_.resize(w);
  double* s = sum_.data();
  const double* g = gathered_.data();
  for (int li = 0; li < rows_.local_size(); ++li) {
    for (std::size_t c = 0; c < w; ++c) s[c] = 0;
    for (std::int64_t t = offsets_[li]; t < offsets_[li + 1]; ++t) {
      const double a = values_[t];
      const double* row = g + std::size_t(index_[t]) * w;
      for (std::size_t c = 0; c < w; ++c) s[c] += a * row[c];
    }
    for (std::size_t c = 0; c < w; ++c) y[li + c * std::size_t(ldy)] = s[c];
  }
  ++products_;
  columns_ += width;
}

OperatorCost NormalizedAffinity::cost(int width) const {
  return normalized_affinity_cost(rows_.local_size(), static_cast<double>(values_.size()),
                                  exchange_.fetched_rows(),
                                  static_cast<double>(exchange_.sent_rows()), width);
}

double NormalizedAffinity::frobenius_norm() const {
  double s = 0;
  for (double v : values_) s += v * v;
  return std::sqrt(grid_.comm().sum(s));
}

double NormalizedAffinity::min_degree() const {
  double m = INFINITY;
  for (double d : degree_) m = std::min(m, d);
  return grid_.comm().min(m);
}

double NormalizedAffinity::max_degree() const {
  double m = 0;
  for (double d : degree_) m = std::max(m, d);
  return grid_.comm().max(m);
}

}  // namespace kembed::spectral
