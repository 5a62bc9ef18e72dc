#pragma once
/// @file PCA's covariance route on row panels: for tall data on a grid of one
/// process column, every process row keeps its contiguous rows of X as they
/// were read (row-major, which is X^T column-major), so there is no
/// block-cyclic copy. Centering reads the rows for their means and then
/// rewrites them once, summing the squares of the Frobenius norm as it goes;
/// this rank's part of Xc^T Xc is one dsyrk on them, only the d x d matrix is
/// reduced, and the embedding rows Xc U_k are formed where the rows are.
#include <cstdint>
#include <string>
#include <vector>

#include "kembed/io/matrix_file.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/linalg/reductions.hpp"
#include "kembed/spectral/pca.hpp"

namespace kembed::spectral {

/// Largest d whose d x d covariance the row panels replicate on every rank
/// (32 MB); wider data take the block-cyclic covariance route.
inline constexpr std::int64_t kRowPanelMaxCols = 2048;

/// Whether the covariance route of n x d data on `grid` runs on row panels:
/// one process column, d <= kRowPanelMaxCols, and panels of ceil(n / nprow)
/// rows that a ScaLAPACK block size (an int) can describe.
bool uses_row_panels(const BlacsGrid& grid, std::int64_t n, std::int64_t d);

/// This process row's rows [first, first + rows) of the n x d data, dealt in
/// panels of `block` = ceil(n / nprow) rows (the last panels may be short or
/// empty): the distribution of a ScaLAPACK matrix with row block `block` on
/// the grid's single process column.
struct RowPanel {
  std::int64_t n = 0, d = 0;
  int block = 1;
  std::int64_t first = 0, rows = 0;
  std::vector<double> values;  ///< rows x d, row-major
};

/// Collective: reads this process row's panel of `file` (one contiguous read
/// per rank; non-finite values are agreed errors naming the entry).
/// @pre uses_row_panels(grid, file.rows(), file.cols())
RowPanel read_row_panel(io::MatrixFile& file, const BlacsGrid& grid);

/// Collective: column_stats() of the data in the panels.
ColumnStats column_stats(const RowPanel& x, const Comm& comm, bool standardize,
                         const std::string& source);

/// Replaces every entry x_ij by (x_ij - mean_j) / scale_j. Local. Returns
/// the sum of squares and the largest magnitude of what it wrote, for
/// frobenius_norm(comm, values, count, local) without another pass.
ColumnSquares standardize_columns(RowPanel& x, const std::vector<double>& mean,
                                  const std::vector<double>& scale);

/// Collective: C = alpha X^T X of the data in the panels, written into the
/// d x d `c` on the panels' grid (any blocking): one dsyrk per rank and one
/// reduction of the d x d sums.
void scatter_matrix(const RowPanel& x, double alpha, DistMatrix& c);

/// Collective: the n x k product X U of the data in the panels and the d x k
/// `u`, distributed like the panels (row block x.block, column block nb), so
/// every rank multiplies its own rows by the replicated U.
DistMatrix project_rows(const RowPanel& x, const DistMatrix& u, int nb);

}  // namespace kembed::spectral
