#include "kembed/spectral/time_estimate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "kembed/kernel/vector_exp.hpp"
#include "kembed/linalg/block_product.hpp"
#include "kembed/linalg/lapack.hpp"
#include "kembed/spectral/krylov.hpp"
#include "kembed/spectral/matrix_storage.hpp"

namespace kembed::spectral {

namespace {

constexpr int kTileCols = 64;  // the default block size: a chunk's columns
// Beyond the last-level cache of most machines kembed runs on (VMs may
// report a larger shared one: the rate is then optimistic). Its pages are
// touched first, which costs more than the reads on a VM (about 0.07 s here).
constexpr std::size_t kStreamDoubles = std::size_t{4} << 20;  // 32 MB

// The best of three timings of `work`, in seconds.
template <class Work>
double best_of_three(Work&& work) {
  double best = 1e300;
  for (int trial = 0; trial < 3; ++trial) {
    const auto start = std::chrono::steady_clock::now();
    work();
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count());
  }
  return std::max(best, 1e-9);
}

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, s < 10 ? "%.2g s" : "%.0f s", s);
  return text;
}

std::string rate(double value, const char* unit) {
  char text[48];
  std::snprintf(text, sizeof text, "%.1f %s", value, unit);
  return text;
}

}  // namespace

MachineRates measure_machine_rates(std::int64_t d) {
  MachineRates rates;
  const int rows = BlockProduct::kChunkRows;
  // At least 64 deep: the products (2b flops per entry, dgemm with a depth
  // of a block, 64 and more) run at this rate too, and below 64 the Gram
  // part (2d flops) is a small share of an entry's cost beside the map.
  // (At d = 3 a 2048 x 64 x 3 dgemm ran at 0.1 GFLOP/s, all call overhead,
  // and priced a 20,000-point MDS at 473 s.)
  const int depth = static_cast<int>(std::clamp<std::int64_t>(d, 64, 1024));
  rates.gemm_depth = depth;

  // The Gram product of one recomputed chunk, repeated to about 1e8 flops.
  std::vector<double> a(std::size_t(rows) * depth), b(std::size_t(kTileCols) * depth),
      c(std::size_t(rows) * kTileCols);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = 1.0 / double(1 + i % 97);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = 1.0 / double(1 + i % 89);
  const double tile_flops = 2.0 * rows * kTileCols * depth;
  const int gemm_reps = std::max(1, static_cast<int>(1e8 / tile_flops));
  const double gemm_time = best_of_three([&] {
    for (int r = 0; r < gemm_reps; ++r)
      lapack::gemm('N', 'T', rows, kTileCols, depth, 1.0, a.data(), rows, b.data(), kTileCols, 0.0,
                   c.data(), rows);
  });
  rates.gemm_flops = tile_flops * gemm_reps / gemm_time;

  // The rbf map of the same tile, column by column as PointTiles maps it;
  // applied again to its own output, every value stays in (0, 1].
  std::vector<double> norms(rows, 1.0);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = 0.5 / double(1 + i % 13);
  constexpr int kMapReps = 8;
  const double map_time = best_of_three([&] {
    for (int r = 0; r < kMapReps; ++r)
      for (int j = 0; j < kTileCols; ++j)
        kernel::exp_neg_squared_distances(c.data() + std::size_t(j) * rows, norms.data(), 1.0, 0.5,
                                          rows);
  });
  rates.map_entries = double(rows) * kTileCols * kMapReps / map_time;

  // A streaming read, as a stored product reads its share of the matrix;
  // eight sums keep the additions from limiting it.
  std::vector<double> stream(kStreamDoubles, 1.0);
  double sink = 0;
  const double read_time = best_of_three([&] {
    double s[8] = {};
    for (std::size_t i = 0; i + 8 <= stream.size(); i += 8)
      for (int l = 0; l < 8; ++l) s[l] += stream[i + l];
    for (double v : s) sink += v;
  });
  rates.read_bytes = double(kStreamDoubles) * sizeof(double) / read_time;
  // The sums are used, so the reads cannot be dropped.
  if (!(sink > 0)) rates.read_bytes = 0;
  return rates;
}

TimeEstimate estimate_time(const ProblemShape& shape, const MachineRates& rates, int products) {
  TimeEstimate e;
  e.products = products;
  const double d = static_cast<double>(shape.d);
  // Seconds per entry of recomputing it: the Gram product's 2 d flops and the map.
  const double recompute = 2 * d / rates.gemm_flops + 1 / rates.map_entries;

  // Stored: the lower blocks a krylov fit of points keeps (or the whole
  // local block where the shape asked for full storage).
  ProblemShape stored = shape;
  stored.matrix_free = false;
  if (shape.matrix_free) stored.lower_storage = true;
  e.stored_modelled = stored.single_precision || shape.matrix_free ||
                      resolve_solver(stored.solver, stored.n, stored.k) == Solver::krylov;
  e.stored_width = krylov_block_width(shape.k, KrylovSettings{});
  const double held = busiest_rank_entries(stored);
  const double bytes = stored.single_precision ? 4 : 8;
  // With lower storage an entry serves K_IJ X_J and K_IJ^T X_I.
  const double uses = stored.lower_storage ? 2 : 1;
  e.assembly = held * recompute;
  e.stored_product =
      held * (bytes / rates.read_bytes + uses * 2 * e.stored_width / rates.gemm_flops);

  // Matrix-free: the lower-block traversal, every entry recomputed and used twice.
  ProblemShape none = shape;
  none.matrix_free = true;
  none.lower_storage = false;
  e.free_width = matrix_free_krylov(KrylovSettings{}, shape.k).block;
  const double traversed = busiest_rank_entries(none);
  e.centering_pass = traversed * recompute;
  e.free_product = traversed * (recompute + 4.0 * e.free_width / rates.gemm_flops);
  return e;
}

std::string describe_time_estimate(const ProblemShape& shape, const TimeEstimate& e,
                                   const MachineRates& rates) {
  const std::string products = std::to_string(e.products) + " products";
  std::string stored =
      e.stored_modelled ? seconds(e.stored_total()) + " stored (assembly " + seconds(e.assembly) +
                              ", " + products + " of " + seconds(e.stored_product) +
                              ", b = " + std::to_string(e.stored_width) + ")"
                        : "stored: not estimated for the dense solver (" +
                              solver_name(resolve_solver(shape.solver, shape.n, shape.k)) +
                              "; the estimate models krylov)";
  std::string free = seconds(e.free_total()) + " matrix-free (" + products + " of " +
                     seconds(e.free_product) + ", b = " + std::to_string(e.free_width) +
                     ", and 2 centering passes of " + seconds(e.centering_pass) + ")";
  (shape.matrix_free ? free : stored) += " [this run]";
  const double d = static_cast<double>(shape.d);
  return "estimated time of the busiest rank: " + stored + ", " + free + "\n" +
         "  assumed: " + products + " for the top " + std::to_string(shape.k) +
         " (as bench/matrix_free.sh measured for k = 10); per entry " +
         std::to_string(static_cast<long long>(2 * d)) +
         " Gram flops and one exp to compute it, 2 b flops per use in a product\n" +
         "  rates measured here: dgemm " + std::to_string(BlockProduct::kChunkRows) + " x " +
         std::to_string(kTileCols) + " x " + std::to_string(rates.gemm_depth) + " " +
         rate(rates.gemm_flops / 1e9, "GFLOP/s") + ", rbf map " +
         rate(rates.map_entries / 1e9, "G entries/s") + ", memory read " +
         rate(rates.read_bytes / 1e9, "GB/s") +
         "; an estimate for ranks that each have one core like this one (communication, "
         "reading and writing not counted)\n";
}

}  // namespace kembed::spectral
