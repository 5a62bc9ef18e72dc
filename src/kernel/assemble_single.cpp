#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "kembed/core/error.hpp"
#include "kembed/kernel/assemble.hpp"
#include "kembed/kernel/first_entry.hpp"

namespace kembed::kernel {

namespace {

// Rounds a slab's columns into k's local columns from `first_local` on;
// returns the largest magnitude it saw.
double store_rounded(const DistMatrix& slab, SingleMatrix& k, int first_local) {
  double largest = 0;
  for (int lj = 0; lj < slab.local_cols(); ++lj) {
    const double* from = slab.column(lj);
    float* to = k.column(first_local + lj);
    for (int li = slab.stored_from(lj); li < slab.local_rows(); ++li) {
      const double v = from[li], magnitude = std::abs(v);
      largest = std::max(largest, magnitude);
      // Beyond float's range the conversion is undefined: 0 is stored, and
      // the caller's error follows.
      to[li] = magnitude < FLT_MIN || !(magnitude <= FLT_MAX) ? 0.0f : static_cast<float>(v);
    }
  }
  return largest;
}

// Collective: the agreed Error for the first entry of the slab that float
// cannot hold.
void check_float_range(const DistMatrix& slab, std::int64_t column_offset,
                       const std::string& what) {
  const auto first = first_flagged_entry(
      slab, [](double v, int, int) -> int { return std::abs(v) <= FLT_MAX ? 0 : 1; });
  if (!first) return;
  char value[32];
  std::snprintf(value, sizeof value, "%.6g", first->value);
  agree(slab.grid().comm(),
        what + " (" + std::to_string(first->i + 1) + ", " +
            std::to_string(first->j + column_offset + 1) + ") is " + value +
            ", beyond single precision's range (3.4e38); rescale the data or use --precision "
            "double");
}

}  // namespace

void assemble_in_slabs(const std::vector<double>& col_panel, int d, SingleMatrix& k,
                       LocalSums& sums, std::int64_t slab_entries, const std::string& what,
                       const SlabFill& fill) {
  const BlacsGrid& grid = k.grid();
  const std::int64_t n = k.cols();
  const int nb = k.col_dist().block_size(), q = grid.npcol();
  // A slab is s whole rounds of the process columns' blocks (s q nb global
  // columns from a multiple of q nb), so its block-cyclic columns are k's
  // local columns from first_local = c0 / q on, in the same order. Every rank
  // takes the same slabs (the fills' checks are collective).
  const std::int64_t rows_bound = ((n + nb - 1) / nb + grid.nprow() - 1) / grid.nprow() * nb;
  const std::int64_t entries = slab_entries > 0 ? slab_entries : kDefaultSlabEntries;
  const std::int64_t s = std::max<std::int64_t>(1, entries / (rows_bound * nb));
  const std::int64_t width = s * q * nb;
  sums.rows.assign(k.local_rows(), 0.0);
  sums.cols.assign(k.local_cols(), 0.0);
  LocalSums slab_sums;
  std::vector<double> slab_panel;
  // One block serves every slab of the same width: a fresh block per slab
  // would be faulted in afresh each time.
  std::optional<DistMatrix> reused;
  for (std::int64_t c0 = 0; c0 < n; c0 += width) {
    const std::int64_t cols = std::min(width, n - c0);
    if (!reused || reused->cols() != cols)
      reused.emplace(
          DistMatrix::uninitialized(grid, k.rows(), cols, k.row_dist().block_size(), nb));
    DistMatrix& slab = *reused;
    // With lower-block storage of k, the slab computes and stores k's stored
    // rows only (c0 is a whole number of blocks).
    if (k.storage() == Storage::lower_blocks) slab.set_lower_slab(c0 / nb);
    const int first_local = static_cast<int>(c0 / q);
    slab_panel.assign(col_panel.begin() + std::size_t(first_local) * d,
                      col_panel.begin() + std::size_t(first_local + slab.local_cols()) * d);
    fill(slab, slab_panel, c0, slab_sums);
    // One reduction per slab; the search for the entry only when one is out of range.
    if (!(grid.comm().max(store_rounded(slab, k, first_local)) <= FLT_MAX))
      check_float_range(slab, c0, what);
    for (int li = 0; li < k.local_rows(); ++li) sums.rows[li] += slab_sums.rows[li];
    std::copy(slab_sums.cols.begin(), slab_sums.cols.end(), sums.cols.begin() + first_local);
  }
}

void assemble_kernel(const Kernel& kernel, const std::vector<double>& row_panel,
                     const std::vector<double>& col_panel, int d, SingleMatrix& k, LocalSums& sums,
                     std::int64_t slab_entries) {
  assemble_in_slabs(col_panel, d, k, sums, slab_entries, "kernel entry",
                    [&](DistMatrix& slab, const std::vector<double>& slab_panel,
                        std::int64_t column_offset, LocalSums& slab_sums) {
                      assemble_kernel(kernel, row_panel, slab_panel, d, slab, &slab_sums,
                                      column_offset);
                    });
}

}  // namespace kembed::kernel
