#include "kembed/linalg/symmetry.hpp"

#include <cmath>
#include <limits>

#include "kembed/linalg/scalapack.hpp"

namespace kembed {

std::optional<Asymmetry> find_asymmetry(const DistMatrix& a, double tolerance) {
  DistMatrix t(a.grid(), a.cols(), a.rows(), a.row_dist().block_size(),
               a.col_dist().block_size());
  scalapack::transpose(a, t);
  double largest = 0;
  for (int lj = 0; lj < a.local_cols(); ++lj)
    for (int li = 0; li < a.local_rows(); ++li) largest = std::max(largest, std::abs(a.local(li, lj)));
  const Comm& comm = a.grid().comm();
  const double bound = tolerance * comm.max(largest);
  const long long none = std::numeric_limits<long long>::max();
  long long first = none;
  for (int lj = 0; lj < a.local_cols(); ++lj) {
    const std::int64_t j = a.col_dist().to_global(lj);
    for (int li = 0; li < a.local_rows(); ++li) {
      const std::int64_t i = a.row_dist().to_global(li);
      if (i > j && !(std::abs(a.local(li, lj) - t.local(li, lj)) <= bound)) {
        first = std::min<long long>(first, j * a.rows() + i);
        break;  // later rows of this column come after it
      }
    }
  }
  first = static_cast<long long>(-comm.max(static_cast<long long>(-first)));
  if (first == none) return std::nullopt;
  Asymmetry found;
  found.i = first % a.rows();
  found.j = first / a.rows();
  // The owner of (i, j) sends both values to everyone.
  double values[2] = {0, 0};
  if (a.row_dist().is_local(found.i) && a.col_dist().is_local(found.j)) {
    const int li = a.row_dist().to_local(found.i), lj = a.col_dist().to_local(found.j);
    values[0] = a.local(li, lj);
    values[1] = t.local(li, lj);
  }
  MPI_Allreduce(MPI_IN_PLACE, values, 2, MPI_DOUBLE, MPI_SUM, comm.get());
  found.a_ij = values[0];
  found.a_ji = values[1];
  return found;
}

}  // namespace kembed
