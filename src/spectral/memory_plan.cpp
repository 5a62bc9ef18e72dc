#include "kembed/spectral/memory_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include "kembed/core/error.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/linalg/block_cyclic.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed {

namespace {
constexpr double kDouble = 8;
// Resident size of an MPI process with kembed's libraries before any work.
constexpr double kBaseline = 25e6;
}  // namespace

double MemoryPlan::total() const {
  double sum = 0;
  for (const auto& item : items) sum += item.second;
  return sum;
}

std::string MemoryPlan::describe() const {
  std::ostringstream out;
  for (const auto& [what, bytes] : items) out << "  " << what << ": " << human_bytes(bytes) << "\n";
  out << "  total: " << human_bytes(total()) << " per rank\n";
  return out.str();
}

MemoryPlan plan_memory(const ProblemShape& s) {
  const int nb = s.block_size;
  const double np = BlockCyclic1D(s.n, nb, 0, s.nprow).local_size();
  const double nq = BlockCyclic1D(s.n, nb, 0, s.npcol).local_size();
  const double local = np * nq * kDouble;  // one n x n matrix on process (0, 0)
  const double n = static_cast<double>(s.n);
  MemoryPlan plan;
  plan.items.push_back({"process baseline", kBaseline});
  plan.items.push_back({"n x n matrix (local block)", local});
  if (s.d > 0) plan.items.push_back({"data panels", (np + nq) * s.d * kDouble});
  if (s.data_rows > 0)
    plan.items.push_back({"data matrix (local block)",
                          double(BlockCyclic1D(s.data_rows, nb, 0, s.nprow).local_size()) *
                              BlockCyclic1D(s.data_cols, nb, 0, s.npcol).local_size() * kDouble});
  switch (resolve_solver(s.solver, s.n, s.k)) {
    case Solver::automatic:  // resolved above
    case Solver::evd:
      // pdsyevd: Z, and LWORK >= max(1 + 6n + 2 np nq, ...) + 2n.
      plan.items.push_back({"eigenvectors (n x n)", local});
      plan.items.push_back({"pdsyevd workspace", (2 * np * nq + 8 * n) * kDouble});
      break;
    case Solver::evr: {
      // pdsyevr: Z, and its tridiagonal reduction's optimal workspace
      // (nps + 4) nps with nps ~ n / sqrt(P Q).
      const double nps = n / std::floor(std::sqrt(double(s.nprow) * s.npcol));
      plan.items.push_back({"eigenvectors (n x n)", local});
      // The 1.5 local blocks more were measured (n = 3000, 6000 on 2 ranks).
      plan.items.push_back({"pdsyevr workspace",
                            ((nps + 4) * nps + 30 * n) * kDouble + 1.5 * local});
      break;
    }
    case Solver::elpa:
      plan.items.push_back({"eigenvectors (n x n)", local});
      // ELPA's two-stage solver allocates internally; 2.5 local blocks were
      // measured (n = 3000, 6000 on 2 ranks).
      plan.items.push_back({"ELPA workspace", 2.5 * local});
      break;
    case Solver::krylov: {
      const int b = krylov_block_width(s.k, KrylovSettings{});
      const int q = krylov_depth(b, KrylovSettings{});
      const double rows = std::ceil(n / (double(s.nprow) * s.npcol));
      plan.items.push_back({"krylov basis and products", 2 * rows * q * b * kDouble});
      plan.items.push_back({"krylov 2-D blocks", 2 * np * b * kDouble});
      break;
    }
  }
  plan.items.push_back({"results gathered on rank 0",
                        3 * std::max(n, double(s.data_rows)) * s.k * kDouble});
  return plan;
}

std::string human_bytes(double bytes) {
  if (!std::isfinite(bytes)) return "unknown";
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000 && u < 4) bytes /= 1000, ++u;
  char text[32];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return text;
}

double parse_bytes(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  double scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  if (unit == "k" || unit == "K" || unit == "kB" || unit == "KB") scale = 1e3;
  if (unit == "M" || unit == "MB") scale = 1e6;
  if (unit == "G" || unit == "GB") scale = 1e9;
  if (unit == "T" || unit == "TB") scale = 1e12;
  if (used == 0 || scale == 0 || !(value > 0))
    throw Error("cannot read the memory size '" + text + "' (examples: 2G, 512M, 1.5T)");
  return value * scale;
}

double available_memory_per_rank(const Comm& world) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(world.get(), MPI_COMM_TYPE_SHARED, world.rank(), MPI_INFO_NULL, &node);
  const Comm on_node = Comm::adopt(node);
  double available = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") available = kib * 1024;
  // Unknown (no /proc/meminfo): no limit rather than a refusal.
  const double share = available > 0 ? available / on_node.size()
                                     : std::numeric_limits<double>::infinity();
  // The smallest share on any node, so every rank decides alike.
  return -world.max(-share);
}

std::string memory_shortfall(const ProblemShape& shape, int ranks, double limit) {
  const MemoryPlan plan = plan_memory(shape);
  std::string error;
  if (plan.total() > limit) {
    error = "not enough memory: this run needs about " + human_bytes(plan.total()) +
            " per rank (" + std::to_string(ranks) + " ranks), but " + human_bytes(limit) +
            " is available per rank (--max-memory-per-rank)";
    ProblemShape bigger = shape;
    for (int p = 2 * ranks; p <= (1 << 20); p *= 2) {
      const auto grid = BlacsGrid::near_square(p);
      bigger.nprow = grid.first;
      bigger.npcol = grid.second;
      if (plan_memory(bigger).total() <= limit) {
        error += "; " + std::to_string(p) + " ranks would fit";
        break;
      }
    }
    ProblemShape krylov = shape;
    krylov.solver = Solver::krylov;
    if (resolve_solver(shape.solver, shape.n, shape.k) != Solver::krylov &&
        plan_memory(krylov).total() <= limit)
      error += "; --solver krylov would fit here (" + human_bytes(plan_memory(krylov).total()) +
               " per rank)";
    error += "\n" + plan.describe();
  }
  return error;
}

MemoryCheck check_memory(const ProblemShape& shape, double limit, const Comm& comm) {
  if (limit <= 0) limit = available_memory_per_rank(comm);
  agree(comm, memory_shortfall(shape, comm.size(), limit));
  return {plan_memory(shape).total(), limit};
}

}  // namespace kembed
