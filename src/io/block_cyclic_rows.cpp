#include "io/block_cyclic_rows.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kembed/core/error.hpp"

namespace kembed::io {

std::int64_t owned_count(std::int64_t n, int nb, int p, int np) {
  const std::int64_t blocks = n / nb, whole = blocks / np, extra = blocks % np;
  std::int64_t count = whole * nb;
  if (p < extra) count += nb;
  else if (p == extra) count += n % nb;
  return count;
}

std::int64_t first_non_finite(const double* values, std::int64_t count) {
  // An exponent of all ones is Inf or NaN; adding 2^52 to the exponent bits
  // carries into bit 63 exactly then. OR-ing those sums is branch-free and
  // uses only SSE2 integer operations, so the compiler vectorizes it (an
  // early-exit search over std::isfinite, or a 64-bit compare, does not).
  constexpr std::uint64_t exponent = 0x7ff0000000000000ULL;
  std::uint64_t carries = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    std::uint64_t bits;
    std::memcpy(&bits, values + i, sizeof bits);
    carries |= (bits & exponent) + (std::uint64_t{1} << 52);
  }
  const bool any = (carries >> 63) != 0;
  if (!any) return -1;
  return std::find_if(values, values + count, [](double v) { return !std::isfinite(v); }) - values;
}

std::vector<double> fresh_values(std::size_t count) {
  std::vector<double> values;
  values.reserve(count);
#ifdef MADV_HUGEPAGE
  // Only the 2 MB-aligned interior can be huge; a failure just leaves 4 KB pages.
  constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(values.data());
  const std::uintptr_t first = (begin + huge - 1) & ~(huge - 1);
  const std::uintptr_t last = (begin + count * sizeof(double)) & ~(huge - 1);
  if (count * sizeof(double) >= 4 * huge && last > first)
    ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#endif
  values.resize(count);
  return values;
}

void grow(std::vector<double>& values, std::size_t count) {
  if (values.capacity() < count) values = fresh_values(count);
  values.resize(count);
}

void transpose_into(const double* in, std::int64_t rows, std::int64_t ld_in, std::int64_t first_col,
                    std::int64_t width, double* out, std::int64_t ld_out) {
  constexpr std::int64_t tile = 32;
  for (std::int64_t i0 = 0; i0 < rows; i0 += tile) {
    const std::int64_t i1 = std::min(rows, i0 + tile);
    for (std::int64_t j0 = 0; j0 < width; j0 += tile) {
      const std::int64_t j1 = std::min(width, j0 + tile);
      for (std::int64_t j = j0; j < j1; ++j) {
        const double* from = in + first_col + j;
        double* to = out + j * ld_out;
        for (std::int64_t i = i0; i < i1; ++i) to[i] = from[i * ld_in];
      }
    }
  }
}

std::int64_t rows_per_group(std::int64_t row_bytes, std::int64_t target) {
  return std::max<std::int64_t>(1, target / std::max<std::int64_t>(1, row_bytes));
}

std::string non_finite_message(const std::string& where, std::int64_t row, std::int64_t col) {
  return where + ": row " + std::to_string(row + 1) + ", column " + std::to_string(col + 1) +
         " (1-based): non-finite value";
}

void MatrixFile::read_block_cyclic(const BlockCyclicLayout& layout, const LocalRowsSink& sink) {
  // A rank's block rows come one stripe (row_block x cols) per step; many
  // steps go into one collective read_rows of up to about 64 MB per rank.
  // Every rank makes the same number of reads; a rank whose blocks are
  // exhausted asks for nothing.
  const int nb = layout.row_block, cb = layout.col_block;
  const std::int64_t stride = std::int64_t{nb} * layout.nprow;
  const std::int64_t steps = (rows_ + stride - 1) / stride;
  const std::int64_t local_cols = owned_count(cols_, cb, layout.mycol, layout.npcol);
  const std::int64_t group = std::max<std::int64_t>(1, rows_per_group(std::int64_t{nb} * cols_ * 8));
  std::vector<double> mine;
  std::int64_t local_row = 0;
  for (std::int64_t first = 0; first < steps; first += group) {
    std::vector<RowRange> want;
    for (std::int64_t step = first; step < std::min(steps, first + group); ++step) {
      const std::int64_t begin = step * stride + std::int64_t{layout.myrow} * nb;
      if (begin < rows_) want.push_back({begin, std::min(begin + nb, rows_)});
    }
    const std::vector<double> stripes = read_rows(want);
    const std::int64_t count = static_cast<std::int64_t>(stripes.size()) / std::max<std::int64_t>(1, cols_);
    grow(mine, static_cast<std::size_t>(count * local_cols));
    // Whole column blocks at a time: each is contiguous in a file row.
    for (std::int64_t lj = 0; lj < local_cols; lj += cb)
      transpose_into(stripes.data(), count, cols_, owned_to_global(lj, cb, layout.mycol, layout.npcol),
                     std::min<std::int64_t>(cb, local_cols - lj), mine.data() + lj * count, count);
    if (count > 0) sink(local_row, count, mine.data());
    local_row += count;
  }
}

}  // namespace kembed::io
