#include "kembed/spectral/burt_inertia.hpp"

#include <algorithm>
#include <cmath>

#include "kembed/linalg/lapack.hpp"

namespace kembed::spectral {

namespace {

/// n, Q and the category counts n_j = B_jj (one allreduce of J).
struct BurtMargins {
  double n = 0, q = 0;
  std::vector<double> count;
};

BurtMargins burt_margins(const io::CsrRows& z, const Comm& comm) {
  BurtMargins m;
  const long long stored = comm.sum(static_cast<long long>(z.nonzeros()));
  m.n = double(z.rows);
  m.q = z.rows > 0 ? double(stored / z.rows) : 0.0;
  m.count.assign(static_cast<std::size_t>(z.cols), 0.0);
  for (std::int64_t e = 0; e < z.nonzeros(); ++e)
    m.count[std::size_t(z.columns[std::size_t(e)])] += z.values[std::size_t(e)];
  comm.sum_in_place(m.count);
  return m;
}

/// Rows [j0, j1) of S^T S, row-major with J columns: a row of Z adds
/// z_ij z_il to B_jl for its stored j in the slab and every stored l; the
/// slab is summed over the ranks (integers: exact in any order, the same on
/// every rank), then scaled.
std::vector<double> burt_normal_rows(const io::CsrRows& z, const BurtMargins& m, std::size_t j0,
                                     std::size_t j1, const Comm& comm) {
  const auto d = static_cast<std::size_t>(z.cols);
  std::vector<double> slab((j1 - j0) * d, 0.0);
  for (std::int64_t i = 0; i < z.local_rows(); ++i) {
    const std::int64_t begin = z.offsets[std::size_t(i)], end = z.offsets[std::size_t(i) + 1];
    for (std::int64_t e = begin; e < end; ++e) {
      const auto j = std::size_t(z.columns[std::size_t(e)]);
      if (j < j0 || j >= j1) continue;
      double* row = slab.data() + (j - j0) * d;
      for (std::int64_t f = begin; f < end; ++f)
        row[std::size_t(z.columns[std::size_t(f)])] +=
            z.values[std::size_t(e)] * z.values[std::size_t(f)];
    }
  }
  comm.sum_in_place(slab);
  for (std::size_t j = j0; j < j1; ++j)
    for (std::size_t l = 0; l < d; ++l) {
      double& s = slab[(j - j0) * d + l];
      const double scale = std::sqrt(m.count[j] * m.count[l]);
      s = scale == 0 ? 0.0 : (m.n * s - m.count[j] * m.count[l]) / (m.n * m.q * scale);
    }
  return slab;
}

}  // namespace

double burt_inertia(const io::CsrRows& z, const Comm& comm) {
  const BurtMargins m = burt_margins(z, comm);
  const auto d = static_cast<std::size_t>(z.cols);
  constexpr std::size_t kSlabEntries = std::size_t(1) << 20;
  const std::size_t slab_rows =
      std::max<std::size_t>(1, kSlabEntries / std::max<std::size_t>(d, 1));
  double sum = 0;
  for (std::size_t j0 = 0; j0 < d; j0 += slab_rows)
    for (double s : burt_normal_rows(z, m, j0, std::min(d, j0 + slab_rows), comm)) sum += s * s;
  return sum;
}

std::vector<double> indicator_spectrum(const io::CsrRows& z, const Comm& comm) {
  const BurtMargins m = burt_margins(z, comm);
  const auto d = static_cast<std::size_t>(z.cols);
  // Symmetric: row-major is column-major.
  std::vector<double> a = burt_normal_rows(z, m, 0, d, comm);
  std::vector<double> ascending = lapack::syevd(a, int(d));
  return {ascending.rbegin(), ascending.rend()};
}

}  // namespace kembed::spectral
