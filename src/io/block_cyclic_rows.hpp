#pragma once
/// @file Private: index arithmetic of the block-cyclic reads (source process
/// 0), and the one-pass finiteness check every binary reader uses.
#include <cstdint>
#include <string>
#include <vector>

#include "kembed/io/matrix_file.hpp"

namespace kembed::io {

/// Number of the `n` indices dealt in blocks of `nb` over `np` processes that
/// process `p` owns (ScaLAPACK's NUMROC).
std::int64_t owned_count(std::int64_t n, int nb, int p, int np);

/// Global index of local index `l` of process `p`.
inline std::int64_t owned_to_global(std::int64_t l, int nb, int p, int np) {
  return (l / nb) * nb * np + std::int64_t{p} * nb + l % nb;
}

/// Index of the first non-finite value of `values[0, count)`, or -1. One
/// branch-free pass over the exponent bits (vectorized), then a search only
/// when something was found.
std::int64_t first_non_finite(const double* values, std::int64_t count);

/// `count` zeros in memory that asks the kernel for transparent huge pages
/// where it can (Linux), so that first touching a large read buffer costs a
/// third of what 4 KB pages cost.
std::vector<double> fresh_values(std::size_t count);

/// Resizes `values` to `count`, reallocating (with the huge-page advice of
/// fresh_values) only when it must grow; the contents are not kept.
void grow(std::vector<double>& values, std::size_t count);

/// Transposes the columns [first_col, first_col + width) of the row-major
/// `rows` x `ld_in` matrix `in` (starting at its column 0) into the
/// column-major rows x width matrix `out` (leading dimension ld_out), in
/// cache-sized tiles.
void transpose_into(const double* in, std::int64_t rows, std::int64_t ld_in, std::int64_t first_col,
                    std::int64_t width, double* out, std::int64_t ld_out);

/// Rows per group of a block-cyclic read: about `target` bytes of
/// `row_bytes` each, at least one.
std::int64_t rows_per_group(std::int64_t row_bytes, std::int64_t target = std::int64_t{64} << 20);

/// "PATH: row I, column J (1-based): non-finite value" for the global 0-based
/// (row, col); `where` is the file (and dataset) as messages name it.
std::string non_finite_message(const std::string& where, std::int64_t row, std::int64_t col);

}  // namespace kembed::io
