#include "kembed/spectral/sign_convention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace kembed::spectral {

namespace {

// The rule on any layout: `visit(f)` calls f(global row, column, entry&) for
// every entry this rank holds. One pass for the largest magnitude, one for
// the first row tied with it, one for its sign, then the flips.
template <class Visit>
std::vector<double> fix_signs_of_entries(const Comm& comm, std::size_t cols, Visit visit) {
  std::vector<double> largest(cols, 0.0);
  visit([&](std::int64_t, std::size_t j, double& v) {
    largest[j] = std::max(largest[j], std::abs(v));
  });
  comm.max_in_place(largest);
  // The first row index whose magnitude ties with the largest.
  std::vector<long long> first(cols, std::numeric_limits<long long>::max());
  visit([&](std::int64_t i, std::size_t j, double& v) {
    if (std::abs(v) >= largest[j] * (1 - kSignTieTolerance))
      first[j] = std::min<long long>(first[j], i);
  });
  comm.min_in_place(first);
  // The owner of that entry knows its sign.
  std::vector<double> sign(cols, 0.0);
  visit([&](std::int64_t i, std::size_t j, double& v) {
    if (i == first[j]) sign[j] = v < 0 ? -1.0 : 1.0;
  });
  comm.sum_in_place(sign);  // exactly one owner contributes per column
  visit([&](std::int64_t, std::size_t j, double& v) {
    if (sign[j] < 0) v = -v;
  });
  return sign;
}

}  // namespace

std::vector<double> fix_signs(DistMatrix& v) {
  return fix_signs_of_entries(v.grid().comm(), static_cast<std::size_t>(v.cols()), [&](auto&& f) {
    for (int lj = 0; lj < v.local_cols(); ++lj) {
      const auto j = static_cast<std::size_t>(v.col_dist().to_global(lj));
      for (int li = 0; li < v.local_rows(); ++li) f(v.row_dist().to_global(li), j, v.local(li, lj));
    }
  });
}

std::vector<double> fix_signs(const Comm& comm, std::int64_t first_row, std::int64_t rows, int k,
                              double* values) {
  return fix_signs_of_entries(comm, static_cast<std::size_t>(k), [&](auto&& f) {
    for (std::int64_t i = 0; i < rows; ++i)
      for (int j = 0; j < k; ++j)
        f(first_row + i, static_cast<std::size_t>(j), values[std::size_t(i) * k + j]);
  });
}

}  // namespace kembed::spectral
