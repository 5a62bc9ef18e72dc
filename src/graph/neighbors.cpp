#include "kembed/graph/neighbors.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "kembed/core/error.hpp"
#include "kembed/graph/kd_tree.hpp"
#include "kembed/graph/pair_distance.hpp"

namespace kembed::graph {

namespace {

using kernel::Metric;

std::string check_settings(const NeighborSettings& s, const io::MatrixFile& points) {
  const std::int64_t n = points.rows();
  std::ostringstream e;
  if (s.neighbors > 0 && s.radius > 0) {
    e << "give either --neighbors or --radius, not both";
  } else if (s.radius == 0 && s.neighbors < 1) {
    e << "--neighbors must be at least 1, found " << s.neighbors;
  } else if (s.neighbors == 0 && !(s.radius > 0 && std::isfinite(s.radius))) {
    e << "--radius must be positive and finite, found " << s.radius;
  } else if (n < 2) {
    e << points.path() << ": a neighbourhood graph needs at least 2 points, found " << n;
  } else if (s.neighbors >= n) {
    e << "--neighbors " << s.neighbors << " must be below the number of points (" << n << ") in "
      << points.path() << " (a point is not its own neighbour)";
  }
  return e.str();
}

// Whether every distance between the n x d row-major `points` is finite:
// the distance between the corners of their bounding box bounds each one
// (rounding is monotone), so one pair decides.
bool distances_finite(const std::vector<double>& points, int d, Metric metric) {
  std::vector<double> lo(static_cast<std::size_t>(d), INFINITY), hi(lo.size(), -INFINITY);
  for (std::size_t p = 0; p < points.size(); p += std::size_t(d))
    for (int t = 0; t < d; ++t) lo[t] = std::min(lo[t], points[p + t]), hi[t] = std::max(hi[t], points[p + t]);
  return points.empty() || std::isfinite(pair_distance(metric, lo.data(), hi.data(), d, 1, 1));
}

}  // namespace

bool kd_tree_applies(const NeighborSettings& settings, std::int64_t d) {
  if (!KdTree::supports(settings.metric) || settings.search == NeighborSearch::brute) return false;
  return settings.search == NeighborSearch::tree || d <= kTreeMaxDims;
}

std::string NeighborSettings::describe() const {
  std::ostringstream s;
  if (neighbors > 0)
    s << "--neighbors " << neighbors;
  else
    s << "--radius " << radius;
  return s.str();
}

IndexRange neighbor_rows(std::int64_t n, int rank, int ranks) {
  const std::int64_t base = n / ranks, extra = n % ranks;
  const std::int64_t begin = rank * base + std::min<std::int64_t>(rank, extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

NeighborLists nearest_neighbors(io::MatrixFile& queries, io::MatrixFile& points,
                                const NeighborSettings& settings, bool same_set, const Comm& comm) {
  const std::int64_t n = points.rows();
  const int d = static_cast<int>(points.cols());
  const IndexRange mine = neighbor_rows(queries.rows(), comm.rank(), comm.size());
  const auto own = queries.read_rows(mine.size() > 0 ? std::vector<IndexRange>{mine}
                                                     : std::vector<IndexRange>{});
  const int rows = static_cast<int>(mine.size());
  const bool cosine = settings.metric == Metric::cosine;
  std::vector<double> own_norms(static_cast<std::size_t>(rows), 1);
  std::string error;
  if (cosine)
    for (int r = 0; r < rows && error.empty(); ++r) {
      own_norms[r] = norm2(&own[std::size_t(r) * d], d);
      if (!(own_norms[r] > 0))
        error = queries.path() + ": row " + std::to_string(mine.begin + r + 1) +
                " is zero, and the cosine distance of a zero vector is undefined";
    }
  agree(comm, error);

  NeighborLists result;
  result.rows = mine;
  result.offsets.push_back(0);
  const std::size_t k = static_cast<std::size_t>(settings.neighbors);
  if (kd_tree_applies(settings, d)) {
    // Every rank reads all points (the same on each, so each takes the same branch).
    std::vector<double> all = points.read_rows({IndexRange{0, n}});
    if (distances_finite(all, d, settings.metric)) {
      const KdTree tree(std::move(all), d, settings.metric);
      // The own rows asked in the tree's order of the same points (for
      // queries from another set, in row order), the lists kept per row.
      std::vector<std::vector<Neighbor>> lists(static_cast<std::size_t>(rows));
      const auto ask = [&](int r) {
        const double* x = &own[std::size_t(r) * d];
        const std::int64_t skip = same_set ? mine.begin + r : -1;
        if (k == 0)
          tree.within(x, settings.radius, skip, lists[r]);
        else
          tree.nearest(x, k, skip, lists[r]);
      };
      if (same_set) {
        for (const std::int64_t i : tree.tree_order())
          if (i >= mine.begin && i < mine.end) ask(static_cast<int>(i - mine.begin));
      } else {
        for (int r = 0; r < rows; ++r) ask(r);
      }
      for (auto& list : lists) {
        result.lists.insert(result.lists.end(), list.begin(), list.end());
        result.offsets.push_back(static_cast<std::int64_t>(result.lists.size()));
        std::vector<Neighbor>().swap(list);
      }
      result.spatial_order = tree.tree_order();
      return result;
    }
  }

  // Per own row: a max-heap (under `nearer`) of its K best so far, or the
  // list within the radius.
  std::vector<std::vector<Neighbor>> best(static_cast<std::size_t>(rows));
  const std::int64_t chunk = std::max<std::int64_t>(1, settings.chunk_rows);
  for (std::int64_t c0 = 0; c0 < n; c0 += chunk) {
    const IndexRange range{c0, std::min(n, c0 + chunk)};
    const auto other = points.read_rows({range});
    collectively(comm, [&] {
      std::vector<double> other_norms(static_cast<std::size_t>(range.size()), 1);
      if (cosine)
        for (std::int64_t j = 0; j < range.size(); ++j)
          other_norms[j] = norm2(&other[std::size_t(j) * d], d);
      for (int r = 0; r < rows; ++r) {
        const std::int64_t i = mine.begin + r;
        const double* x = &own[std::size_t(r) * d];
        auto& heap = best[r];
        for (std::int64_t j = range.begin; j < range.end; ++j) {
          if (same_set && j == i) continue;
          const std::int64_t lj = j - range.begin;
          if (cosine && !(other_norms[lj] > 0)) continue;  // its own rank reports it
          const Neighbor cand{j, pair_distance(settings.metric, x, &other[std::size_t(lj) * d], d,
                                               own_norms[r], other_norms[lj])};
          if (!std::isfinite(cand.distance))
            throw Error(points.path() + ": the distance between rows " + std::to_string(i + 1) +
                        " and " + std::to_string(j + 1) + " is not finite (values too large)");
          if (k == 0) {
            if (cand.distance <= settings.radius) heap.push_back(cand);
          } else if (heap.size() < k) {
            heap.push_back(cand);
            std::push_heap(heap.begin(), heap.end(), nearer);
          } else if (nearer(cand, heap.front())) {
            std::pop_heap(heap.begin(), heap.end(), nearer);
            heap.back() = cand;
            std::push_heap(heap.begin(), heap.end(), nearer);
          }
        }
      }
    });
  }

  for (auto& list : best) {
    std::sort(list.begin(), list.end(), nearer);
    result.lists.insert(result.lists.end(), list.begin(), list.end());
    result.offsets.push_back(static_cast<std::int64_t>(result.lists.size()));
    std::vector<Neighbor>().swap(list);
  }
  return result;
}

Graph neighborhood_graph(io::MatrixFile& points, const NeighborSettings& settings,
                         const Comm& comm) {
  agree(comm, check_settings(settings, points));
  const std::int64_t n = points.rows();
  const NeighborLists mine = nearest_neighbors(points, points, settings, true, comm);
  std::vector<std::int64_t> counts;
  for (std::size_t r = 0; r + 1 < mine.offsets.size(); ++r)
    counts.push_back(mine.offsets[r + 1] - mine.offsets[r]);
  const auto all_counts = comm.allgatherv(counts);
  const auto all_lists = comm.allgatherv(mine.lists);
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(n) + 1, 0);
  for (std::int64_t i = 0; i < n; ++i) offsets[i + 1] = offsets[i] + all_counts[i];
  return symmetrize(n, offsets, all_lists);
}

}  // namespace kembed::graph
