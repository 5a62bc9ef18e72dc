#pragma once
/// @file The cross-product of a distributed data matrix with itself, the
/// m x m matrix that pca (covariance and Gram routes) and ca decompose.
#include "kembed/linalg/dist_matrix.hpp"

namespace kembed {

/// Whether cross_product takes its local path for `a` on its grid: `trans`
/// 'T' (AᵀA) on a P x 1 grid or 'N' (AAᵀ) on a 1 x P grid, when the m x m
/// partial sum per rank is no larger than A's share (m P <= A's long side).
bool cross_product_is_local(char trans, const DistMatrix& a);

/// Collective: C = alpha AᵀA (`trans` 'T') or alpha AAᵀ ('N'), C on A's grid.
/// When every rank holds whole rows of A (P x 1, for AᵀA) or whole columns
/// (1 x P, for AAᵀ), each rank forms its partial sum with one dsyrk and a
/// reduce-scatter delivers each rank its block of C: A is streamed once at
/// the BLAS rate with half of pdgemm's flops. Otherwise pdgemm.
void cross_product(char trans, double alpha, const DistMatrix& a, DistMatrix& c);

}  // namespace kembed
