#pragma once
/// @file Out-of-sample Laplacian eigenmaps: the Nystrom extension of the
/// normalized affinity M = D^(-1/2) W D^(-1/2) (Bengio et al., 2004). A new
/// point x with affinities w_i = w(x, x_i) to the n training points and
/// degree d(x) = sum_i w_i gets, for each kept eigenpair (mu_c, v_c) of M,
///   v_c(x) = (1/mu_c) sum_i w_i v_ic / sqrt(d(x) d_i),   y_c(x) = v_c(x) / sqrt(d(x)),
/// the fit's scaling y = D^(-1/2) v applied to the extended vector. When
/// w(x, .) is the fit's row of W for training point j, M v_c = mu_c v_c
/// makes y_c(x) the training coordinate y_jc.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kembed/graph/kd_tree.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/mpi/comm.hpp"
#include "kembed/spectral/laplacian_eigenmaps.hpp"

namespace kembed::spectral {

/// The smallest kept eigenvalue mu of M the extension accepts: 1/mu
/// multiplies every extended coordinate, so at 1e-8 the rounding of the
/// affinities (1e-16 relative) already reaches 1e-8 of the coordinates.
inline constexpr double kMinExtensionEigenvalue = 1e-8;

/// What the extension needs: a saved spectral model, read back.
struct SpectralExtension {
  std::int64_t n = 0, d = 0;
  int k = 0;
  Affinity affinity = Affinity::rbf;
  double gamma = 0;   ///< rbf: w(x, y) = exp(-gamma ||x - y||^2)
  int neighbors = 0;  ///< knn: K, counting the point itself (each point lists K - 1 others)
  std::vector<double> points;       ///< n x d row-major training points
  std::vector<double> degrees;      ///< d_i = sum_j w_ij (w_ii left out), n
  std::vector<double> eigenvalues;  ///< mu_2 .. mu_(k+1) of M, the kept pairs, k
  /// n x k row-major: unit eigenvectors v_2 .. v_(k+1) of M, each with the
  /// sign of the fit's embedding column (y = D^(-1/2) v).
  std::vector<double> vectors;
  /// knn: the distance from x_i to the last (K - 1-th) of the others it
  /// lists, and that neighbour's index: x_i lists a point p at distance
  /// delta with tie-break index t iff (delta, t) <= (radius_i, last_i).
  std::vector<double> neighbor_radius;
  std::vector<std::int64_t> neighbor_last;
};

/// Empty when the kept eigenvalues `mu` (mu_2 .. mu_(k+1)) allow the
/// extension, else why not (a mu below kMinExtensionEigenvalue: the 1/mu of
/// the formula would amplify rounding beyond use). `source` names the fit.
std::string extension_eigenvalue_error(const std::vector<double>& mu, const std::string& source);

/// Serial: the affinities w (n values) of the point x (d values) to the
/// training points, as the fit weighs them. A training point at distance 0
/// (the first, if several) is taken to be x itself: its weight is 0, as the
/// fit leaves w_ii out, and its index breaks x's distance ties. rbf:
/// exp(-gamma ||x - x_i||^2). knn: 1/2 if x lists x_i (x_i among the K - 1
/// nearest training points other than x itself; ties to the lower index)
/// plus 1/2 if x_i lists x ((delta_i, t) <= (radius_i, last_i), with t the
/// index of x itself, or n for a new point: it loses every tie); for a
/// training point this is the fit's row of W = 1/2 (C + C^T).
void affinity_row(const SpectralExtension& model, const double* x, std::vector<double>& w);

/// One nonzero affinity: (training point, weight).
using AffinityEntry = std::pair<std::int64_t, double>;

/// Serial: affinity_row's knn weights found through `tree` (a k-d tree over
/// the training points under the euclidean metric) rather than by a scan:
/// x itself by tree.nearest (distance 0), x's list by tree.nearest, the
/// training points that may list x by tree.within(max_radius, the largest
/// neighbor_radius). `row` receives the nonzero weights ascending by index,
/// the same values as affinity_row (the tree's distances are pair_distance's
/// bit for bit). O(log n + K + the points within max_radius) per point.
void tree_affinity_row(const SpectralExtension& model, const graph::KdTree& tree, double max_radius,
                       const double* x, std::vector<AffinityEntry>& row);

/// Serial: the k coordinates y (see the file comment) of a point whose
/// affinities to the training points are w (n values); returns d(x) = sum w,
/// and leaves y untouched when it is not positive.
double extend_row(const SpectralExtension& model, const double* w, double* y);
/// The same from the nonzero weights only, ascending by index (the same bits).
double extend_row(const SpectralExtension& model, const std::vector<AffinityEntry>& row, double* y);

/// Collective: the m x k coordinates (row-major, rank 0 only) of the m
/// points in `points`; each rank places a contiguous block of rows
/// (graph::neighbor_rows), each point by affinity_row (knn up to
/// graph::kTreeMaxDims dimensions: tree_affinity_row, every rank building
/// the tree over the n training points) and extend_row, so the result is the
/// same bits on any number of ranks. O(n d) work per point for rbf.
/// Agreed errors: a column count unlike the fit's; a point of degree 0 (no
/// affinity to any training point: every rbf weight underflows), naming its
/// 1-based row.
std::vector<double> spectral_transform(const SpectralExtension& model, io::MatrixFile& points,
                                       const Comm& comm);

}  // namespace kembed::spectral
