#pragma once
/// @file Distance matrices of points, assembled block-locally in block-cyclic
/// layout like kernel matrices (see kernel/assemble.hpp for the panels).
#include <cstdint>
#include <string>
#include <vector>

#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::kernel {

/// The dissimilarity d(x, y) between two points:
///   euclidean    ||x - y||_2
///   sqeuclidean  ||x - y||_2^2
///   manhattan    ||x - y||_1
///   cosine       1 - x.y / (||x|| ||y||)   (undefined for a zero vector)
enum class Metric { euclidean, sqeuclidean, manhattan, cosine };

/// Parses a metric name; throws Error naming the valid ones.
Metric parse_metric(const std::string& name);
std::string metric_name(Metric metric);

/// Collective: an agreed Error if `metric` is undefined for one of the rows
/// of `panel` (row-major, one row per local index of `dist`, `d` columns):
/// the cosine distance of a zero vector. The message names `source` and the
/// first such row (1-based) over all ranks.
void check_points_for_metric(Metric metric, const std::vector<double>& panel,
                             const BlockCyclic1D& dist, int d, const Comm& comm,
                             const std::string& source);

/// Fills out(i, j) = metric(x_i, y_j) for this rank's block of `out`, where
/// `row_panel` holds the x rows of its local rows and `col_panel` the y rows
/// of its local columns (both row-major with `d` columns, as read_panel gives
/// them). Euclidean, sqeuclidean and cosine use one local dgemm
/// (||x||^2 + ||y||^2 - 2 x.y, clamped at 0 against cancellation); manhattan
/// is summed pair by pair. Pairs with a row whose squared norm overflows are
/// computed from scaled differences. Collective over out's grid: a distance
/// that is not finite or too large for MDS to square is an agreed Error
/// naming the entry (check_squares; `column_offset` as in assemble_kernel).
void assemble_distances(Metric metric, const std::vector<double>& row_panel,
                        const std::vector<double>& col_panel, int d, DistMatrix& out,
                        std::int64_t column_offset = 0);

/// a <- scale * (a o a) over the stored entries, each as (scale a_ij) a_ij:
/// MDS's -1/2 D^(2) (scale -1/2) and Gower's squared distances (scale 1),
/// stored or computed a tile at a time (PointTiles) with the same bits.
void square_distances(DistMatrix& a, double scale);

}  // namespace kembed::kernel
