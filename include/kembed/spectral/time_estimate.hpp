#pragma once
/// @file How long a kernel PCA or MDS fit of points should take, stored and
/// matrix-free, from the problem's shape and rates measured on this machine.
///
/// The model counts the busiest rank's work (process (0, 0) holds the most
/// entries): its flops at the rate of a local dgemm of the matrix-free
/// chunk's shape, its kernel map (one exp per entry) at the vector exp's
/// rate, and its stored matrix read once per product at a streaming read
/// rate. Communication, reading the input and writing the results are not
/// counted, and each rank is assumed to have one core like the one that
/// measured the rates.
#include <string>

#include "kembed/spectral/memory_plan.hpp"

namespace kembed::spectral {

/// Rates of the three kinds of work a fit spends its time in.
struct MachineRates {
  double gemm_flops = 0;   ///< flop/s of dgemm on a kChunkRows x nb x d Gram tile
  double map_entries = 0;  ///< entries/s of the rbf map (exp of a squared distance)
  double read_bytes = 0;   ///< bytes/s of a streaming read far beyond the caches
  int gemm_depth = 0;      ///< the inner dimension the dgemm rate was measured at: d, at least 64
};

/// Measures the three rates on this rank alone (no communication), in about
/// 0.2 s of CPU: dgemm C = A B^T with A 2048 x d and B 64 x d (the
/// matrix-free chunk's Gram product, d clamped to [1, 1024]), the rbf map
/// over a 2048 x 64 tile column by column, and a sum over a 32 MB buffer.
/// Each is the best of three timings (the machine may be shared).
MachineRates measure_machine_rates(std::int64_t d);

/// Products of the block Krylov solver the estimate assumes for the top k:
/// bench/matrix_free.sh measured 12 at n = 8000 and 16,000 (rbf, Gaussian
/// d = 64, k = 10, block widths 24 to 48) and 15 at width 16.
inline constexpr int kAssumedProducts = 12;

/// Seconds of one fit's phases on the busiest rank.
struct TimeEstimate {
  // Stored (krylov on the assembled matrix; absent for evd, evr, elpa).
  bool stored_modelled = false;
  double assembly = 0;        ///< the kernel entries computed once
  double stored_product = 0;  ///< one product: the stored share read, 2 b flops per use
  // Matrix-free (--storage none).
  double free_product = 0;    ///< one product: every entry recomputed, 4 b flops per entry
  double centering_pass = 0;  ///< the row sums' pass and the norm's (recomputation only)
  int products = kAssumedProducts;
  int stored_width = 0, free_width = 0;  ///< the Krylov block widths b

  double stored_total() const { return assembly + products * stored_product; }
  double free_total() const { return products * free_product + 2 * centering_pass; }
};

/// The estimate for `shape` (kernel PCA or MDS of points: shape.d >= 1),
/// whatever storage it chose: the stored alternative (lower blocks, krylov
/// with the stored path's default width) and the matrix-free one
/// (matrix_free_krylov's width). @pre shape.d >= 1 and every rate > 0.
TimeEstimate estimate_time(const ProblemShape& shape, const MachineRates& rates,
                           int products = kAssumedProducts);

/// The plan's lines: "estimated time: ..." with both alternatives (the one
/// `shape` runs marked), the assumed product count, then the measured rates
/// and what the estimate leaves out. Each line ends in a newline.
std::string describe_time_estimate(const ProblemShape& shape, const TimeEstimate& estimate,
                                   const MachineRates& rates);

}  // namespace kembed::spectral
