// PCA of sparse rows with implicit centering (SparseCovarianceOperator,
// fit_sparse_pca) against a dense serial reference formed here: the
// centered (and scaled) matrix written out, C = Xs^T Xs / (n-1) by loops,
// LAPACK dsyevd, Z = Xs U with the sign rule applied by the reference's own
// loop. Matrices with empty rows and columns, tall and wide, split over the
// ranks in equal, skewed and partly empty row ranges; the operator's
// products against dense products; truncated SVD against the uncentered
// X^T X and against scikit-learn's TruncatedSVD and PCA numbers; the fit over
// all ranks against the fit on one; bad rows and settings fail on every rank.
// The memory plan's count of the busiest rank's entries against the split
// the readers make.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kembed/core/error.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "io/csr_row_split.hpp"
#include "kembed/spectral/memory_plan.hpp"
#include "kembed/spectral/sparse_covariance_operator.hpp"
#include "kembed/spectral/sparse_pca.hpp"
#include "serial_reference.hpp"
#include "sparse_rows_support.hpp"
#include "test_support.hpp"

using namespace kembed;
using namespace kembed::spectral;
using kembed::test::all_ranks;

namespace {

using kembed::test::csr_rows;
using kembed::test::kSplits;
using kembed::test::my_rows;
using kembed::test::Split;

// Row-major n x d with about `density` of its entries non-zero (values in
// [-2, 5), never exactly 0), rows `empty_rows` and columns `empty_cols` all
// zero, and column 1 shifted so its mean is far from 0.
std::vector<double> sparse_dense(int n, int d, double density, unsigned seed,
                                 const std::vector<int>& empty_rows,
                                 const std::vector<int>& empty_cols) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> coin(0, 1), value(-2, 5);
  std::vector<double> x(std::size_t(n) * d, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j) {
      const bool keep = coin(gen) < density;
      const double v = value(gen);
      if (keep && v != 0) x[std::size_t(i) * d + j] = v + (j == 1 ? 20 : 0);
    }
  for (int i : empty_rows)
    for (int j = 0; j < d; ++j) x[std::size_t(i) * d + j] = 0;
  for (int j : empty_cols)
    for (int i = 0; i < n; ++i) x[std::size_t(i) * d + j] = 0;
  return x;
}





// The dense reference: Xs = (X - 1 mu^T) S^{-1} (mu = 0 without centering),
// C = Xs^T Xs / (n-1), all eigenpairs by dsyevd, Z = Xs U_k with the sign
// rule (test::serial_fix_signs) and U flipped with Z.
struct Reference {
  std::vector<double> mean, scale;
  test::Dense c;
  std::vector<double> values;      // all d, descending
  std::vector<double> embedding;   // n x k row-major
  std::vector<double> components;  // d x k row-major
  double total_variance = 0;       // centered, scaled columns' variances (n-1)
};

Reference reference(const std::vector<double>& x, int n, int d, int k, bool center,
                    bool standardize) {
  Reference r;
  std::vector<double> xs = x;
  for (int j = 0; j < d; ++j) {
    double mean = 0, ss = 0;
    for (int i = 0; i < n; ++i) mean += x[std::size_t(i) * d + j];
    mean /= n;
    for (int i = 0; i < n; ++i) ss += std::pow(x[std::size_t(i) * d + j] - mean, 2);
    const double scale = standardize ? std::sqrt(ss / (n - 1)) : 1.0;
    r.mean.push_back(mean);
    r.scale.push_back(scale);
    r.total_variance += ss / (n - 1) / (scale * scale);
    for (int i = 0; i < n; ++i)
      xs[std::size_t(i) * d + j] = (x[std::size_t(i) * d + j] - (center ? mean : 0)) / scale;
  }
  r.c = test::Dense{d, std::vector<double>(std::size_t(d) * d, 0.0)};
  for (int a = 0; a < d; ++a)
    for (int b = 0; b < d; ++b) {
      double s = 0;
      for (int i = 0; i < n; ++i) s += xs[std::size_t(i) * d + a] * xs[std::size_t(i) * d + b];
      r.c(a, b) = s / (n - 1);
    }
  test::Dense vectors;
  const auto ascending = test::serial_eigh(r.c, vectors);
  r.values.assign(ascending.rbegin(), ascending.rend());
  // Column-major n x k scores of the top k, signs fixed on them.
  std::vector<double> z(std::size_t(n) * k, 0.0);
  for (int c = 0; c < k; ++c)
    for (int i = 0; i < n; ++i) {
      double s = 0;
      for (int j = 0; j < d; ++j) s += xs[std::size_t(i) * d + j] * vectors(j, d - 1 - c);
      z[std::size_t(c) * n + i] = s;
    }
  const std::vector<double> before = z;
  test::serial_fix_signs(z, n, k);
  r.embedding.resize(std::size_t(n) * k);
  r.components.resize(std::size_t(d) * k);
  for (int c = 0; c < k; ++c) {
    // The flip the rule made, read off any non-zero entry.
    double sign = 1;
    for (int i = 0; i < n; ++i)
      if (before[std::size_t(c) * n + i] != 0) {
        sign = before[std::size_t(c) * n + i] == z[std::size_t(c) * n + i] ? 1 : -1;
        break;
      }
    for (int i = 0; i < n; ++i) r.embedding[std::size_t(i) * k + c] = z[std::size_t(c) * n + i];
    for (int j = 0; j < d; ++j) r.components[std::size_t(j) * k + c] = sign * vectors(j, d - 1 - c);
  }
  return r;
}

double largest_magnitude(const std::vector<double>& v) {
  double m = 0;
  for (double e : v) m = std::max(m, std::abs(e));
  return m;
}

// Every check of one fit against the reference, on every rank (the rank-0
// arrays are compared on rank 0 and the verdict shared).
void expect_matches(const Comm& comm, const SparsePcaResult& fit, const Reference& ref, int k,
                    std::int64_t rows_held, const std::string& what) {
  bool values_ok = int(fit.eigenvalues.size()) == k;
  for (int c = 0; values_ok && c < k; ++c)
    values_ok = std::abs(fit.eigenvalues[c] - ref.values[c]) <= 1e-10 * ref.values[c];
  EXPECT_TRUE(all_ranks(comm, values_ok)) << what << ": eigenvalues";
  EXPECT_LE(test::max_abs_diff(fit.mean, ref.mean), 1e-13 * largest_magnitude(ref.mean)) << what;
  EXPECT_LE(test::max_abs_diff(fit.scale, ref.scale), 1e-13 * largest_magnitude(ref.scale)) << what;
  EXPECT_NEAR(fit.total_variance, ref.total_variance, 1e-12 * ref.total_variance) << what;
  bool arrays_ok = fit.scores.size() == std::size_t(rows_held) * k;
  const std::vector<double> fit_embedding = comm.gatherv(fit.scores);
  if (comm.is_root()) {
    const double zmax = largest_magnitude(ref.embedding);
    arrays_ok = arrays_ok && test::max_abs_diff(fit_embedding, ref.embedding) <= 1e-8 * zmax &&
                test::max_abs_diff(fit.components, ref.components) <= 1e-8;
  }
  EXPECT_TRUE(all_ranks(comm, arrays_ok)) << what << ": embedding or components";
  bool residuals_ok = int(fit.residuals.size()) == k;
  for (double r : fit.residuals) residuals_ok = residuals_ok && r < 1e-10;
  EXPECT_TRUE(all_ranks(comm, residuals_ok)) << what << ": residuals";
}


}  // namespace

TEST(SparseCovarianceOperator, ProductMatchesDenseCovarianceTimesBlock) {
  const Comm comm = Comm::world();
  const int n = 300, d = 40, width = 5;
  // Empty columns are constant, which standardize refuses: it gets its own matrix.
  const auto with_empty = sparse_dense(n, d, 0.1, 7, {0, 17, 299}, {3, 38});
  const auto without = sparse_dense(n, d, 0.1, 8, {0, 17, 299}, {});
  const auto blocks = test::random_data(d, width, 11);  // read as column-major d x width
  BlacsGrid grid(comm, 1, comm.size());
  for (bool center : {true, false})
    for (bool standardize : {false, true}) {
      const std::vector<double>& x = standardize ? without : with_empty;
      const Reference ref = reference(x, n, d, 1, center, standardize);
      for (Split split : kSplits)
        for (int nb : {1, 7, 64}) {
          const io::CsrRows rows = my_rows(comm, x, n, d, split);
          SparseCovarianceOperator op(rows, grid, nb, center, standardize, "test.h5ad");
          const BlockCyclic1D& layout = op.rows();
          const int ld = std::max(1, layout.local_size()) + 2;  // padded on purpose
          std::vector<double> in(std::size_t(ld) * width, 0.0), out(std::size_t(ld) * width, 0.0);
          for (int c = 0; c < width; ++c)
            for (int l = 0; l < layout.local_size(); ++l)
              in[std::size_t(c) * ld + l] = blocks[std::size_t(c) * d + layout.to_global(l)];
          op.apply(in.data(), ld, width, out.data(), ld);
          double worst = 0, scale = 0;
          for (int c = 0; c < width; ++c)
            for (int l = 0; l < layout.local_size(); ++l) {
              const std::int64_t g = layout.to_global(l);
              double s = 0;
              for (int t = 0; t < d; ++t) s += ref.c(int(g), t) * blocks[std::size_t(c) * d + t];
              worst = std::max(worst, std::abs(out[std::size_t(c) * ld + l] - s));
              scale = std::max(scale, std::abs(s));
            }
          worst = comm.max(worst);
          scale = comm.max(scale);
          EXPECT_LE(worst, 1e-12 * scale) << "center " << center << " block " << nb;
          double trace = 0;
          for (int j = 0; j < d; ++j) trace += ref.c(j, j);
          EXPECT_NEAR(op.trace(), trace, 1e-12 * trace);
          EXPECT_EQ(op.order(), d);
          const OperatorCost cost = op.cost(width);
          EXPECT_EQ(cost.flops, 4.0 * double(rows.nonzeros()) * width + 6.0 * d * width);
          EXPECT_GE(cost.held_bytes, std::size_t(rows.nonzeros()) * 12);
        }
    }
}

TEST(SparsePca, TallMatchesDenseSerialReference) {
  const Comm comm = Comm::world();
  const int n = 300, d = 40, k = 4;
  // No empty columns here: standardize divides by every column's std.
  const auto x = sparse_dense(n, d, 0.1, 3, {5, 6, 250}, {});
  BlacsGrid grid(comm, comm.size(), 1);
  for (bool standardize : {false, true}) {
    const Reference ref = reference(x, n, d, k, true, standardize);
    for (Split split : kSplits) {
      const io::CsrRows rows = my_rows(comm, x, n, d, split);
      SparsePcaSettings s;
      s.components = k;
      s.standardize = standardize;
      s.block_size = 8;
      PhaseTimer timer;
      const SparsePcaResult fit = fit_sparse_pca(rows, grid, s, "tall.npz", timer);
      expect_matches(comm, fit, ref, k, rows.local_rows(),
                     "tall, standardize " + std::to_string(standardize) + ", split " +
                         std::to_string(int(split)));
      double kept = 0;
      for (int c = 0; c < k; ++c) {
        kept += ref.values[c];
        EXPECT_NEAR(fit.explained_ratio[c], ref.values[c] / ref.total_variance, 1e-12);
        EXPECT_NEAR(fit.singular_values[c], std::sqrt((n - 1) * ref.values[c]),
                    1e-10 * std::sqrt((n - 1) * ref.values[c]));
      }
      // scikit-learn's noise variance: the discarded eigenvalues' mean.
      EXPECT_NEAR(fit.noise_variance, (ref.total_variance - kept) / (d - k), 1e-10);
    }
  }
}

TEST(SparsePca, WideWithEmptyRowsAndColumnsMatchesDenseSerialReference) {
  const Comm comm = Comm::world();
  const int n = 60, d = 200, k = 3;
  const auto x = sparse_dense(n, d, 0.1, 5, {0, 30, 59}, {0, 101, 199});
  const Reference ref = reference(x, n, d, k, true, false);
  BlacsGrid grid(comm, 1, comm.size());
  for (Split split : kSplits) {
    const io::CsrRows rows = my_rows(comm, x, n, d, split);
    SparsePcaSettings s;
    s.components = k;
    s.block_size = 16;
    PhaseTimer timer;
    const SparsePcaResult fit = fit_sparse_pca(rows, grid, s, "wide.mtx", timer);
    expect_matches(comm, fit, ref, k, rows.local_rows(), "wide, split " + std::to_string(int(split)));
    // Empty rows score -mu^T U: the same for all three.
    const std::vector<double> fit_embedding = comm.gatherv(fit.scores);
    if (comm.is_root())
      for (int c = 0; c < k; ++c) {
        EXPECT_DOUBLE_EQ(fit_embedding[std::size_t(30) * k + c], fit_embedding[c]);
        EXPECT_DOUBLE_EQ(fit_embedding[std::size_t(59) * k + c], fit_embedding[c]);
      }
  }
}

TEST(SparsePca, UncenteredIsTruncatedSvdOfXtX) {
  const Comm comm = Comm::world();
  const int n = 300, d = 40, k = 3;
  const auto x = sparse_dense(n, d, 0.1, 9, {1, 2}, {20});
  const Reference ref = reference(x, n, d, k, false, false);
  BlacsGrid grid(comm, comm.size(), 1);
  for (Split split : kSplits) {
    const io::CsrRows rows = my_rows(comm, x, n, d, split);
    SparsePcaSettings s;
    s.components = k;
    s.center = false;
    PhaseTimer timer;
    const SparsePcaResult fit = fit_sparse_pca(rows, grid, s, "lsa.npz", timer);
    expect_matches(comm, fit, ref, k, rows.local_rows(), "uncentered, split " + std::to_string(int(split)));
    EXPECT_FALSE(fit.centered);
    // Variances of the scores (n denominator), from the reference scores.
    for (int c = 0; c < k; ++c) {
      double mean = 0, ss = 0;
      for (int i = 0; i < n; ++i) mean += ref.embedding[std::size_t(i) * k + c];
      mean /= n;
      for (int i = 0; i < n; ++i) ss += std::pow(ref.embedding[std::size_t(i) * k + c] - mean, 2);
      EXPECT_NEAR(fit.explained_variance[c], ss / n, 1e-9 * ss / n);
      EXPECT_NEAR(fit.explained_ratio[c], (ss / n) / (ref.total_variance * (n - 1) / n), 1e-10);
    }
  }
}

TEST(SparsePca, WhitenedScoresHaveUnitVariance) {
  const Comm comm = Comm::world();
  const int n = 300, d = 40, k = 3;
  const auto x = sparse_dense(n, d, 0.1, 13, {}, {});
  BlacsGrid grid(comm, comm.size(), 1);
  const io::CsrRows rows = my_rows(comm, x, n, d, Split::skewed);
  SparsePcaSettings s;
  s.components = k;
  s.whiten = true;
  PhaseTimer timer;
  const SparsePcaResult fit = fit_sparse_pca(rows, grid, s, "white.npz", timer);
  const std::vector<double> fit_embedding = comm.gatherv(fit.scores);
  bool ok = true;
  if (comm.is_root())
    for (int a = 0; a < k; ++a)
      for (int b = 0; b < k; ++b) {
        double s2 = 0;
        for (int i = 0; i < n; ++i)
          s2 += fit_embedding[std::size_t(i) * k + a] * fit_embedding[std::size_t(i) * k + b];
        ok = ok && std::abs(s2 / (n - 1) - (a == b ? 1.0 : 0.0)) < 1e-9;
      }
  EXPECT_TRUE(all_ranks(comm, ok));
}

// The fit over all ranks (skewed row ranges) against the same fit on rank 0
// alone (a 1 x 1 grid on MPI_COMM_SELF holding every row): the rank count
// changes only the order of the sums.
TEST(SparsePca, AllRanksAgreeWithOneRank) {
  const Comm comm = Comm::world();
  const int n = 300, d = 40, k = 4;
  const auto x = sparse_dense(n, d, 0.1, 17, {4}, {});
  SparsePcaSettings s;
  s.components = k;
  s.standardize = true;
  s.block_size = 3;
  BlacsGrid grid(comm, comm.size(), 1);
  PhaseTimer timer;
  const SparsePcaResult all =
      fit_sparse_pca(my_rows(comm, x, n, d, Split::skewed), grid, s, "all.npz", timer);
  const std::vector<double> all_embedding = comm.gatherv(all.scores);
  bool ok = true;
  if (comm.is_root()) {
    const Comm self = Comm::self();
    BlacsGrid alone(self, 1, 1);
    const io::CsrRows every = csr_rows(x, n, d, 0, n);
    const SparsePcaResult one = fit_sparse_pca(every, alone, s, "one.npz", timer);
    for (int c = 0; c < k; ++c)
      ok = ok && std::abs(all.eigenvalues[c] - one.eigenvalues[c]) <= 1e-12 * one.eigenvalues[c];
    ok = ok &&
         test::max_abs_diff(all_embedding, one.scores) <= 1e-10 * largest_magnitude(one.scores) &&
         test::max_abs_diff(all.components, one.components) <= 1e-10 &&
         test::max_abs_diff(all.mean, one.mean) <= 1e-14 * largest_magnitude(one.mean) &&
         std::abs(all.total_variance - one.total_variance) <= 1e-13 * one.total_variance;
  }
  EXPECT_TRUE(all_ranks(comm, ok));
}

// X: 40 x 12, x_ij = ((7 i + j^2) mod 13) - 3 + j / 4 where (i^2 + 3 j + i j)
// mod 5 == 0, else 0 (88 stored entries, 8 empty rows, 4 empty columns).
// The numbers below are scikit-learn 1.2.1's, from
//   S = scipy.sparse.csr_matrix(X)
//   t = TruncatedSVD(n_components=3, algorithm="arpack").fit(S)
//   t.explained_variance_, t.explained_variance_ratio_, t.singular_values_
//   p = PCA(n_components=3).fit(S.toarray())
//   p.explained_variance_, p.explained_variance_ratio_, p.singular_values_,
//   p.noise_variance_
TEST(SparsePca, MatchesScikitLearn) {
  const Comm comm = Comm::world();
  const int n = 40, d = 12, k = 3;
  std::vector<double> x(std::size_t(n) * d, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j)
      if ((i * i + 3 * j + i * j) % 5 == 0)
        x[std::size_t(i) * d + j] = ((i * 7 + j * j) % 13) - 3 + 0.25 * j;
  BlacsGrid grid(comm, comm.size(), 1);
  const io::CsrRows rows = my_rows(comm, x, n, d, Split::skewed);
  EXPECT_EQ(comm.sum(static_cast<long long>(rows.nonzeros())), 88);
  SparsePcaSettings s;
  s.components = k;
  s.block_size = 4;
  PhaseTimer timer;
  s.center = false;
  const SparsePcaResult svd = fit_sparse_pca(rows, grid, s, "sk.npz", timer);
  const std::vector<double> svd_variance{18.392951690724868, 11.947558393958872, 8.08895790137025};
  const std::vector<double> svd_ratio{0.3026681069325604, 0.19660492466738172, 0.13310911789647745};
  const std::vector<double> svd_singular{33.4864683996063, 23.936691732396373, 19.69106035917714};
  s.center = true;
  const SparsePcaResult pca = fit_sparse_pca(rows, grid, s, "sk.npz", timer);
  const std::vector<double> pca_variance{22.068513012430166, 12.44900264728263, 7.83836495976798};
  const std::vector<double> pca_ratio{0.35407308676647425, 0.19973510639364916,
                                      0.12576081020701266};
  const std::vector<double> pca_singular{29.33721199236179, 22.034316491419073, 17.484170939193863};
  for (int c = 0; c < k; ++c) {
    EXPECT_NEAR(svd.explained_variance[c], svd_variance[c], 1e-10 * svd_variance[c]);
    EXPECT_NEAR(svd.explained_ratio[c], svd_ratio[c], 1e-10 * svd_ratio[c]);
    EXPECT_NEAR(svd.singular_values[c], svd_singular[c], 1e-10 * svd_singular[c]);
    EXPECT_NEAR(pca.explained_variance[c], pca_variance[c], 1e-10 * pca_variance[c]);
    EXPECT_NEAR(pca.explained_ratio[c], pca_ratio[c], 1e-10 * pca_ratio[c]);
    EXPECT_NEAR(pca.singular_values[c], pca_singular[c], 1e-10 * pca_singular[c]);
  }
  EXPECT_NEAR(pca.noise_variance, 2.219075942564813, 1e-10 * 2.219075942564813);
}

TEST(SparsePca, BadRowsAndSettingsFailOnEveryRank) {
  const Comm comm = Comm::world();
  const int n = 30, d = 8;
  const auto x = sparse_dense(n, d, 0.3, 21, {}, {6});
  BlacsGrid grid(comm, comm.size(), 1);
  PhaseTimer timer;
  const auto fit_error = [&](const io::CsrRows& rows, const SparsePcaSettings& s) {
    return test::caught([&] { fit_sparse_pca(rows, grid, s, "bad.npz", timer); });
  };
  SparsePcaSettings s;
  s.components = 2;
  // Column 7 (1-based) is all zero: constant under standardize.
  s.standardize = true;
  std::string e = fit_error(my_rows(comm, x, n, d, Split::equal), s);
  EXPECT_TRUE(all_ranks(comm, e.find("bad.npz: column 7 ") == 0)) << e;
  s.standardize = false;
  s.components = 9;
  e = fit_error(my_rows(comm, x, n, d, Split::equal), s);
  EXPECT_TRUE(all_ranks(comm, e.find("--components 9 must be between 1 and min(n, d) = 8") == 0))
      << e;
  s.components = 2;
  // A column index out of range on the last rank only.
  io::CsrRows rows = my_rows(comm, x, n, d, Split::equal);
  if (comm.rank() == comm.size() - 1 && rows.nonzeros() > 0) rows.columns.back() = d;
  e = fit_error(rows, s);
  EXPECT_TRUE(all_ranks(comm, e.find("bad.npz: row ") == 0 &&
                                  e.find("column index 8 is outside [0, 8)") != std::string::npos))
      << e;
  // Row ranges that leave a gap (every rank starts one row late).
  rows = my_rows(comm, x, n, d, Split::equal);
  rows.first_row += 1;
  e = fit_error(rows, s);
  EXPECT_TRUE(all_ranks(comm, e.find("bad.npz: rank 0 holds rows from 1, expected 0") == 0)) << e;
}

// most_entries_per_rank, which `kembed plan` and the fit's guard price, is
// at least what split_rows_by_entries gives the busiest rank, for every
// row-length pattern (from none to a whole row of d), and the bound is
// reached: row lengths 4, 4, 2 (d = 4) on 2 ranks give rank 0 rows 0 and 1,
// 8 entries, = ceil(10 / 2) + 4 - 1.
TEST(SparseMemoryPlan, BusiestRankBoundCoversTheReadersSplit) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const std::int64_t d = 1 + static_cast<std::int64_t>(rng() % 40);
    const std::int64_t rows = 1 + static_cast<std::int64_t>(rng() % 60);
    std::vector<std::int64_t> indptr{0};
    for (std::int64_t i = 0; i < rows; ++i) {
      // Mostly short rows, some empty, some whole.
      const unsigned kind = rng() % 4;
      const std::int64_t length = kind == 0 ? 0 : kind == 1 ? d : static_cast<std::int64_t>(rng() % (d + 1));
      indptr.push_back(indptr.back() + length);
    }
    const std::int64_t entries = indptr.back();
    for (int parts = 1; parts <= 7; ++parts) {
      const std::vector<std::int64_t> split = io::split_rows_by_entries(indptr, parts);
      std::int64_t busiest = 0;
      for (int r = 0; r < parts; ++r)
        busiest = std::max(busiest, indptr[static_cast<std::size_t>(split[r + 1])] -
                                        indptr[static_cast<std::size_t>(split[r])]);
      const std::int64_t bound = most_entries_per_rank(entries, d, parts);
      EXPECT_LE(busiest, bound) << "trial " << trial << ", " << parts << " parts";
      EXPECT_LE(bound, entries);
      if (parts == 1) {
        EXPECT_EQ(bound, entries);
      }
    }
  }
  const std::vector<std::int64_t> tight{0, 4, 8, 10};
  const std::vector<std::int64_t> split = io::split_rows_by_entries(tight, 2);
  EXPECT_EQ(split, (std::vector<std::int64_t>{0, 2, 3}));
  EXPECT_EQ(most_entries_per_rank(10, 4, 2), 8);
  EXPECT_EQ(most_entries_per_rank(0, 4, 3), 0);
  // The shape prices the bound, or more when a rank is known to hold more.
  EXPECT_EQ(sparse_problem_shape(3, 4, 10, 2, 2, 1, 64, SparseMethod::pca).sparse_entries, 8);
  EXPECT_EQ(sparse_problem_shape(3, 4, 10, 2, 2, 1, 64, SparseMethod::ca, 9).sparse_entries, 9);
}
