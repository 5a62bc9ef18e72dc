#pragma once
/// @file The Burt table B = Z^T Z of an indicator matrix Z (MCA), formed
/// exactly from the sparse rows of Z, and what it gives that the krylov
/// solver's k pairs cannot: Σ λ_k² over every principal inertia λ_k of the
/// CA of Z (the Burt table's inertia), and, for a small J, every λ_k.
///
/// With n rows, Q stored entries a row and the category counts n_j = B_jj,
/// the CA of Z has
///   (S^T S)_jl = (n B_jl - n_j n_l) / (n Q sqrt(n_j n_l)),
/// the numerator exact in double (integers below 2^53 while n max_j n_j is).
#include <vector>

#include "kembed/io/csr_rows.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::spectral {

/// Collective over `comm`: ||S^T S||_F^2 = Σ λ² for the indicator matrix
/// whose rows `indicator` holds (each rank one contiguous range in rank
/// order). B is formed in slabs of whole rows of at most 2^20 entries (8 MB),
/// each summed over the ranks by one allreduce; never an n x J matrix.
/// @pre every stored value is 1, every row stores the same Q >= 1 entries
/// and every column is used
double burt_inertia(const io::CsrRows& indicator, const Comm& comm);

/// Collective over `comm`: every eigenvalue of S^T S (J of them, descending;
/// the principal inertias λ_k and zeros), from S^T S formed as above in one
/// J x J allreduce and decomposed by dsyevd on every rank. For a small J
/// (J x J doubles on every rank, O(J^3) flops). @pre as burt_inertia
std::vector<double> indicator_spectrum(const io::CsrRows& indicator, const Comm& comm);

}  // namespace kembed::spectral
