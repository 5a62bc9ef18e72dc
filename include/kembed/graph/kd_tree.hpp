#pragma once
/// @file An exact k-d tree over points held whole on one rank, for the
/// neighbour search in low dimensions: it returns exactly the lists the
/// brute-force scan selects (the same distances, bit for bit, the same ties
/// broken by the lower index), visiting only the cells whose bounding box
/// can hold a point at most as far as the current K-th neighbour.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kembed/graph/graph.hpp"
#include "kembed/kernel/distances.hpp"

namespace kembed::graph {

/// (distance, index) in lexicographic order: ties go to the lower index, the
/// selection rule of every neighbour search.
inline bool nearer(const Neighbor& a, const Neighbor& b) {
  return a.distance < b.distance || (a.distance == b.distance && a.index < b.index);
}

class KdTree {
 public:
  /// Whether the tree can prune under `metric`: a box's distance must bound
  /// every contained point's distance from below (euclidean, sqeuclidean,
  /// manhattan; not cosine, whose distance is not monotone in coordinates).
  static bool supports(kernel::Metric metric);

  /// Builds the tree over the n = points.size() / d points (row-major, taken
  /// over and stored in tree order): each node split at the median of the
  /// widest side of its points' bounding box, leaves of at most kLeafSize
  /// points. O(n log n); memory n d + n doubles and indices plus 2 d doubles
  /// per node (about n / 4 nodes). @pre supports(metric), d >= 1, every
  /// distance between the points finite (the caller checks: the tree does
  /// not compute them all)
  KdTree(std::vector<double> points, int d, kernel::Metric metric);

  std::int64_t size() const { return static_cast<std::int64_t>(index_.size()); }
  /// The points' indices in tree order (neighbours in space are near in it):
  /// queries asked in this order find the same cells in cache.
  const std::vector<std::int64_t>& tree_order() const { return index_; }

  /// The k nearest points to x (d entries) other than the point numbered
  /// `skip` (-1: none), nearest first, equal distances ordered by index:
  /// out is replaced. @pre 1 <= k <= size() (minus one if skip is a point)
  void nearest(const double* x, std::size_t k, std::int64_t skip, std::vector<Neighbor>& out) const;

  /// Every point other than `skip` at distance <= radius from x, ascending by
  /// (distance, index): out is replaced.
  void within(const double* x, double radius, std::int64_t skip, std::vector<Neighbor>& out) const;

  /// Points per leaf at most.
  static constexpr int kLeafSize = 16;

 private:
  struct Node {
    std::int64_t begin, end;  // points [begin, end) in tree order
    std::int64_t left = -1;   // children (left + 1 is the right one); -1: leaf
  };
  void build(std::int64_t node, const std::vector<double>& source);
  double box_distance(std::int64_t node, const double* x) const;
  void search_nearest(std::int64_t node, const double* x, std::size_t k, std::int64_t skip,
                      std::vector<Neighbor>& heap) const;
  void search_within(std::int64_t node, const double* x, double radius, std::int64_t skip,
                     std::vector<Neighbor>& out) const;

  int d_;
  kernel::Metric metric_;
  std::vector<double> points_;       // tree order, row-major
  std::vector<std::int64_t> index_;  // original index of each point in tree order
  std::vector<Node> nodes_;
  std::vector<double> boxes_;  // per node: d lower then d upper coordinates
};

}  // namespace kembed::graph
