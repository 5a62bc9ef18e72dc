// The k-d tree search against the scan it replaces, exactly: the same
// neighbours in the same order with the same distance bits, on points with
// duplicates and many equal distances (a small integer lattice), for every
// metric the tree prunes, K lists and radius lists, queries from the points
// themselves and from another file, at every rank count; and the serial
// KdTree against a sort of all distances.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "kembed/graph/kd_tree.hpp"
#include "kembed/graph/neighbors.hpp"
#include "kembed/graph/pair_distance.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using namespace kembed;
using kernel::Metric;

namespace {

const Metric kPruned[] = {Metric::euclidean, Metric::sqeuclidean, Metric::manhattan};

// Lattice points in [0, 3]^d, every fifth a copy of an earlier one, and a
// dense cluster of equal points: duplicates, ties, and a node that cannot split.
std::vector<double> lattice_with_duplicates(int n, int d, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(0, 3);
  std::vector<double> x(std::size_t(n) * d);
  for (double& v : x) v = pick(rng);
  for (int i = 5; i < n; i += 5)
    std::copy_n(&x[std::size_t(rng() % i) * d], d, &x[std::size_t(i) * d]);
  for (int i = n - 20; i < n; ++i) std::fill_n(&x[std::size_t(i) * d], d, 1.0);
  return x;
}

// Every point other than `skip` sorted by (distance, index): the rule itself.
std::vector<graph::Neighbor> sorted_all(const std::vector<double>& x, int d, const double* q,
                                        long skip, Metric metric) {
  std::vector<graph::Neighbor> all;
  const long n = static_cast<long>(x.size()) / d;
  for (long j = 0; j < n; ++j)
    if (j != skip)
      all.push_back({j, graph::pair_distance(metric, q, &x[std::size_t(j) * d], d, 1, 1)});
  std::sort(all.begin(), all.end(), graph::nearer);
  return all;
}

bool same(const std::vector<graph::Neighbor>& a, const std::vector<graph::Neighbor>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t t = 0; t < a.size(); ++t)  // bit for bit
    if (a[t].index != b[t].index || a[t].distance != b[t].distance) return false;
  return true;
}

bool same(const graph::NeighborLists& a, const graph::NeighborLists& b) {
  return a.rows.begin == b.rows.begin && a.rows.end == b.rows.end && a.offsets == b.offsets &&
         same(a.lists, b.lists);
}

std::unique_ptr<io::MatrixFile> write_points(const Comm& comm, const std::string& name,
                                             const std::vector<double>& x, int d) {
  const auto dir = test::scratch_dir(comm, "kd_tree_" + name);
  const int n = static_cast<int>(x.size()) / d;
  return io::open_matrix_file(comm, test::write_bin(comm, dir, name + ".bin", x), {n, d});
}

}  // namespace

TEST(KdTree, EqualsTheSortOfAllDistances) {
  for (int d : {1, 2, 3, 5}) {
    const int n = 300;
    const auto x = lattice_with_duplicates(n, d, 3 + d);
    for (Metric metric : kPruned) {
      const graph::KdTree tree(x, d, metric);
      std::vector<graph::Neighbor> got;
      for (long i = 0; i < n; i += 7) {
        const double* q = &x[std::size_t(i) * d];
        const auto all = sorted_all(x, d, q, i, metric);
        for (std::size_t k : {std::size_t(1), std::size_t(9), std::size_t(40), all.size()}) {
          tree.nearest(q, k, i, got);
          EXPECT_TRUE(same(got, {all.begin(), all.begin() + k}))
              << "d " << d << " " << kernel::metric_name(metric) << " row " << i << " K " << k;
        }
        const double radius = all[20].distance;  // ties at the radius included
        tree.within(q, radius, i, got);
        auto in = all;
        in.erase(std::find_if(in.begin(), in.end(),
                              [&](const graph::Neighbor& a) { return a.distance > radius; }),
                 in.end());
        EXPECT_TRUE(same(got, in)) << "radius, d " << d << " row " << i;
        tree.nearest(q, 5, -1, got);  // no skip: the point itself (or a copy) first
        EXPECT_EQ(got.front().distance, 0);
      }
    }
  }
}

TEST(KdTree, SearchEqualsScanOnEveryRankCount) {
  const Comm comm = Comm::world();
  for (int d : {1, 2, 3, 5}) {
    const int n = 257;
    const auto x = lattice_with_duplicates(n, d, 11 + d);
    auto points = write_points(comm, "points" + std::to_string(d), x, d);
    auto queries = write_points(comm, "queries" + std::to_string(d), lattice_with_duplicates(61, d, 5), d);
    for (Metric metric : kPruned)
      for (int k : {0, 1, 6, 30}) {
        graph::NeighborSettings s;
        s.metric = metric;
        s.neighbors = k;
        s.radius = k == 0 ? (metric == Metric::sqeuclidean ? 2.0 : 1.5) : 0;
        s.chunk_rows = 50;
        auto brute = s, tree = s;
        brute.search = graph::NeighborSearch::brute;
        tree.search = graph::NeighborSearch::tree;
        for (bool same_set : {true, false}) {
          io::MatrixFile& q = same_set ? *points : *queries;
          const auto want = graph::nearest_neighbors(q, *points, brute, same_set, comm);
          const auto got = graph::nearest_neighbors(q, *points, tree, same_set, comm);
          EXPECT_TRUE(test::all_ranks(comm, same(got, want)))
              << "d " << d << " " << kernel::metric_name(metric) << " K " << k
              << (same_set ? " same set" : " other queries");
        }
      }
  }
}

TEST(KdTree, WhereTheTreeApplies) {
  graph::NeighborSettings s;
  EXPECT_TRUE(graph::kd_tree_applies(s, 3));
  EXPECT_TRUE(graph::kd_tree_applies(s, graph::kTreeMaxDims));
  EXPECT_FALSE(graph::kd_tree_applies(s, graph::kTreeMaxDims + 1));
  s.search = graph::NeighborSearch::tree;
  EXPECT_TRUE(graph::kd_tree_applies(s, 100));
  s.search = graph::NeighborSearch::brute;
  EXPECT_FALSE(graph::kd_tree_applies(s, 3));
  s.search = graph::NeighborSearch::tree;
  s.metric = Metric::cosine;  // not monotone in the coordinates: the scan
  EXPECT_FALSE(graph::kd_tree_applies(s, 3));
}

TEST(KdTree, DistancesThatOverflowAreReportedAsByTheScan) {
  const Comm comm = Comm::world();
  std::vector<double> x = lattice_with_duplicates(40, 2, 1);
  x[7] = 1e200;  // its squared distances overflow
  auto file = write_points(comm, "overflow", x, 2);
  graph::NeighborSettings s;
  s.neighbors = 3;
  s.search = graph::NeighborSearch::tree;
  const std::string error = test::caught([&] { graph::neighborhood_graph(*file, s, comm); });
  EXPECT_TRUE(test::all_ranks(comm, error.find("is not finite") != std::string::npos)) << error;
}
