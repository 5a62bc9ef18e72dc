#include "kembed/spectral/distance_checks.hpp"

#include <cmath>
#include <limits>
#include <sstream>

#include "kembed/core/error.hpp"
#include "kembed/linalg/scalapack.hpp"
#include "kembed/linalg/symmetry.hpp"

namespace kembed {

namespace {

constexpr long long kNone = std::numeric_limits<long long>::max();

// Collective: the first local entry (row-major global order) satisfying
// `bad`, over all ranks, with its value sent by its owner.
template <class Predicate>
std::optional<Offender> first_entry(const DistMatrix& d, Predicate&& bad) {
  long long first = kNone;
  for (int lj = 0; lj < d.local_cols(); ++lj) {
    const std::int64_t j = d.col_dist().to_global(lj);
    for (int li = 0; li < d.local_rows(); ++li) {
      const std::int64_t i = d.row_dist().to_global(li);
      if (bad(i, j, d.local(li, lj))) first = std::min<long long>(first, i * d.cols() + j);
    }
  }
  const Comm& comm = d.grid().comm();
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_LONG_LONG, MPI_MIN, comm.get());
  if (first == kNone) return std::nullopt;
  Offender found;
  found.i = first / d.cols();
  found.j = first % d.cols();
  double value = 0;
  if (d.row_dist().is_local(found.i) && d.col_dist().is_local(found.j))
    value = d.local(d.row_dist().to_local(found.i), d.col_dist().to_local(found.j));
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_SUM, comm.get());
  found.value = value;
  return found;
}

double largest_magnitude(const DistMatrix& d) {
  double largest = 0;
  for (int lj = 0; lj < d.local_cols(); ++lj)
    for (int li = 0; li < d.local_rows(); ++li)
      largest = std::max(largest, std::abs(d.local(li, lj)));
  return d.grid().comm().max(largest);
}

std::string exact(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

}  // namespace

std::optional<Offender> find_nonzero_diagonal(const DistMatrix& d, double tolerance) {
  return first_entry(d, [&](std::int64_t i, std::int64_t j, double v) {
    return i == j && !(std::abs(v) <= tolerance);
  });
}

std::optional<Offender> find_negative(const DistMatrix& d) {
  return first_entry(d, [](std::int64_t, std::int64_t, double v) { return v < 0; });
}

double symmetrize(DistMatrix& d) {
  DistMatrix t(d.grid(), d.cols(), d.rows(), d.row_dist().block_size(), d.col_dist().block_size());
  scalapack::transpose(d, t);
  double worst = 0;
  for (int lj = 0; lj < d.local_cols(); ++lj)
    for (int li = 0; li < d.local_rows(); ++li) {
      worst = std::max(worst, std::abs(d.local(li, lj) - t.local(li, lj)));
      d.local(li, lj) = 0.5 * (d.local(li, lj) + t.local(li, lj));
    }
  return d.grid().comm().max(worst);
}

DistanceCheck validate_distances(DistMatrix& d, const std::string& source, bool symmetrize_input) {
  const Comm& comm = d.grid().comm();
  DistanceCheck check;
  check.largest = largest_magnitude(d);
  const double bound = kDistanceTolerance * check.largest;
  if (auto e = find_nonzero_diagonal(d, bound))
    agree(comm, source + ": not a distance matrix: diagonal entry (" + std::to_string(e->i + 1) +
                    ", " + std::to_string(e->j + 1) + ") is " + exact(e->value) +
                    ", but the distance of a point to itself must be 0 (1-based)");
  if (auto e = find_negative(d))
    agree(comm, source + ": not a distance matrix: entry (" + std::to_string(e->i + 1) + ", " +
                    std::to_string(e->j + 1) + ") is " + exact(e->value) +
                    ", but distances must be non-negative (1-based)");
  if (symmetrize_input) {
    check.max_asymmetry = symmetrize(d);
    return check;
  }
  if (auto a = find_asymmetry(d, kDistanceTolerance))
    agree(comm, source + ": not a distance matrix: entry (" + std::to_string(a->i + 1) + ", " +
                    std::to_string(a->j + 1) + ") is " + exact(a->a_ij) + " but (" +
                    std::to_string(a->j + 1) + ", " + std::to_string(a->i + 1) + ") is " +
                    exact(a->a_ji) + " (1-based), not symmetric within a relative " +
                    exact(kDistanceTolerance) + "; --symmetrize averages D and D^T instead");
  return check;
}

}  // namespace kembed
