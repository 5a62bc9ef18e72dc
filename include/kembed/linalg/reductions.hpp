#pragma once
/// @file Norms and traces of distributed matrices.
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

/// Collective: the data fingerprint of the entries (kembed/core/data_fingerprint.hpp),
/// as 16 hex digits on every rank; the same for any grid and block size.
std::string data_fingerprint(const DistMatrix& a);

/// Collective: Euclidean norm of every column (length a.cols(), on every rank).
std::vector<double> column_norms(const DistMatrix& a);

}  // namespace kembed
