#include "kembed/graph/kd_tree.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kembed/graph/pair_distance.hpp"

namespace kembed::graph {

namespace {

// A cell is skipped only when its box distance, shrunk by this factor, still
// exceeds the K-th distance. The box distance is computed by the same
// expression as pair_distance with the point's coordinate replaced by the
// box's nearer face, and rounding is monotone, so it never exceeds the
// distance computed for a point inside; the factor covers any difference in
// rounding the compiler might introduce (contractions), which is below
// d * eps relatively. Skipping needs strictly greater: a point at the same
// distance with a lower index would still enter the list.
constexpr double kShrink = 1 - 1e-12;

}  // namespace

bool KdTree::supports(kernel::Metric metric) {
  return metric == kernel::Metric::euclidean || metric == kernel::Metric::sqeuclidean ||
         metric == kernel::Metric::manhattan;
}

KdTree::KdTree(std::vector<double> points, int d, kernel::Metric metric)
    : d_(d), metric_(metric) {
  const std::int64_t n = static_cast<std::int64_t>(points.size()) / d;
  index_.resize(static_cast<std::size_t>(n));
  std::iota(index_.begin(), index_.end(), std::int64_t{0});
  nodes_.reserve(static_cast<std::size_t>(2 * (n / (kLeafSize / 2) + 1)));
  nodes_.push_back({0, n, -1});
  boxes_.resize(std::size_t(2) * d);
  build(0, points);
  // The points in tree order, so that a leaf's points are contiguous.
  points_.resize(points.size());
  for (std::int64_t p = 0; p < n; ++p)
    std::copy_n(&points[std::size_t(index_[p]) * d], d, &points_[std::size_t(p) * d]);
}

// Fills the box of node `id` (holding tree positions [begin, end)) and splits it.
void KdTree::build(std::int64_t id, const std::vector<double>& source) {
  const std::int64_t begin = nodes_[id].begin, end = nodes_[id].end;
  const int d = d_;
  {
    double* lo = &boxes_[std::size_t(id) * 2 * d];
    double* hi = lo + d;
    for (int t = 0; t < d; ++t) lo[t] = INFINITY, hi[t] = -INFINITY;
    for (std::int64_t p = begin; p < end; ++p) {
      const double* x = &source[std::size_t(index_[p]) * d];
      for (int t = 0; t < d; ++t) lo[t] = std::min(lo[t], x[t]), hi[t] = std::max(hi[t], x[t]);
    }
  }
  if (end - begin <= kLeafSize) return;
  int dim = 0;
  double widest = -1;
  for (int t = 0; t < d; ++t) {
    const double w = boxes_[std::size_t(id) * 2 * d + d + t] - boxes_[std::size_t(id) * 2 * d + t];
    if (w > widest) widest = w, dim = t;
  }
  if (!(widest > 0)) return;  // all points equal: one leaf, however many
  const std::int64_t mid = begin + (end - begin) / 2;
  std::nth_element(index_.begin() + begin, index_.begin() + mid, index_.begin() + end,
                   [&](std::int64_t a, std::int64_t b) {
                     const double xa = source[std::size_t(a) * d + dim];
                     const double xb = source[std::size_t(b) * d + dim];
                     return xa < xb || (xa == xb && a < b);
                   });
  const std::int64_t left = static_cast<std::int64_t>(nodes_.size());
  nodes_[id].left = left;
  nodes_.push_back({begin, mid, -1});
  nodes_.push_back({mid, end, -1});
  boxes_.resize(nodes_.size() * 2 * d);
  build(left, source);
  build(left + 1, source);
}

double KdTree::box_distance(std::int64_t node, const double* x) const {
  const int d = d_;
  const double* lo = &boxes_[std::size_t(node) * 2 * d];
  const double* hi = lo + d;
  double s = 0;
  if (metric_ == kernel::Metric::manhattan) {
    for (int t = 0; t < d; ++t) {
      const double y = x[t] < lo[t] ? lo[t] : (x[t] > hi[t] ? hi[t] : x[t]);
      s += std::abs(x[t] - y);
    }
    return s;
  }
  for (int t = 0; t < d; ++t) {
    const double y = x[t] < lo[t] ? lo[t] : (x[t] > hi[t] ? hi[t] : x[t]);
    s += (x[t] - y) * (x[t] - y);
  }
  return metric_ == kernel::Metric::euclidean ? std::sqrt(s) : s;
}

void KdTree::search_nearest(std::int64_t node, const double* x, std::size_t k, std::int64_t skip,
                            std::vector<Neighbor>& heap) const {
  const Node& nd = nodes_[node];
  if (nd.left < 0) {
    for (std::int64_t p = nd.begin; p < nd.end; ++p) {
      const std::int64_t j = index_[p];
      if (j == skip) continue;
      const Neighbor cand{j, pair_distance(metric_, x, &points_[std::size_t(p) * d_], d_, 1, 1)};
      if (heap.size() < k) {
        heap.push_back(cand);
        std::push_heap(heap.begin(), heap.end(), nearer);
      } else if (nearer(cand, heap.front())) {
        std::pop_heap(heap.begin(), heap.end(), nearer);
        heap.back() = cand;
        std::push_heap(heap.begin(), heap.end(), nearer);
      }
    }
    return;
  }
  const double bl = box_distance(nd.left, x), br = box_distance(nd.left + 1, x);
  const std::int64_t first = bl <= br ? nd.left : nd.left + 1;
  const double bounds[2] = {std::min(bl, br), std::max(bl, br)};
  const std::int64_t children[2] = {first, first == nd.left ? nd.left + 1 : nd.left};
  for (int c = 0; c < 2; ++c) {
    if (heap.size() == k && bounds[c] * kShrink > heap.front().distance) continue;
    search_nearest(children[c], x, k, skip, heap);
  }
}

void KdTree::nearest(const double* x, std::size_t k, std::int64_t skip,
                     std::vector<Neighbor>& out) const {
  out.clear();
  if (k == 0) return;
  search_nearest(0, x, k, skip, out);
  std::sort_heap(out.begin(), out.end(), nearer);
}

void KdTree::search_within(std::int64_t node, const double* x, double radius, std::int64_t skip,
                           std::vector<Neighbor>& out) const {
  if (box_distance(node, x) * kShrink > radius) return;
  const Node& nd = nodes_[node];
  if (nd.left >= 0) {
    search_within(nd.left, x, radius, skip, out);
    search_within(nd.left + 1, x, radius, skip, out);
    return;
  }
  for (std::int64_t p = nd.begin; p < nd.end; ++p) {
    const std::int64_t j = index_[p];
    if (j == skip) continue;
    const double dist = pair_distance(metric_, x, &points_[std::size_t(p) * d_], d_, 1, 1);
    if (dist <= radius) out.push_back({j, dist});
  }
}

void KdTree::within(const double* x, double radius, std::int64_t skip,
                    std::vector<Neighbor>& out) const {
  out.clear();
  search_within(0, x, radius, skip, out);
  std::sort(out.begin(), out.end(), nearer);
}

}  // namespace kembed::graph
