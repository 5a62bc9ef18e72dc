#include "kembed/spectral/spectral_transform.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <utility>

#include "kembed/core/error.hpp"
#include "kembed/graph/neighbors.hpp"
#include "kembed/graph/pair_distance.hpp"

namespace kembed::spectral {

std::string extension_eigenvalue_error(const std::vector<double>& mu, const std::string& source) {
  for (std::size_t c = 0; c < mu.size(); ++c)
    if (!(mu[c] >= kMinExtensionEigenvalue)) {
      std::ostringstream m;
      m.precision(17);
      m << source << ": eigenvalue " << mu[c] << " of D^(-1/2) W D^(-1/2) (component " << c + 1
        << ") is below " << kMinExtensionEigenvalue
        << ": the out-of-sample extension divides by it, so no model is written; fit fewer "
           "--components";
      return m.str();
    }
  return "";
}

void affinity_row(const SpectralExtension& model, const double* x, std::vector<double>& w) {
  const std::int64_t n = model.n;
  const int d = static_cast<int>(model.d);
  const bool rbf = model.affinity == Affinity::rbf;
  const kernel::Metric metric = rbf ? kernel::Metric::sqeuclidean : kernel::Metric::euclidean;
  w.assign(static_cast<std::size_t>(n), 0.0);
  std::int64_t self = -1;
  for (std::int64_t i = 0; i < n; ++i) {
    w[i] = graph::pair_distance(metric, x, &model.points[std::size_t(i) * d], d, 1, 1);
    if (self < 0 && w[i] == 0) self = i;
  }
  if (rbf) {
    for (std::int64_t i = 0; i < n; ++i) w[i] = i == self ? 0.0 : std::exp(-model.gamma * w[i]);
    return;
  }
  // w holds the distances delta_i; x's own list: the K - 1 smallest
  // (delta, index) other than x itself.
  std::vector<std::pair<double, std::int64_t>> order;
  order.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    if (i != self) order.emplace_back(w[i], i);
  const auto others = std::min<std::size_t>(std::size_t(model.neighbors - 1), order.size());
  std::nth_element(order.begin(), order.begin() + others, order.end());
  std::vector<double> weight(static_cast<std::size_t>(n), 0.0);
  for (std::size_t t = 0; t < others; ++t) weight[order[t].second] += 0.5;
  const std::int64_t tie_index = self >= 0 ? self : n;
  for (std::int64_t i = 0; i < n; ++i) {
    if (i == self) continue;
    const double r = model.neighbor_radius[i];
    if (w[i] < r || (w[i] == r && tie_index <= model.neighbor_last[i])) weight[i] += 0.5;
  }
  w = std::move(weight);
}

void tree_affinity_row(const SpectralExtension& model, const graph::KdTree& tree, double max_radius,
                       const double* x, std::vector<AffinityEntry>& row) {
  std::vector<graph::Neighbor> found;
  tree.nearest(x, 1, -1, found);  // ties ordered by index: the first point at distance 0
  const std::int64_t self = found[0].distance == 0 ? found[0].index : -1;
  const std::int64_t tie_index = self >= 0 ? self : model.n;
  row.clear();
  tree.nearest(x, std::size_t(model.neighbors - 1), self, found);
  for (const graph::Neighbor& e : found) row.emplace_back(e.index, 0.5);
  tree.within(x, max_radius, self, found);
  for (const graph::Neighbor& e : found) {
    const double r = model.neighbor_radius[e.index];
    if (e.distance < r || (e.distance == r && tie_index <= model.neighbor_last[e.index]))
      row.emplace_back(e.index, 0.5);
  }
  // Ascending by index, the two halves of a pair listed both ways added.
  std::sort(row.begin(), row.end());
  std::size_t kept = 0;
  for (std::size_t t = 0; t < row.size(); ++t)
    if (kept > 0 && row[kept - 1].first == row[t].first)
      row[kept - 1].second += row[t].second;
    else
      row[kept++] = row[t];
  row.resize(kept);
}

double extend_row(const SpectralExtension& model, const std::vector<AffinityEntry>& row,
                  double* y) {
  const int k = model.k;
  double degree = 0;
  for (const AffinityEntry& e : row) degree += e.second;
  if (!(degree > 0)) return degree;
  std::vector<double> s(static_cast<std::size_t>(k), 0.0);
  for (const AffinityEntry& e : row) {
    if (e.second == 0) continue;
    const double a = e.second / std::sqrt(model.degrees[e.first]);
    const double* v = &model.vectors[std::size_t(e.first) * k];
    for (int c = 0; c < k; ++c) s[c] += a * v[c];
  }
  // v_c(x) = s_c / (mu_c sqrt(d(x))), then y_c = v_c(x) / sqrt(d(x)).
  const double root = std::sqrt(degree);
  for (int c = 0; c < k; ++c) y[c] = s[c] / (model.eigenvalues[c] * root) / root;
  return degree;
}

double extend_row(const SpectralExtension& model, const double* w, double* y) {
  // Zeros add nothing to the sums: the nonzero weights in index order give the same bits.
  std::vector<AffinityEntry> row;
  for (std::int64_t i = 0; i < model.n; ++i)
    if (w[i] != 0) row.emplace_back(i, w[i]);
  return extend_row(model, row, y);
}

std::vector<double> spectral_transform(const SpectralExtension& model, io::MatrixFile& points,
                                       const Comm& comm) {
  const int k = model.k;
  std::string error;
  if (points.cols() != model.d)
    error = points.path() + ": has " + std::to_string(points.cols()) +
            " columns, but the model was fitted on points with " + std::to_string(model.d) +
            " features";
  agree(comm, error);
  const IndexRange rows = graph::neighbor_rows(points.rows(), comm.rank(), comm.size());
  const std::vector<double> x = points.read_rows({rows});
  const int d = static_cast<int>(model.d);
  // knn in few dimensions: x's list and the training points that may list x
  // from a k-d tree over the training points, instead of a scan of all n.
  std::optional<graph::KdTree> tree;
  double max_radius = 0;
  if (model.affinity == Affinity::knn && model.d <= graph::kTreeMaxDims) {
    tree.emplace(model.points, d, kernel::Metric::euclidean);
    for (double r : model.neighbor_radius) max_radius = std::max(max_radius, r);
  }
  std::vector<double> y(static_cast<std::size_t>(rows.size()) * k), w;
  std::vector<AffinityEntry> row;
  for (std::int64_t r = 0; r < rows.size() && error.empty(); ++r) {
    double degree;
    if (tree) {
      tree_affinity_row(model, *tree, max_radius, &x[std::size_t(r) * d], row);
      degree = extend_row(model, row, &y[std::size_t(r) * k]);
    } else {
      affinity_row(model, &x[std::size_t(r) * d], w);
      degree = extend_row(model, w.data(), &y[std::size_t(r) * k]);
    }
    if (!(degree > 0))
      error = points.path() + ": row " + std::to_string(rows.begin + r + 1) +
              " has no affinity to any training point (degree 0" +
              (model.affinity == Affinity::rbf
                   ? ": exp(-gamma ||x - x_i||^2) underflows to 0 for every training point"
                   : "") +
              "), so its spectral coordinates are not defined";
  }
  agree(comm, error);  // the lowest rank's message: the first such row
  return comm.gatherv(y);
}

}  // namespace kembed::spectral
