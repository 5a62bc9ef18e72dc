#include "kembed/kernel/assemble.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>

#include "kembed/core/error.hpp"
#include "kembed/kernel/first_entry.hpp"
#include "kembed/kernel/local_blocks.hpp"
#include "kembed/kernel/scaled_distances.hpp"
#include "kembed/kernel/vector_exp.hpp"

namespace kembed::kernel {

namespace {

// base^exponent by repeated squaring: at most 2 log2(exponent) products, each
// rounded once, so within a few ulp of std::pow for the small degrees of
// polynomial kernels, and several times faster.
double integer_power(double base, int exponent) {
  if (exponent < 0) return std::pow(base, exponent);
  double result = 1;
  for (; exponent > 0; exponent >>= 1) {
    if (exponent & 1) result *= base;
    base *= base;
  }
  return result;
}

// exp(-a) for a >= 0 given as +inf when it overflows: exp(-inf) = 0.
double exp_of_negative(double a) { return std::exp(-a); }

// Above this relative size of the round-off in ||x||^2 (eps gamma ||x||^2),
// the Gram-trick distances of a row are recomputed from differences.
constexpr double kCancellationLimit = 1e-8;

enum Overflow { kFine = 0, kDotOverflows = 1, kPowerOverflows = 2, kTooLargeToSum = 3 };

// Collective: an agreed Error naming the first entry of a linear, poly or
// sigmoid kernel block that is not finite, or too large for the sums over a
// row that centering takes. The true value of such an entry is not
// representable, so no fallback exists: the data must be rescaled. The block
// is only scanned when the norms do not already rule overflow out.
void check_dot_product_kernel(const Kernel& kernel, const std::vector<double>& row_panel,
                              const std::vector<double>& col_panel, int d, const DistMatrix& k,
                              std::int64_t column_offset) {
  const auto xn = row_norms_squared(row_panel, k.local_rows(), d);
  const auto yn = row_norms_squared(col_panel, k.local_cols(), d);
  const double x_largest = xn.empty() ? 0 : *std::max_element(xn.begin(), xn.end());
  const double y_largest = yn.empty() ? 0 : *std::max_element(yn.begin(), yn.end());
  // |x.y| <= ||x|| ||y||, also for every partial sum of the product, so this
  // bounds every entry's dot product (with room for round-off).
  const double dot_bound = 1.01 * std::sqrt(x_largest) * std::sqrt(y_largest);
  const double limit = DBL_MAX / (4.0 * static_cast<double>(std::max(k.rows(), k.cols())));
  double entry_bound = dot_bound;
  if (kernel.type == KernelType::poly)
    entry_bound = std::pow(kernel.gamma * dot_bound + std::abs(kernel.coef0), kernel.degree);
  if (kernel.type == KernelType::sigmoid) entry_bound = dot_bound <= DBL_MAX / 4 ? 1 : INFINITY;
  // Every rank decides whether to scan (a collective follows) alike.
  const int scan = k.grid().comm().max(entry_bound <= limit ? 0LL : 1LL) != 0;
  if (!scan) return;
  // tanh hides an overflowed x.y (tanh(inf) = 1), so sigmoid entries are
  // judged by their dot product.
  const bool sigmoid = kernel.type == KernelType::sigmoid;
  const auto first = first_flagged_entry(k, [&](double v, int li, int lj) -> int {
    if (!sigmoid && std::abs(v) <= limit) return kFine;
    double dot = 0;
    for (int t = 0; t < d; ++t)
      dot += row_panel[std::size_t(li) * d + t] * col_panel[std::size_t(lj) * d + t];
    if (!std::isfinite(dot)) return kDotOverflows;
    if (sigmoid) return kFine;
    return std::isfinite(v) ? kTooLargeToSum : kPowerOverflows;
  });
  if (!first) return;
  const std::string where = "kernel entry (" + std::to_string(first->i + 1) + ", " +
                            std::to_string(first->j + column_offset + 1) + ")";
  std::string message;
  switch (first->code) {
    case kDotOverflows:
      message = where + " is not finite (x.y overflows: values too large; rescale the data)";
      break;
    case kPowerOverflows:
      message = where +
                " is not finite ((gamma x.y + coef0)^degree overflows: values too large; rescale "
                "the data, or lower gamma, coef0 or the degree)";
      break;
    default: {
      char value[32];
      std::snprintf(value, sizeof value, "%.6g", first->value);
      message = where + " is " + value + ", too large to sum over " +
                std::to_string(std::max(k.rows(), k.cols())) +
                " entries without overflow (values too large; rescale the data)";
    }
  }
  agree(k.grid().comm(), message);
}

// Each column sum runs in kPartials interleaved partial sums: a single running
// sum is a chain of dependent additions, slower than reading the column.
constexpr int kPartials = 4;  // added pairwise below, as written for 4
static_assert(kGramTileRows % kPartials == 0, "tiles must keep each partial's entries");

// The sum of one column fed in segments, with the rounding of centering's own
// sum pass (spectral/centering.cpp), so fused and separate sums agree to the
// bit: entry li goes into partial li mod 4, and the last m mod 4 entries are
// added one by one after the partials are combined. Every segment but the
// last must start at a multiple of kPartials and have a multiple of kPartials
// entries.
class ColumnSum {
 public:
  // Adds column[from, from + count) into the sum and into row_sums.
  void add(const double* __restrict column, int from, int count, double* __restrict row_sums) {
    double partial[kPartials];
    for (int p = 0; p < kPartials; ++p) partial[p] = partial_[p];
    const int end = from + count;
    int li = from;
    for (; li + kPartials <= end; li += kPartials)
      for (int p = 0; p < kPartials; ++p) {
        partial[p] += column[li + p];
        row_sums[li + p] += column[li + p];
      }
    for (int p = 0; p < kPartials; ++p) partial_[p] = partial[p];
    for (; li < end; ++li) {
      tail_[tail_count_++] = column[li];
      row_sums[li] += column[li];
    }
  }
  double total() const {
    double sum = (partial_[0] + partial_[2]) + (partial_[1] + partial_[3]);
    for (int t = 0; t < tail_count_; ++t) sum += tail_[t];
    return sum;
  }

 private:
  double partial_[kPartials] = {};
  double tail_[kPartials - 1] = {};
  int tail_count_ = 0;
};

// Lower-block storage: a column's stored rows [from, m) go into the row
// sums, and its rows below the diagonal block, [below, m), into the column's
// sum (entry li into partial li mod 4), in segments of any size.
class StoredColumnSum {
 public:
  StoredColumnSum() = default;
  StoredColumnSum(int from, int below) : from_(from), below_(below) {}
  void add(const double* __restrict column, int begin, int end, double* __restrict row_sums) {
    for (int li = std::max(begin, from_); li < end; ++li) row_sums[li] += column[li];
    double partial[kPartials];
    for (int p = 0; p < kPartials; ++p) partial[p] = partial_[p];
    int li = std::max(begin, below_);
    for (; li < end && li % kPartials != 0; ++li) partial[li % kPartials] += column[li];
    for (; li + kPartials <= end; li += kPartials)
      for (int p = 0; p < kPartials; ++p) partial[p] += column[li + p];
    for (; li < end; ++li) partial[li % kPartials] += column[li];
    for (int p = 0; p < kPartials; ++p) partial_[p] = partial[p];
  }
  double total() const { return (partial_[0] + partial_[2]) + (partial_[1] + partial_[3]); }

 private:
  int from_ = 0, below_ = 0;
  double partial_[kPartials] = {};
};

// Adds the m entries of `column` into row_sums and returns their sum.
double add_column(const double* column, int m, double* row_sums) {
  ColumnSum sum;
  sum.add(column, 0, m, row_sums);
  return sum.total();
}

}  // namespace

LocalSums local_sums(const DistMatrix& k) {
  LocalSums sums;
  sums.rows.assign(k.local_rows(), 0.0);
  sums.cols.assign(k.local_cols(), 0.0);
  if (k.storage() == Storage::lower_blocks) {
    for (int lj = 0; lj < k.local_cols(); ++lj) {
      StoredColumnSum sum(k.stored_from(lj), k.below_diagonal_from(lj));
      sum.add(k.column(lj), 0, k.local_rows(), sums.rows.data());
      sums.cols[lj] = sum.total();
    }
    return sums;
  }
  for (int lj = 0; lj < k.local_cols(); ++lj)
    sums.cols[lj] = add_column(k.column(lj), k.local_rows(), sums.rows.data());
  return sums;
}

namespace {

// Fills k; returns true when `sums` (if given) already holds the block's sums.
bool fill_kernel(const Kernel& kernel, const std::vector<double>& row_panel,
                 const std::vector<double>& col_panel, int d, DistMatrix& k, LocalSums* sums,
                 std::int64_t column_offset) {
  const double gamma = kernel.gamma, coef0 = kernel.coef0;
  const int degree = kernel.degree;
  const auto pair = [&](int li, int lj) {
    return std::make_pair(&row_panel[std::size_t(li) * d], &col_panel[std::size_t(lj) * d]);
  };
  if (kernel.type == KernelType::laplacian) {
    local_l1_distances(row_panel, col_panel, d, k);
    map_local_exp(k, [&](double s, int, int) { return -gamma * s; });
    // Rows large enough for the L1 sum to overflow: exp(-gamma inf) = 0 is
    // right only when the true distance is huge, so those pairs are summed
    // again with scaling.
    const double safe = safe_l1_magnitude(d);
    const auto needs = [&](double m) { return !(m <= safe); };
    refill_pairs(k, rows_where(row_max_magnitudes(row_panel, k.local_rows(), d), needs),
                 rows_where(row_max_magnitudes(col_panel, k.local_cols(), d), needs),
                 [&](int li, int lj) {
                   const auto [x, y] = pair(li, lj);
                   return exp_of_negative(l1_distance_scaled(x, y, d).times(gamma));
                 });
    return false;
  }
  switch (kernel.type) {
    case KernelType::linear:
    case KernelType::poly:
    case KernelType::sigmoid:
      if (kernel.type == KernelType::linear) {
        if (k.storage() == Storage::full)
          local_gram(row_panel, col_panel, d, k);
        else  // only the stored blocks
          local_gram_tiled(row_panel, col_panel, d, k, [](const LocalTile&) {});
      }
      if (kernel.type == KernelType::poly)
        local_gram_map(row_panel, col_panel, d, k, [&](double g, int, int) {
          return integer_power(gamma * g + coef0, degree);
        });
      if (kernel.type == KernelType::sigmoid)
        local_gram_map(row_panel, col_panel, d, k,
                       [&](double g, int, int) { return std::tanh(gamma * g + coef0); });
      check_dot_product_kernel(kernel, row_panel, col_panel, d, k, column_offset);
      break;
    case KernelType::rbf: {
      const auto xn = row_norms_squared(row_panel, k.local_rows(), d);
      const auto yn = row_norms_squared(col_panel, k.local_cols(), d);
      // exp(-gamma max(0, ||x||^2 + ||y||^2 - 2 x.y)), the clamp against
      // cancellation, in SIMD lanes on each tile right after its Gram
      // product, and summed while the tile is still in cache; each column's
      // sum carries from tile to tile down the slab.
      if (sums) {
        sums->rows.assign(k.local_rows(), 0.0);
        sums->cols.assign(k.local_cols(), 0.0);
      }
      std::vector<ColumnSum> slab_sums;
      std::vector<StoredColumnSum> stored_sums;
      const bool lower = k.storage() == Storage::lower_blocks;
      for (int lj = 0; lower && lj < k.local_cols(); ++lj)
        stored_sums.emplace_back(k.stored_from(lj), k.below_diagonal_from(lj));
      local_gram_tiled(row_panel, col_panel, d, k, [&](const LocalTile& tile) {
        if (lower) {
          for (int lj = tile.col; lj < tile.col + tile.cols; ++lj) {
            double* column = k.column(lj);
            exp_neg_squared_distances(column + tile.row, xn.data() + tile.row, yn[lj], gamma,
                                      std::size_t(tile.rows));
            if (sums)
              stored_sums[lj].add(column, tile.row, tile.row + tile.rows, sums->rows.data());
          }
          return;
        }
        if (tile.row == 0) slab_sums.assign(tile.cols, ColumnSum{});
        for (int c = 0; c < tile.cols; ++c) {
          const int lj = tile.col + c;
          double* column = k.column(lj);
          exp_neg_squared_distances(column + tile.row, xn.data() + tile.row, yn[lj], gamma,
                                    std::size_t(tile.rows));
          if (!sums) continue;
          slab_sums[c].add(column, tile.row, tile.rows, sums->rows.data());
          if (tile.row + tile.rows == k.local_rows()) sums->cols[lj] = slab_sums[c].total();
        }
      });
      if (sums && lower)
        for (int lj = 0; lj < k.local_cols(); ++lj) sums->cols[lj] = stored_sums[lj].total();
      // Pairs with a huge row again, from the differences: their norms
      // overflow (inf - inf), or round-off in them (eps ||x||^2) would be a
      // visible part of gamma ||x - y||^2.
      const auto needs = [&](double norm) {
        return !(norm <= kSafeSquaredNorm) || gamma * norm * DBL_EPSILON > kCancellationLimit;
      };
      const auto x_huge = rows_where(xn, needs), y_huge = rows_where(yn, needs);
      refill_pairs(k, x_huge, y_huge, [&](int li, int lj) {
        const auto [x, y] = pair(li, lj);
        return exp_of_negative(squared_distance_scaled(x, y, d).times(gamma));
      });
      // Refilled entries changed after they were summed: sum again (rare).
      return x_huge.empty() && y_huge.empty();
    }
    case KernelType::cosine: {
      auto xn = row_norms_squared(row_panel, k.local_rows(), d);
      auto yn = row_norms_squared(col_panel, k.local_cols(), d);
      // Norms that overflow, or underflow for a non-zero row: the cosine is
      // scale invariant, so those pairs are recomputed on scaled rows.
      const auto x_max = row_max_magnitudes(row_panel, k.local_rows(), d);
      const auto y_max = row_max_magnitudes(col_panel, k.local_cols(), d);
      const auto x_bad = badly_scaled_rows(xn, x_max), y_bad = badly_scaled_rows(yn, y_max);
      for (auto* v : {&xn, &yn})
        for (double& s : *v) s = s > 0 ? 1 / std::sqrt(s) : 0;  // zero rows give 0
      local_gram_map(row_panel, col_panel, d, k,
                     [&](double g, int li, int lj) { return g * xn[li] * yn[lj]; });
      refill_pairs(k, x_bad, y_bad, [&](int li, int lj) {
        const auto [x, y] = pair(li, lj);
        return cosine_scaled(x, y, d);
      });
      break;
    }
    case KernelType::laplacian:
    case KernelType::precomputed:
      break;
  }
  return false;
}

}  // namespace

void assemble_kernel(const Kernel& kernel, const std::vector<double>& row_panel,
                     const std::vector<double>& col_panel, int d, DistMatrix& k, LocalSums* sums,
                     std::int64_t column_offset) {
  if (!fill_kernel(kernel, row_panel, col_panel, d, k, sums, column_offset) && sums)
    *sums = local_sums(k);
}

}  // namespace kembed::kernel
