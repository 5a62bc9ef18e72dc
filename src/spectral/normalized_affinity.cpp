#include "kembed/spectral/normalized_affinity.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>
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

namespace {

// y's columns [c0, c0 + W) of the rows: each row's sums kept in a local
// array (registers) rather than in memory that might alias the inputs, and
// added in the order of the row's entries (the same bits for any W).
template <int W>
void multiply_rows(int rows, const std::int64_t* offsets, const int* index, const double* values,
                   const double* g, std::size_t w, int c0, double* y, std::size_t ldy) {
  for (int li = 0; li < rows; ++li) {
    double s[W] = {};
    for (std::int64_t t = offsets[li]; t < offsets[li + 1]; ++t) {
      const double a = values[t];
      const double* row = g + std::size_t(index[t]) * w + c0;
      for (int c = 0; c < W; ++c) s[c] += a * row[c];
    }
    for (int c = 0; c < W; ++c) y[li + (c0 + c) * ldy] = s[c];
  }
}

}  // namespace

void NormalizedAffinity::apply(const double* x, int ldx, int width, double* y, int ldy) {
  exchange_.gather(x, ldx, width, gathered_);
  const std::size_t w = static_cast<std::size_t>(width);
  const int rows = rows_.local_size();
  const double* g = gathered_.data();
  // The whole width at once up to 16 columns (one pass over the entries and
  // the gathered rows), else groups of 16 and the rest.
  int c0 = 0;
  const auto columns = [&](auto width_constant) {
    multiply_rows<decltype(width_constant)::value>(rows, offsets_.data(), index_.data(),
                                                   values_.data(), g, w, c0, y, ldy);
  };
  for (; width - c0 > 16; c0 += 16) columns(std::integral_constant<int, 16>{});
  switch (width - c0) {
#define KEMBED_WIDTH(W) \
  case W: columns(std::integral_constant<int, W>{}); break;
    KEMBED_WIDTH(1) KEMBED_WIDTH(2) KEMBED_WIDTH(3) KEMBED_WIDTH(4) KEMBED_WIDTH(5)
    KEMBED_WIDTH(6) KEMBED_WIDTH(7) KEMBED_WIDTH(8) KEMBED_WIDTH(9) KEMBED_WIDTH(10)
    KEMBED_WIDTH(11) KEMBED_WIDTH(12) KEMBED_WIDTH(13) KEMBED_WIDTH(14) KEMBED_WIDTH(15)
    KEMBED_WIDTH(16)
#undef KEMBED_WIDTH
    default: break;
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
