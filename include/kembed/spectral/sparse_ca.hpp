#pragma once
/// @file Correspondence analysis of a sparse contingency table (CSR rows,
/// io::CsrRows) without densifying it: the definitions, results and sign
/// rule of the dense fit_ca (ca.hpp), with the standardized residuals
///   S = D_r^{-1/2} (P - r c^T) D_c^{-1/2},  P = N / t
/// applied as an operator: S^T S is SparseNormalOperator with D_a = diag(1 /
/// (t sqrt(r_i))), D_b = diag(1 / sqrt(c_j)), a = sqrt(r), b = sqrt(c)
/// (sparse_normal_operator.hpp). The top k eigenpairs of S^T S (J x J, the
/// columns route: a table's rows usually outnumber its columns) come from
/// the block Krylov solver; the row side U = S V / sigma is formed where the
/// rows are. Never an I x J dense matrix.
#include <string>

#include "kembed/core/phase_timer.hpp"
#include "kembed/io/csr_rows.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/spectral/ca.hpp"

namespace kembed::spectral {

/// Collective over grid.comm(): CA of the I x J non-negative counts whose
/// rows `table` holds, each rank one contiguous range in rank order (the
/// sparse readers' layout). Returns what fit_ca returns, to the same
/// definitions, except: route is always columns, spectrum is empty (krylov
/// only), and solved_frobenius is trace(S^T S) = the total inertia, which
/// bounds ||S^T S||_F (the J x J matrix is never formed; the residuals are
/// relative to it). Inertias are exact from the stored entries and the
/// masses: row i's is sum over its stored j of (p_ij - r_i c_j)^2 / (r_i
/// c_j), plus r_i times the mass of the columns it does not store.
/// Settings: route auto or columns, solver auto or krylov (others are agreed
/// errors); drop_empty as fit_ca. Agreed errors as fit_ca's (a negative
/// count, an all-zero row or column unless drop_empty, fewer than 2
/// non-empty rows or columns, a table of independence, k outside 1..min(I,
/// J) - 1, fewer than k dimensions of positive inertia) and bad rows, all
/// naming `source`. Phases go to `timer`.
CaResult fit_sparse_ca(const io::CsrRows& table, const BlacsGrid& grid, const CaSettings& settings,
                       const std::string& source, PhaseTimer& timer);

}  // namespace kembed::spectral
