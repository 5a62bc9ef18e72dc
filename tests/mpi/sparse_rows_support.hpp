#pragma once
// Test helpers of the sparse suites: a dense row-major matrix split into
// per-rank CSR rows (io::CsrRows) the way a reader lays them out, or in
// unequal ways the readers never choose, to show the fits do not depend on
// the split.
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "kembed/io/csr_rows.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::test {

enum class Split { equal, skewed, first_empty };
inline const std::vector<Split> kSplits = {Split::equal, Split::skewed, Split::first_empty};

// This rank's rows [first, first + count) of n under `split`: equal
// ranges, ranges growing as (r + 1)^2, or rank 0 empty and the rest equal.
inline std::pair<std::int64_t, std::int64_t> my_range(std::int64_t n, Split split, int r, int p) {
  std::vector<double> weight(p, 1.0);
  for (int q = 0; q < p; ++q) {
    if (split == Split::skewed) weight[q] = double(q + 1) * (q + 1);
    if (split == Split::first_empty && p > 1 && q == 0) weight[q] = 0;
  }
  double total = 0;
  for (double w : weight) total += w;
  std::vector<std::int64_t> start(p + 1, 0);
  double so_far = 0;
  for (int q = 0; q < p; ++q) {
    so_far += weight[q];
    start[q + 1] = q + 1 == p ? n : static_cast<std::int64_t>(std::floor(n * so_far / total));
  }
  return {start[r], start[r + 1] - start[r]};
}

// The CSR rows [first, first + count) of the row-major dense n x d matrix x.
inline io::CsrRows csr_rows(const std::vector<double>& x, int n, int d,
                                    std::int64_t first, std::int64_t count) {
  io::CsrRows c;
  c.rows = n;
  c.cols = d;
  c.first_row = first;
  for (std::int64_t i = first; i < first + count; ++i) {
    for (int j = 0; j < d; ++j) {
      const double v = x[std::size_t(i) * d + j];
      if (v == 0) continue;
      c.columns.push_back(j);
      c.values.push_back(v);
    }
    c.offsets.push_back(static_cast<std::int64_t>(c.columns.size()));
  }
  return c;
}

// This rank's CSR rows of x under `split`.
inline io::CsrRows my_rows(const Comm& comm, const std::vector<double>& x, int n,
                                   int d, Split split) {
  const auto range = my_range(n, split, comm.rank(), comm.size());
  return csr_rows(x, n, d, range.first, range.second);
}

}  // namespace kembed::test
