// The neighbourhood graph and geodesic distances against brute force: kNN
// and radius lists by sorting all distances (ties on an integer lattice,
// broken by the lower index), --connect against Kruskal's algorithm on the
// components, shortest paths against Floyd-Warshall on
// random graphs for every grid shape, and agreed errors for bad settings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <tuple>

#include "kembed/core/error.hpp"
#include "kembed/graph/connect.hpp"
#include "kembed/graph/geodesic_search.hpp"
#include "kembed/graph/neighbors.hpp"
#include "kembed/graph/shortest_paths.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using namespace kembed;

namespace {

// Points on a small integer lattice: many exactly equal distances.
std::vector<double> lattice_points(int n, int d, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(0, 3);
  std::vector<double> x(std::size_t(n) * d);
  for (double& v : x) v = pick(rng);
  return x;
}

// Undirected edges {i < j} -> (weight, listed) by brute force.
using EdgeMap = std::map<std::pair<long, long>, std::pair<double, int>>;

EdgeMap brute_force_edges(const std::vector<double>& x, int n, int d, int k, double radius) {
  EdgeMap edges;
  for (int i = 0; i < n; ++i) {
    std::vector<std::pair<double, int>> all;
    for (int j = 0; j < n; ++j) {
      if (j == i) continue;
      double s = 0;
      for (int t = 0; t < d; ++t)
        s += std::pow(x[std::size_t(i) * d + t] - x[std::size_t(j) * d + t], 2);
      all.emplace_back(std::sqrt(s), j);
    }
    std::sort(all.begin(), all.end());  // by distance, then index
    const std::size_t take = k > 0 ? std::size_t(k) : all.size();
    for (std::size_t t = 0; t < take; ++t) {
      if (k == 0 && all[t].first > radius) break;
      auto& e = edges[{std::min(i, all[t].second), std::max(i, all[t].second)}];
      e.first = all[t].first;
      ++e.second;
    }
  }
  return edges;
}

EdgeMap graph_edges(const graph::Graph& g) {
  EdgeMap edges;
  for (long i = 0; i < g.n; ++i)
    for (auto t = g.offsets[i]; t < g.offsets[i + 1]; ++t)
      edges[{std::min(i, long(g.targets[t])), std::max(i, long(g.targets[t]))}] = {g.weights[t],
                                                                                   g.listed[t]};
  return edges;
}

std::unique_ptr<io::MatrixFile> write_points(const Comm& comm, const std::string& name,
                                             const std::vector<double>& x, int n, int d) {
  const auto dir = test::scratch_dir(comm, "graph_" + name);
  return io::open_matrix_file(comm, test::write_bin(comm, dir, name + ".bin", x), {n, d});
}

// All-pairs shortest path lengths of g (n vertices) by Floyd-Warshall, row
// major; infinity between vertices that no path joins.
std::vector<double> floyd_warshall(const graph::Graph& g, int n) {
  std::vector<double> fw(std::size_t(n) * n, std::numeric_limits<double>::infinity());
  for (int i = 0; i < n; ++i) fw[std::size_t(i) * n + i] = 0;
  for (int i = 0; i < n; ++i)
    for (auto t = g.offsets[i]; t < g.offsets[i + 1]; ++t)
      fw[std::size_t(i) * n + g.targets[t]] =
          std::min(fw[std::size_t(i) * n + g.targets[t]], g.weights[t]);
  for (int m = 0; m < n; ++m)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        fw[std::size_t(i) * n + j] = std::min(
            fw[std::size_t(i) * n + j], fw[std::size_t(i) * n + m] + fw[std::size_t(m) * n + j]);
  return fw;
}

}  // namespace

TEST(NeighborGraph, KnnMatchesBruteForceWithTiesByIndex) {
  const Comm comm = Comm::world();
  const int n = 41, d = 2;
  const auto x = lattice_points(n, d, 7);
  auto file = write_points(comm, "knn", x, n, d);
  for (int k : {1, 4, 9}) {
    graph::NeighborSettings s;
    s.neighbors = k;
    s.chunk_rows = 6;  // several chunks, one of them short
    const auto g = graph::neighborhood_graph(*file, s, comm);
    const auto got = graph_edges(g), want = brute_force_edges(x, n, d, k, 0);
    EXPECT_TRUE(test::all_ranks(comm, got == want)) << "K = " << k;
    EXPECT_EQ(g.edge_count(), static_cast<std::int64_t>(want.size()));
  }
}

TEST(NeighborGraph, RadiusMatchesBruteForce) {
  const Comm comm = Comm::world();
  const int n = 23, d = 3;
  const auto x = lattice_points(n, d, 11);
  auto file = write_points(comm, "radius", x, n, d);
  graph::NeighborSettings s;
  s.radius = 1.5;
  const auto g = graph::neighborhood_graph(*file, s, comm);
  EXPECT_TRUE(test::all_ranks(comm, graph_edges(g) == brute_force_edges(x, n, d, 0, 1.5)));
}

TEST(NeighborGraph, BadSettingsAreAgreedErrors) {
  const Comm comm = Comm::world();
  const int n = 10, d = 2;
  auto file = write_points(comm, "bad", lattice_points(n, d, 3), n, d);
  const auto fails = [&](int k, double radius, const std::string& part) {
    graph::NeighborSettings s;
    s.neighbors = k;
    s.radius = radius;
    try {
      graph::neighborhood_graph(*file, s, comm);
    } catch (const Error& e) {
      return std::string(e.what()).find(part) != std::string::npos;
    }
    return false;
  };
  EXPECT_TRUE(test::all_ranks(comm, fails(0, 0, "--neighbors must be at least 1")));
  EXPECT_TRUE(test::all_ranks(comm, fails(10, 0, "must be below the number of points (10)")));
  EXPECT_TRUE(test::all_ranks(comm, fails(0, -1, "--radius must be positive")));
  EXPECT_TRUE(test::all_ranks(
      comm, fails(0, std::numeric_limits<double>::quiet_NaN(), "--radius must be positive")));
}

TEST(GeodesicDistances, DijkstraMatchesFloydWarshallOnEveryGrid) {
  const Comm comm = Comm::world();
  for (unsigned seed : {1u, 2u, 3u}) {
    const int n = 30;
    // A random sparse graph (possibly disconnected: unreachable pairs are inf).
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> w(0.1, 2.0);
    std::uniform_int_distribution<int> pick(0, n - 1);
    std::vector<std::int64_t> offsets{0};
    std::vector<graph::Neighbor> lists;
    for (int i = 0; i < n; ++i) {
      for (int t = 0; t < 2; ++t) lists.push_back({pick(rng), w(rng)});
      offsets.push_back(static_cast<std::int64_t>(lists.size()));
    }
    const auto g = graph::symmetrize(n, offsets, lists);
    const std::vector<double> fw = floyd_warshall(g, n);
    for (auto [p, q] : test::grid_shapes(comm.size())) {
      BlacsGrid grid(comm, p, q);
      DistMatrix geo(grid, n, n, 4, 4);
      graph::fill_geodesic_distances(g, geo);
      const auto full = geo.gather_to_root();  // column-major; symmetric anyway
      double worst = 0;
      bool same_reach = true;
      if (comm.is_root())
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < n; ++j) {
            const double a = full[std::size_t(j) * n + i], b = fw[std::size_t(i) * n + j];
            if (std::isinf(a) || std::isinf(b))
              same_reach = same_reach && a == b;
            else
              worst = std::max(worst, std::abs(a - b));
          }
      EXPECT_TRUE(test::all_ranks(comm, same_reach && worst < 1e-12))
          << "seed " << seed << ", grid " << p << "x" << q << ", max diff " << worst;
    }
  }
}

// The renumbered search with its indexed heap, reused from every source in
// turn, against Floyd-Warshall (1e-12) and against the binary-heap Dijkstra
// (bit for bit): on random graphs of 300 vertices in several components,
// once with lengths 0, 1, 2, 3 (zero-length edges and many equal paths), once
// with lengths in [0.1, 2).
TEST(GeodesicDistances, RenumberedSearchMatchesFloydWarshallAndTheBinaryHeap) {
  const Comm comm = Comm::world();
  for (bool integral : {true, false}) {
    const int n = 300;
    std::mt19937 rng(integral ? 11 : 12);
    std::uniform_int_distribution<int> small(0, 3);
    std::uniform_real_distribution<double> real(0.1, 2.0);
    std::uniform_int_distribution<int> pick(0, 99);
    std::vector<std::int64_t> offsets{0};
    std::vector<graph::Neighbor> lists;
    // Three blocks of 100 vertices joined only within: three components
    // (or more, where a block falls apart).
    for (int i = 0; i < n; ++i) {
      for (int t = 0; t < 3; ++t)
        lists.push_back({(i / 100) * 100 + pick(rng), integral ? double(small(rng)) : real(rng)});
      offsets.push_back(static_cast<std::int64_t>(lists.size()));
    }
    const auto g = graph::symmetrize(n, offsets, lists);
    const std::vector<double> fw = floyd_warshall(g, n);
    graph::GeodesicSearch search(g);
    std::vector<double> reference;
    double worst = 0;
    bool same_reach = true, same_bits = search.vertices() == n;
    int unreachable = 0;
    for (int s = 0; s < n; ++s) {
      search.run(s);
      graph::shortest_paths_from(g, s, reference);
      for (int v = 0; v < n; ++v) {
        const double a = search.distance(v), b = fw[std::size_t(s) * n + v];
        same_bits = same_bits && a == reference[v];
        unreachable += std::isinf(b) ? 1 : 0;
        if (std::isinf(a) || std::isinf(b))
          same_reach = same_reach && a == b;
        else
          worst = std::max(worst, std::abs(a - b));
      }
    }
    // At least the pairs between the three blocks are unreachable.
    EXPECT_TRUE(test::all_ranks(comm, same_reach && same_bits && worst < 1e-12 &&
                                          unreachable >= 2 * 3 * 100 * 100 / 2 * 2))
        << "integral " << integral << ", max diff " << worst << ", unreachable " << unreachable;
  }
}

TEST(NeighborGraph, ComponentsAndDegrees) {
  // A triangle, a path of three and an isolated vertex, from lists.
  const std::vector<std::int64_t> offsets{0, 2, 3, 3, 5, 5, 5, 5};
  const std::vector<graph::Neighbor> lists{{1, 1}, {2, 1}, {2, 1}, {4, 1}, {5, 1}};
  auto g = graph::symmetrize(7, offsets, lists);
  const auto s = graph::graph_stats(g);
  EXPECT_EQ(s.edges, 5);
  EXPECT_EQ(s.components, 3);
  EXPECT_EQ(s.min_degree, 0);
  EXPECT_EQ(s.max_degree, 2);
  EXPECT_EQ(s.component_sizes, (std::vector<std::int64_t>{3, 3, 1}));
}

// --connect: the c - 1 edges joining the components are Kruskal's minimum
// spanning tree of the components, here by brute force over all point pairs
// sorted by (length, i, j).
TEST(NeighborGraph, ConnectAddsKruskalsTreeOfTheComponents) {
  const Comm comm = Comm::world();
  const int n = 37, d = 2;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0, 10);
  std::vector<double> x(std::size_t(n) * d);
  for (double& v : x) v = u(rng);
  auto file = write_points(comm, "connect", x, n, d);
  graph::NeighborSettings s;
  s.radius = 1.3;
  s.chunk_rows = 5;
  auto g = graph::neighborhood_graph(*file, s, comm);
  const auto before = graph::graph_stats(g);

  // Serial: components of the brute-force radius graph, then Kruskal.
  std::vector<int> parent(n);
  for (int i = 0; i < n; ++i) parent[i] = i;
  const std::function<int(int)> find = [&](int v) {
    return parent[v] == v ? v : parent[v] = find(parent[v]);
  };
  const auto radius_edges = brute_force_edges(x, n, d, 0, 1.3);
  for (const auto& e : radius_edges) parent[find(int(e.first.first))] = find(int(e.first.second));
  std::vector<std::tuple<double, int, int>> pairs;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (find(i) != find(j))
        pairs.emplace_back(std::hypot(x[2 * i] - x[2 * j], x[2 * i + 1] - x[2 * j + 1]), i, j);
  std::sort(pairs.begin(), pairs.end());
  std::vector<std::tuple<double, int, int>> want;
  for (const auto& [length, i, j] : pairs)
    if (find(i) != find(j)) {
      parent[find(i)] = find(j);
      want.emplace_back(length, i, j);
    }
  ASSERT_GE(before.components, 3) << "the test needs several components";

  const auto added = graph::connect_components(g, *file, s, comm);
  ASSERT_EQ(static_cast<std::int64_t>(added.size()), before.components - 1);
  ASSERT_EQ(added.size(), want.size());
  bool same = true;
  for (std::size_t t = 0; t < want.size(); ++t)
    same = same && added[t].source == std::get<1>(want[t]) &&
           added[t].target == std::get<2>(want[t]) &&
           std::abs(added[t].length - std::get<0>(want[t])) <= 1e-12 * std::get<0>(want[t]);
  EXPECT_TRUE(test::all_ranks(comm, same));
  const auto after = graph::graph_stats(g);
  EXPECT_EQ(after.components, 1);
  EXPECT_EQ(after.edges, before.edges + before.components - 1);
  // The old edges are kept, the new ones present in both directions.
  auto edges = graph_edges(g);
  for (const auto& e : radius_edges) EXPECT_EQ(edges[e.first].first, e.second.first);
  for (const auto& e : added) {
    const std::pair<long, long> key{e.source, e.target};
    EXPECT_EQ(edges[key].first, e.length);
  }
  for (long i = 0; i < g.n; ++i)
    EXPECT_TRUE(
        std::is_sorted(g.targets.begin() + g.offsets[i], g.targets.begin() + g.offsets[i + 1]));
}
