#pragma once
/// @file The first entry of a distributed matrix that breaks a rule, agreed
/// on every rank, so that every rank can throw the same error naming it.
#include <cstdint>
#include <limits>
#include <optional>

#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::kernel {

/// An entry of a distributed matrix and what was wrong with it.
struct FlaggedEntry {
  std::int64_t i = 0, j = 0;  ///< 0-based global indices
  double value = 0;           ///< the entry as its owner holds it
  int code = 0;               ///< what `classify` returned for it (non-zero)
};

/// Collective over a's grid: the entry with the smallest row-major global
/// index i * cols + j for which `classify(value, li, lj)` returns a non-zero
/// code (evaluated on its owner, with local indices), or nothing; identical
/// on every rank. With lower-block storage only the stored entries are
/// classified (an entry above the diagonal mirrors one below it).
template <class Classify>
std::optional<FlaggedEntry> first_flagged_entry(const DistMatrix& a, Classify&& classify) {
  constexpr long long kNone = std::numeric_limits<long long>::max();
  long long first = kNone;
  int code = 0;
  double value = 0;
  // Usually nothing is flagged: find that out in one branch-free pass, without
  // the global index arithmetic that costs more than the test itself.
  int any = 0;
  for (int lj = 0; lj < a.local_cols() && a.local_rows() > 0; ++lj) {
    const double* column = a.column(lj);
    for (int li = a.stored_from(lj); li < a.local_rows(); ++li) any |= classify(column[li], li, lj);
  }
  for (int lj = 0; any && lj < a.local_cols(); ++lj) {
    const std::int64_t j = a.col_dist().to_global(lj);
    for (int li = a.stored_from(lj); li < a.local_rows(); ++li) {
      const long long index = a.row_dist().to_global(li) * a.cols() + j;
      if (index >= first) continue;
      if (const int c = classify(a.local(li, lj), li, lj)) {
        first = index;
        code = c;
        value = a.local(li, lj);
      }
    }
  }
  const Comm& comm = a.grid().comm();
  const long long global_first = comm.min(first);
  if (global_first == kNone) return std::nullopt;
  // Only the owner contributes, so the sums are its values exactly.
  const bool owner = first == global_first;
  FlaggedEntry found;
  found.i = global_first / a.cols();
  found.j = global_first % a.cols();
  found.code = static_cast<int>(comm.sum(owner ? static_cast<long long>(code) : 0LL));
  found.value = comm.sum(owner ? value : 0.0);
  return found;
}

}  // namespace kembed::kernel
