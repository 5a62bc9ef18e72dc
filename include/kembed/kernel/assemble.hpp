#pragma once
/// @file Kernel matrices assembled block-locally in block-cyclic layout.
#include <cstdint>
#include <functional>
#include <vector>

#include "kembed/kernel/kernel.hpp"
#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::kernel {

/// Sums of a rank's block of a matrix, taken while assembly writes it, so
/// that centering needs no pass of its own to find the means.
struct LocalSums {
  /// Per local row, over the local columns, added in column order.
  std::vector<double> rows;
  /// Per local column, over the local rows.
  std::vector<double> cols;
};

/// The sums of k's local block in one read pass, in exactly the order and
/// rounding assemble_kernel's fused sums use (so either gives the same bits).
LocalSums local_sums(const DistMatrix& k);

/// Fills k(i, j) = kernel(x_i, y_j) for this rank's block of `k`, where
/// `row_panel` holds the x rows of k's local rows and `col_panel` the y rows
/// of its local columns (both row-major with `d` columns). Dot-product kernels
/// use one local dgemm and one elementwise pass. Rows whose squared norms
/// overflow (or whose Gram-trick distances would lose their digits) are
/// evaluated from differences instead for rbf, laplacian and cosine, so
/// e.g. distinct points near 1e200 give the identity under rbf.
/// Collective over k's grid for linear, poly and sigmoid (no communication
/// for the others): an entry that is not finite, or too large to sum over a
/// row, is an agreed Error naming the first such (i, j), 1-based, and the cause.
/// When `sums` is given it receives the local sums of the finished block:
/// for rbf they are taken column by column as the block is written (while
/// each column is in cache), for the other kernels by one pass at the end.
/// `column_offset` is the global index of k's column 0 when k is a slab of
/// columns of a larger matrix (messages name the larger matrix's entries).
/// @pre kernel.type != precomputed, gamma resolved (with_default_gamma)
void assemble_kernel(const Kernel& kernel, const std::vector<double>& row_panel,
                     const std::vector<double>& col_panel, int d, DistMatrix& k,
                     LocalSums* sums = nullptr, std::int64_t column_offset = 0);

/// Fills the double slab (an n x w matrix on k's grid whose columns are
/// columns column_offset.. of k, with `slab_panel` the y rows of its local
/// columns) and the slab's local sums.
using SlabFill = std::function<void(DistMatrix& slab, const std::vector<double>& slab_panel,
                                    std::int64_t column_offset, LocalSums& slab_sums)>;

/// Double entries per rank in one slab of assemble_in_slabs: 1 Mi (8 MB),
/// small beside the float matrix it fills, wide enough for assembly's dgemm,
/// and read back for rounding while much of it is still in cache: at
/// n = 16000 on 2 ranks the assembly took 1.0 s with these slabs against
/// 1.25 s with 32 MB ones. (A slab holds at least one block column of every
/// local row, so it is larger when the local rows times the block size are.)
constexpr std::int64_t kDefaultSlabEntries = std::int64_t{1} << 20;

/// Collective: single-precision storage of a matrix computed in double a
/// slab of columns at a time by `fill` (at most about `slab_entries`, 0:
/// 1 Mi, double entries per rank in a slab; at least one block column per
/// process column), each entry rounded once to float (values below
/// float's normal range become 0). `sums` receives the local sums of the
/// double entries (rows summed slab after slab). An entry beyond float's
/// range is an agreed Error: "<what> (i, j) is V, beyond single precision's
/// range ...", 1-based, the first such entry of its slab.
/// @pre k square with square blocks; col_panel holds the rows of k's local columns
void assemble_in_slabs(const std::vector<double>& col_panel, int d, SingleMatrix& k,
                       LocalSums& sums, std::int64_t slab_entries, const std::string& what,
                       const SlabFill& fill);

/// The same kernel stored in single precision (`--precision single`): k is
/// assembled in double, a slab of columns at a time (a slab holds at most
/// about 8 MB per rank), and each entry rounded once to float; values
/// below float's normal range become 0 (they would slow sgemm, and their
/// absolute change is below 1.2e-38). `sums` (required) receives the local
/// sums of the double entries. Collective: an entry beyond float's range
/// (linear, poly, sigmoid) is an agreed Error naming the first such (i, j)
/// of its slab, 1-based, with the advice to rescale or use double precision.
/// `slab_entries` bounds a slab's double entries per rank (0: 1 Mi).
/// @pre as assemble_kernel; k square with square blocks
void assemble_kernel(const Kernel& kernel, const std::vector<double>& row_panel,
                     const std::vector<double>& col_panel, int d, SingleMatrix& k, LocalSums& sums,
                     std::int64_t slab_entries = 0);

}  // namespace kembed::kernel
