#pragma once
/// @file Categorical tables (one variable per column, categories as text or
/// integers) read as their indicator (complete disjunctive) matrix, the
/// input of multiple correspondence analysis.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kembed/io/sparse_matrix_input.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::io {

/// A parsed categorical table: every cell replaced by the index of its
/// category among its variable's categories.
struct CategoricalTable {
  std::vector<std::string> variables;            ///< Q header names
  std::vector<std::vector<std::string>> levels;  ///< per variable, in code order
  std::int64_t rows = 0;
  std::vector<std::int32_t> codes;  ///< rows x Q row-major, 0-based category indices
  std::vector<std::string> ids;     ///< one per row from the id column; empty without one
};

/// Parses `text` (`name` starts every error message). The first non-blank
/// line is the header of variable names; cells are separated by commas (tabs
/// if the header has no comma), may be double-quoted as CSV does, and are
/// trimmed of spaces. Blank lines and lines starting with '#' are skipped.
/// Categories are sorted: numerically when every cell of the variable is an
/// integer, otherwise as byte strings. An empty cell, a ragged line, a
/// duplicate or empty variable name, or no data line are Errors naming the
/// line (and column). `id_column` (a header name, or a 1-based column number
/// when all digits; empty: none) is a column of row ids, kept as text and
/// not a variable; an id column that does not exist is an Error listing the
/// header.
CategoricalTable parse_categorical(std::string_view text, const std::string& name,
                                   const std::string& id_column = "");

/// Collective: rank 0 reads and parses the categorical table at `path` and
/// sends every rank its rows of the n x J indicator matrix Z (J = the total
/// number of categories; z_ij = 1 where row i takes category j) as CSR rows:
/// each row stores exactly Q ones, in the columns of its categories
/// (variable by variable, each variable's categories in their sorted order:
/// ascending). Rows are split in equal counts over the ranks, rank order
/// (every row stores Q entries: this is the split by stored entries). Z is
/// never dense: rank 0 holds the parsed table and n Q column indices while
/// it sends them, every rank then 12 bytes per stored entry and 8 per row.
/// Column names ("variable:category") and the row ids of `id_column` (see
/// parse_categorical) are on rank 0; the format is "categorical". Errors
/// are agreed.
std::unique_ptr<SparseMatrixInput> open_indicator_matrix(const Comm& comm, const std::string& path,
                                                         const std::string& id_column = "");

}  // namespace kembed::io
