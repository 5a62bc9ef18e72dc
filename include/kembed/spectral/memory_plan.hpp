#pragma once
/// @file How much memory a fit needs per rank, before anything large is allocated.
#include <cstdint>
#include <string>
#include <vector>

#include "kembed/spectral/eigensolver.hpp"

namespace kembed {

class Comm;

/// The shape of an n x n decomposition (kernel PCA, MDS, PCA's covariance or
/// Gram matrix) on a P x Q grid.
struct ProblemShape {
  std::int64_t n = 0;  ///< order of the decomposed matrix
  std::int64_t d = 0;  ///< features read into panels (0: the input is the n x n matrix)
  int k = 2;
  int nprow = 1, npcol = 1, block_size = 64;
  Solver solver = Solver::evd;
  /// PCA: the data matrix held block-cyclically during the whole fit
  /// (samples x features; 0 x 0 for kernel PCA and MDS).
  std::int64_t data_rows = 0, data_cols = 0;
};

/// Estimated peak bytes of the busiest rank (process (0, 0) holds the largest
/// blocks), by item, from ScaLAPACK's documented workspace formulas.
struct MemoryPlan {
  std::vector<std::pair<std::string, double>> items;  ///< what, bytes
  double total() const;
  /// One line per item and the total, in human units.
  std::string describe() const;
};

MemoryPlan plan_memory(const ProblemShape& shape);

/// "12.8 GB" style.
std::string human_bytes(double bytes);

/// Parses "2G", "512M", "1.5T" or a plain byte count; throws Error otherwise.
double parse_bytes(const std::string& text);

/// The estimate for the busiest rank and the limit it was checked against.
struct MemoryCheck {
  double estimate = 0, limit = 0;
};

/// Empty if `shape` fits in `limit` bytes per rank with `ranks` ranks;
/// otherwise how much is needed and available, how many ranks (the next
/// power-of-two multiple) or which solver would fit, and the plan.
std::string memory_shortfall(const ProblemShape& shape, int ranks, double limit);

/// Collective: an agreed error, before anything large is allocated, if
/// `shape` needs more than `limit` bytes per rank (0: the node's available
/// memory divided among its ranks). The message says how much is needed,
/// how much there is, how many ranks would fit and whether krylov would.
MemoryCheck check_memory(const ProblemShape& shape, double limit, const Comm& comm);

/// Collective: memory this rank may use: the node's MemAvailable divided by
/// the ranks sharing the node (MPI_Comm_split_type SHARED).
double available_memory_per_rank(const Comm& world);

}  // namespace kembed
