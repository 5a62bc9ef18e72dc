#pragma once
/// @file Private: the row pointers (indptr) of a CSR matrix: their checks,
/// and the split of the rows over the ranks by stored entries that every
/// sparse reader uses.
#include <cstdint>
#include <string>
#include <vector>

namespace kembed::io {

/// "" when `indptr` (rows + 1 values) starts at 0, never decreases and ends
/// at `entries`; otherwise a one-line message starting with `where` (e.g.
/// "x.npz: indptr.npy") that names the first offending position.
std::string indptr_problem(const std::vector<std::int64_t>& indptr, std::int64_t entries, const std::string& where);

/// The first row of each of `parts` ranks and the row count at the end
/// (parts + 1 values, ascending, from 0 to rows): rank r holds rows
/// [split[r], split[r+1]). Rank r's rows start at the first row whose entries
/// begin at or after floor(r * nnz / parts), so that no rank holds more than
/// nnz / parts + (the longest row) entries. An all-empty matrix is split by
/// rows. Deterministic: the same indptr gives the same split everywhere.
/// @pre indptr_problem(indptr, indptr.back(), ...) is empty, parts >= 1
std::vector<std::int64_t> split_rows_by_entries(const std::vector<std::int64_t>& indptr, int parts);

}  // namespace kembed::io
