#pragma once
/// @file Norms and traces of distributed matrices.
#include <cstdint>
#include <string>
#include <vector>

#include "kembed/linalg/dist_matrix.hpp"

namespace kembed {

/// Collective: sum of the diagonal. @pre square
double trace(const DistMatrix& a);
double trace(const SingleMatrix& a);

/// Collective: Frobenius norm, accumulated with scaling against overflow.
double frobenius_norm(const DistMatrix& a);
double frobenius_norm(const SingleMatrix& a);

/// One read of a local column: its sum of squares and its largest magnitude,
/// each over kSquareChains partial results, entry i going to partial i mod
/// kSquareChains, the partials then combined in order (a single accumulator
/// would wait on the previous add for every entry).
inline constexpr int kSquareChains = 8;
struct ColumnSquares {
  double sum_squares = 0, largest = 0;
};

/// Collective: the same Frobenius norm, from every local column's squares
/// taken by a pass of the caller over `a` (centering's, as it writes each
/// entry), so no further read is needed. Only a column whose largest entry
/// is too large or too small to square safely is read again, as
/// frobenius_norm(a) does. Given the partials as ColumnSquares defines them,
/// the result has frobenius_norm(a)'s bits.
/// @pre local.size() == a.local_cols()
double frobenius_norm(const DistMatrix& a, const std::vector<ColumnSquares>& local);
double frobenius_norm(const SingleMatrix& a, const std::vector<ColumnSquares>& local);

/// Collective: the data fingerprint of the entries (kembed/core/data_fingerprint.hpp),
/// as 16 hex digits on every rank; the same for any grid and block size.
std::string data_fingerprint(const DistMatrix& a);

/// Collective: the Frobenius norm of a matrix of which every rank holds a
/// contiguous run of `count` values (row panels, say), with the scaling
/// against overflow and underflow of frobenius_norm(a) applied to the run.
double frobenius_norm(const Comm& comm, const double* values, std::int64_t count);
/// The same from this rank's sum of squares and largest magnitude of its run,
/// taken by the caller's pass as it wrote the values; the run is read again
/// only when the largest magnitude over all ranks is too large or too small
/// to square safely.
double frobenius_norm(const Comm& comm, const double* values, std::int64_t count,
                      const ColumnSquares& local);

/// Collective: the data fingerprint of a row-major matrix of `cols` columns
/// of which every rank holds the contiguous rows [first_row, first_row +
/// rows), as 16 hex digits on every rank; the same as data_fingerprint(a)
/// of the matrix in any block-cyclic layout.
std::string data_fingerprint(const Comm& comm, const double* values, std::int64_t rows,
                             std::int64_t first_row, std::int64_t cols);

/// Collective: Euclidean norm of every column (length a.cols(), on every rank).
std::vector<double> column_norms(const DistMatrix& a);

}  // namespace kembed
