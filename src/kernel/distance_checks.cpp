#include "kembed/kernel/distance_checks.hpp"

#include <cfloat>
#include <cmath>
#include <limits>

#include "kembed/core/error.hpp"
#include "kembed/io/format_double.hpp"
#include "kembed/kernel/first_entry.hpp"
#include "kembed/linalg/scalapack.hpp"
#include "kembed/linalg/symmetry.hpp"

namespace kembed::kernel {

namespace {

// Collective: the first entry (row-major global order) satisfying `bad`,
// over all ranks, with its value sent by its owner.
template <class Predicate>
std::optional<Offender> first_entry(const DistMatrix& d, Predicate&& bad) {
  const auto found = kernel::first_flagged_entry(d, [&](double v, int li, int lj) {
    return bad(d.row_dist().to_global(li), d.col_dist().to_global(lj), v) ? 1 : 0;
  });
  if (!found) return std::nullopt;
  return Offender{found->i, found->j, found->value};
}

double largest_magnitude(const DistMatrix& d) {
  double largest = 0;
  for (int lj = 0; lj < d.local_cols(); ++lj)
    for (int li = 0; li < d.local_rows(); ++li)
      largest = std::max(largest, std::abs(d.local(li, lj)));
  return d.grid().comm().max(largest);
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

double largest_squarable_distance(std::int64_t n) {
  return std::sqrt(DBL_MAX / (4.0 * static_cast<double>(std::max<std::int64_t>(n, 1))));
}

void check_squares(const DistMatrix& d, const std::string& source, std::int64_t column_offset) {
  const std::int64_t n = std::max(d.rows(), d.cols());
  const double limit = largest_squarable_distance(n);
  const auto e = first_entry(d, [&](std::int64_t, std::int64_t, double v) {
    return !(std::abs(v) <= limit);
  });
  if (!e) return;
  const std::string where = source + ": entry (" + std::to_string(e->i + 1) + ", " +
                            std::to_string(e->j + column_offset + 1) + ") (1-based)";
  if (!std::isfinite(e->value))
    agree(d.grid().comm(), where + " is not finite (the distance overflows: values too large; "
                                   "rescale the data)");
  agree(d.grid().comm(),
        where + " is " + io::format_double(e->value) + ": MDS squares the distances and sums " +
            std::to_string(n) + " of them, which overflows above " + io::format_double(limit) +
            " (values too large; rescale the data)");
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
                    ", " + std::to_string(e->j + 1) + ") is " + io::format_double(e->value) +
                    ", but the distance of a point to itself must be 0 (1-based)");
  if (auto e = find_negative(d))
    agree(comm, source + ": not a distance matrix: entry (" + std::to_string(e->i + 1) + ", " +
                    std::to_string(e->j + 1) + ") is " + io::format_double(e->value) +
                    ", but distances must be non-negative (1-based)");
  if (symmetrize_input) {
    check.max_asymmetry = symmetrize(d);
    check_squares(d, source);
    return check;
  }
  if (auto a = find_asymmetry(d, kDistanceTolerance))
    agree(comm, source + ": not a distance matrix: entry (" + std::to_string(a->i + 1) + ", " +
                    std::to_string(a->j + 1) + ") is " + io::format_double(a->a_ij) + " but (" +
                    std::to_string(a->j + 1) + ", " + std::to_string(a->i + 1) + ") is " +
                    io::format_double(a->a_ji) + " (1-based), not symmetric within a relative " +
                    io::format_double(kDistanceTolerance) + "; --symmetrize averages D and D^T instead");
  check_squares(d, source);
  return check;
}

}  // namespace kembed::kernel
