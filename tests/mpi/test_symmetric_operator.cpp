// The Krylov solver written against SymmetricOperator: two operators the
// test defines itself (a dense matrix held whole on every rank, applied by
// gathering X; a diagonal plus a low-rank term, never formed) against a
// serial LAPACK reference of their dense form, on every grid shape and block
// sizes that leave ranks without rows; the stored matrix as a StoredOperator
// giving bit for bit the result of the DistMatrix and SingleMatrix entry
// points, and its cost; the agreed errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "kembed/core/error.hpp"
#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/spectral/krylov.hpp"
#include "kembed/spectral/residuals.hpp"
#include "kembed/spectral/stored_operator.hpp"
#include "kembed/spectral/symmetric_operator.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using namespace kembed;
using kembed::spectral::KrylovProduct;
using kembed::spectral::KrylovResult;
using kembed::spectral::KrylovSettings;
using kembed::spectral::OperatorCost;
using kembed::spectral::StoredOperator;
using kembed::spectral::SymmetricOperator;
using kembed::test::all_ranks;
using kembed::test::Dense;
using kembed::test::grid_shapes;

namespace {

std::vector<double> uniform(std::size_t count, double low, double high, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(low, high);
  std::vector<double> v(count);
  for (double& x : v) x = dist(gen);
  return v;
}

// The rows of an n-vector this rank holds: 1-D block-cyclic in blocks of nb.
BlockCyclic1D rows_of(const BlacsGrid& grid, std::int64_t n, int nb) {
  return BlockCyclic1D(n, nb, grid.comm().rank(), grid.comm().size());
}

// A symmetric matrix held whole on every rank. A product gathers all of X
// from every rank's rows and multiplies this rank's rows of A by it, with
// plain loops. `rows_block` != nb describes a wrong row layout.
class ReplicatedDense final : public SymmetricOperator {
 public:
  ReplicatedDense(const BlacsGrid& grid, Dense a, int nb, int rows_block = 0)
      : grid_(grid),
        a_(std::move(a)),
        nb_(nb),
        rows_(rows_of(grid, a_.n, rows_block > 0 ? rows_block : nb)) {}
  std::int64_t order() const override { return a_.n; }
  const BlacsGrid& grid() const override { return grid_; }
  int block_size() const override { return nb_; }
  const BlockCyclic1D& rows() const override { return rows_; }
  void apply(const double* x, int ldx, int width, double* y, int ldy) override {
    ++products;
    const int n = a_.n, mine = rows_.local_size(), ranks = grid_.comm().size();
    std::vector<double> packed(std::size_t(mine) * width);
    for (int j = 0; j < width; ++j)
      for (int l = 0; l < mine; ++l)
        packed[std::size_t(j) * mine + l] = x[std::size_t(j) * ldx + l];
    const std::vector<double> all = grid_.comm().allgatherv(packed);
    std::vector<double> whole(std::size_t(n) * width);
    std::size_t offset = 0;
    for (int r = 0; r < ranks; ++r) {
      const BlockCyclic1D theirs(n, rows_.block_size(), r, ranks);
      for (int j = 0; j < width; ++j)
        for (int l = 0; l < theirs.local_size(); ++l)
          whole[std::size_t(j) * n + theirs.to_global(l)] =
              all[offset + std::size_t(j) * theirs.local_size() + l];
      offset += std::size_t(theirs.local_size()) * width;
    }
    for (int j = 0; j < width; ++j)
      for (int l = 0; l < mine; ++l) {
        const std::int64_t i = rows_.to_global(l);
        double sum = 0;
        for (int t = 0; t < n; ++t) sum += a_(int(i), t) * whole[std::size_t(j) * n + t];
        y[std::size_t(j) * ldy + l] = sum;
      }
  }
  OperatorCost cost(int width) const override {
    return {a_.a.size() * sizeof(double), std::size_t(a_.n) * width * sizeof(double),
            2.0 * rows_.local_size() * a_.n * width};
  }
  int products = 0;

 private:
  const BlacsGrid& grid_;
  Dense a_;
  int nb_;
  BlockCyclic1D rows_;
};

// The products of `inner` with a fresh random block added at every call, of
// entries up to `scale` in size: what the solver sees when its products stop
// being those of one symmetric matrix (a basis that lost orthogonality, a
// corrupted product). The same on every rank count: the noise of entry (i, j)
// depends only on the call, the global row i and the column j.
class CorruptedProducts final : public SymmetricOperator {
 public:
  CorruptedProducts(SymmetricOperator& inner, double scale) : inner_(inner), scale_(scale) {}
  std::int64_t order() const override { return inner_.order(); }
  const BlacsGrid& grid() const override { return inner_.grid(); }
  int block_size() const override { return inner_.block_size(); }
  const BlockCyclic1D& rows() const override { return inner_.rows(); }
  void apply(const double* x, int ldx, int width, double* y, int ldy) override {
    inner_.apply(x, ldx, width, y, ldy);
    ++calls_;
    for (int j = 0; j < width; ++j)
      for (int l = 0; l < rows().local_size(); ++l) {
        std::uint64_t h = (calls_ * 0x9E3779B97F4A7C15ULL) ^
                          (std::uint64_t(rows().to_global(l)) * 0xBF58476D1CE4E5B9ULL) ^
                          (std::uint64_t(j) * 0x94D049BB133111EBULL);
        h ^= h >> 31;
        h *= 0xD6E8FEB86659FD93ULL;
        h ^= h >> 32;
        y[std::size_t(j) * ldy + l] += scale_ * (double(h >> 11) * 0x1.0p-53 * 2 - 1);
      }
  }
  OperatorCost cost(int width) const override { return inner_.cost(width); }

 private:
  SymmetricOperator& inner_;
  double scale_;
  std::uint64_t calls_ = 0;
};

// A = diag(d) + U diag(s) U^T, never formed: each rank keeps its rows of d and
// U, and a product needs one reduction of U^T X.
class DiagonalPlusLowRank final : public SymmetricOperator {
 public:
  DiagonalPlusLowRank(const BlacsGrid& grid, const std::vector<double>& d,
                      const std::vector<double>& u, std::vector<double> s, int nb)
      : grid_(grid),
        n_(std::int64_t(d.size())),
        nb_(nb),
        rank_(int(s.size())),
        rows_(rows_of(grid, n_, nb)),
        s_(std::move(s)) {
    for (int l = 0; l < rows_.local_size(); ++l) {
      const std::int64_t i = rows_.to_global(l);
      d_.push_back(d[std::size_t(i)]);
      for (int c = 0; c < rank_; ++c) u_.push_back(u[std::size_t(c) * n_ + std::size_t(i)]);
    }
  }
  std::int64_t order() const override { return n_; }
  const BlacsGrid& grid() const override { return grid_; }
  int block_size() const override { return nb_; }
  const BlockCyclic1D& rows() const override { return rows_; }
  void apply(const double* x, int ldx, int width, double* y, int ldy) override {
    const int mine = rows_.local_size();
    std::vector<double> c(std::size_t(rank_) * width, 0.0);  // U^T X, rank_ x width
    for (int j = 0; j < width; ++j)
      for (int l = 0; l < mine; ++l)
        for (int r = 0; r < rank_; ++r)
          c[std::size_t(j) * rank_ + r] +=
              u_[std::size_t(l) * rank_ + r] * x[std::size_t(j) * ldx + l];
    grid_.comm().sum_in_place(c);
    for (int j = 0; j < width; ++j)
      for (int l = 0; l < mine; ++l) {
        double sum = d_[l] * x[std::size_t(j) * ldx + l];
        for (int r = 0; r < rank_; ++r)
          sum += u_[std::size_t(l) * rank_ + r] * s_[r] * c[std::size_t(j) * rank_ + r];
        y[std::size_t(j) * ldy + l] = sum;
      }
  }
  OperatorCost cost(int width) const override {
    return {(d_.size() + u_.size()) * sizeof(double), c_bytes(width),
            4.0 * rows_.local_size() * rank_ * width};
  }

 private:
  std::size_t c_bytes(int width) const { return std::size_t(rank_) * width * sizeof(double); }
  const BlacsGrid& grid_;
  std::int64_t n_;
  int nb_, rank_;
  BlockCyclic1D rows_;
  std::vector<double> s_, d_, u_;  // u_: this rank's rows of U, row-major
};

// The dense form of diag(d) + U diag(s) U^T, U column-major n x r.
Dense dense_low_rank(const std::vector<double>& d, const std::vector<double>& u,
                     const std::vector<double>& s) {
  const int n = int(d.size()), r = int(s.size());
  Dense a{n, std::vector<double>(std::size_t(n) * n, 0.0)};
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      double sum = i == j ? d[i] : 0.0;
      for (int c = 0; c < r; ++c)
        sum += u[std::size_t(c) * n + i] * s[c] * u[std::size_t(c) * n + j];
      a(i, j) = sum;
    }
  return a;
}

// A symmetric n x n matrix with spectrum `lambda` and dense eigenvectors.
Dense dense_reflected(const std::vector<double>& lambda, unsigned seed) {
  const int n = int(lambda.size());
  const test::ReflectedSpectrum entry(lambda, test::random_data(n, 1, seed));
  Dense a{n, std::vector<double>(std::size_t(n) * n)};
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) a(i, j) = entry(i, j);
  return a;
}

// Top k = 4 of a spectrum with gaps of at least 1 around them (so that the
// eigenvectors are determined to the residual over the gap) over a bulk in
// [-3, 3].
std::vector<double> separated_spectrum(int n, unsigned seed) {
  std::vector<double> lambda = uniform(std::size_t(n), -3, 3, seed);
  const double top[] = {10, 8.5, 7, 5.5, 4};
  for (int j = 0; j < 5; ++j) lambda[std::size_t(j) * 7 % n] = top[j];
  return lambda;
}

// Checks `r` for the operator `op` of dense form `a` on rank 0 of the grid
// against LAPACK's eigenpairs of `a`: eigenvalues to 1e-10 relative,
// eigenvectors (up to sign) to 1e-10, V^T V = I, and residuals from the
// dense entries. The residuals of residual_norms(op, ...) agree with those.
void expect_top_pairs(SymmetricOperator& op, const KrylovResult& r, const Dense& a, int k,
                      const std::string& what) {
  const Comm& comm = op.grid().comm();
  EXPECT_TRUE(all_ranks(comm, r.converged)) << what;
  ASSERT_EQ(r.values.size(), std::size_t(k)) << what;
  ASSERT_EQ(r.vectors.rows(), a.n) << what;
  ASSERT_EQ(r.vectors.cols(), k) << what;
  EXPECT_EQ(r.vectors.row_dist().block_size(), op.block_size()) << what;
  EXPECT_EQ(r.vectors.col_dist().block_size(), op.block_size()) << what;
  EXPECT_EQ(&r.vectors.grid(), &op.grid()) << what;
  const std::vector<double> through_op = spectral::residual_norms(op, r.vectors, r.values);
  const std::vector<double> v = r.vectors.gather_to_root();
  bool ok = true;
  if (comm.is_root()) {
    const int n = a.n;
    Dense vectors;
    const std::vector<double> w = test::serial_eigh(a, vectors);  // ascending
    const double norm = std::max(std::abs(w.front()), std::abs(w.back()));
    for (int j = 0; j < k; ++j) {
      const double ref = w[std::size_t(n - 1 - j)];
      const bool value_ok = std::abs(r.values[j] - ref) <= 1e-10 * std::abs(ref);
      EXPECT_TRUE(value_ok) << what << ": eigenvalue " << j << " " << r.values[j] << " vs " << ref;
      const double* vj = &v[std::size_t(j) * n];
      const double* rj = &vectors.a[std::size_t(n - 1 - j) * n];
      double dot = 0;
      for (int i = 0; i < n; ++i) dot += vj[i] * rj[i];
      const double sign = dot < 0 ? -1 : 1;
      double diff = 0;
      for (int i = 0; i < n; ++i) diff = std::max(diff, std::abs(vj[i] - sign * rj[i]));
      EXPECT_LE(diff, 1e-10) << what << ": eigenvector " << j;
      const double residual = test::serial_residual(a, vj, r.values[j], n);
      EXPECT_LE(residual, 1e-11 * norm) << what << ": residual " << j;
      EXPECT_LE(std::abs(through_op[j] - residual), 1e-12 * norm)
          << what << ": residual_norms " << j;
      ok = ok && value_ok && diff <= 1e-10 && residual <= 1e-11 * norm &&
           std::abs(through_op[j] - residual) <= 1e-12 * norm;
      for (int l = 0; l <= j; ++l) {
        double g = 0;
        for (int i = 0; i < n; ++i) g += vj[i] * v[std::size_t(l) * n + i];
        const bool orthonormal = std::abs(g - (l == j ? 1.0 : 0.0)) <= 1e-12;
        EXPECT_TRUE(orthonormal) << what << ": (V^T V)(" << l << ", " << j << ") = " << g;
        ok = ok && orthonormal;
      }
    }
  }
  EXPECT_TRUE(all_ranks(comm, ok)) << what;
}

// Whether two results agree bit for bit (vectors: this rank's local block).
bool identical(const KrylovResult& x, const KrylovResult& y) {
  const auto same_bits = [](const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
  };
  bool same = same_bits(x.values, y.values) && same_bits(x.residuals, y.residuals) &&
              same_bits(x.residual_norms, y.residual_norms) &&
              same_bits(x.cycle_residuals, y.cycle_residuals) && x.cycles == y.cycles &&
              x.matvecs == y.matvecs && x.converged == y.converged &&
              x.at_precision_floor == y.at_precision_floor && x.broke_down == y.broke_down &&
              std::memcmp(&x.norm_estimate, &y.norm_estimate, sizeof(double)) == 0 &&
              x.vectors.local_rows() == y.vectors.local_rows() &&
              x.vectors.local_cols() == y.vectors.local_cols();
  for (int lj = 0; same && lj < x.vectors.local_cols(); ++lj)
    same = std::memcmp(x.vectors.column(lj), y.vectors.column(lj),
                       std::size_t(x.vectors.local_rows()) * sizeof(double)) == 0;
  return same;
}

}  // namespace

TEST(SymmetricOperator, ReplicatedDenseMatchesLapackOnEveryGrid) {
  const Comm world = Comm::world();
  const int n = 150, k = 4;
  const Dense a = dense_reflected(separated_spectrum(n, 5), 9);
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    for (int nb : {1, 16, 64}) {
      ReplicatedDense op(grid, a, nb);
      KrylovSettings settings;
      const KrylovResult r = spectral::krylov_top_eigenpairs(op, k, settings);
      const std::string what =
          std::to_string(p) + "x" + std::to_string(q) + " nb " + std::to_string(nb);
      // Every block product went through the operator (residual_norms adds one).
      EXPECT_EQ(op.products, r.matvecs) << what;
      expect_top_pairs(op, r, a, k, what);
      EXPECT_EQ(op.products, r.matvecs + 1) << what;
    }
  }
}

TEST(SymmetricOperator, DiagonalPlusLowRankMatchesLapackOnEveryGrid) {
  const Comm world = Comm::world();
  const int n = 200, k = 4;
  const std::vector<double> d = uniform(std::size_t(n), -1, 1, 21);
  std::vector<double> u = test::random_data(n, 5, 23);  // 5 columns of n
  for (int c = 0; c < 5; ++c) {
    double norm = 0;
    for (int i = 0; i < n; ++i) norm += u[std::size_t(c) * n + i] * u[std::size_t(c) * n + i];
    for (int i = 0; i < n; ++i) u[std::size_t(c) * n + i] /= std::sqrt(norm);
  }
  const std::vector<double> s = {9, 7, 5, 3, 1.5};
  const Dense a = dense_low_rank(d, u, s);
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    for (int nb : {3, 32}) {
      DiagonalPlusLowRank op(grid, d, u, s, nb);
      KrylovSettings settings;
      settings.seed = 7;
      const KrylovResult r = spectral::krylov_top_eigenpairs(op, k, settings);
      expect_top_pairs(op, r, a, k,
                       std::to_string(p) + "x" + std::to_string(q) + " nb " + std::to_string(nb));
    }
  }
}

// Whether a given matrix's rounding breaks the iteration depends on the BLAS
// kernels (test_eigensolvers' MCA case breaks down with OpenBLAS's Haswell
// kernels and converges with its SkylakeX ones): products that are no one
// matrix's break it whatever the kernels.
TEST(SymmetricOperator, CorruptedProductsAreCaughtAsABreakdownWithinAFewCycles) {
  const Comm world = Comm::world();
  const int n = 150, k = 4;
  const Dense a = dense_reflected(separated_spectrum(n, 5), 9);  // ||A||_2 = 10
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    ReplicatedDense exact(grid, a, 16);
    CorruptedProducts op(exact, 100);
    const KrylovResult r = spectral::krylov_top_eigenpairs(op, k, KrylovSettings{});
    const std::string what = std::to_string(p) + "x" + std::to_string(q);
    EXPECT_TRUE(r.broke_down) << what << ", cycles " << r.cycles;
    EXPECT_FALSE(r.converged) << what;
    EXPECT_LE(r.cycles, 2 + spectral::kKrylovGrowthCycles) << what;
    EXPECT_EQ(std::size_t(r.cycles), r.cycle_residuals.size()) << what;
  }
}

TEST(SymmetricOperator, StoredOperatorGivesTheStoredMatrixResultBitForBit) {
  const Comm world = Comm::world();
  const int n = 150, k = 4;
  const std::vector<double> lambda = separated_spectrum(n, 31);
  const test::ReflectedSpectrum entry(lambda, test::random_data(n, 1, 33));
  const Dense dense = dense_reflected(lambda, 33);
  std::vector<double> top = lambda;
  std::sort(top.rbegin(), top.rend());
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    for (int nb : {8, 32}) {
      const std::string where =
          std::to_string(p) + "x" + std::to_string(q) + " nb " + std::to_string(nb);
      const auto check = [&](const auto& a, KrylovProduct product, double tol,
                             const std::string& what) {
        KrylovSettings settings;
        settings.product = product;
        settings.tol = tol;
        const KrylovResult wrapped = spectral::krylov_top_eigenpairs(a, k, settings);
        StoredOperator op(a, product);
        EXPECT_EQ(op.order(), n);
        EXPECT_EQ(op.block_size(), nb);
        EXPECT_EQ(&op.grid(), &a.grid());
        EXPECT_EQ(op.rows().local_size(), rows_of(grid, n, nb).local_size());
        const KrylovResult direct = spectral::krylov_top_eigenpairs(op, k, settings);
        EXPECT_TRUE(all_ranks(world, identical(wrapped, direct))) << where << " " << what;
        // And both right: the spectrum the matrix was built with.
        EXPECT_TRUE(direct.converged) << where << " " << what;
        for (int j = 0; j < k && j < int(direct.values.size()); ++j)
          EXPECT_NEAR(direct.values[j], top[j], (tol > 1e-10 ? 1e-5 : 1e-10) * top[j])
              << where << " " << what << " value " << j;
      };
      DistMatrix full(grid, n, n, nb, nb);
      full.fill([&](std::int64_t i, std::int64_t j) { return entry(i, j); });
      check(full, KrylovProduct::local, 1e-12, "double full local");
      check(full, KrylovProduct::pdgemm, 1e-12, "double full pdgemm");
      DistMatrix lower(grid, n, n, nb, nb);
      lower.fill([&](std::int64_t i, std::int64_t j) { return entry(i, j); });
      lower.set_storage(Storage::lower_blocks);
      check(lower, KrylovProduct::local, 1e-12, "double lower local");
      SingleMatrix single(grid, n, n, nb, nb);
      single.fill([&](std::int64_t i, std::int64_t j) { return float(entry(i, j)); });
      check(single, KrylovProduct::local, spectral::kSingleDefaultTol, "single full local");
      single.set_storage(Storage::lower_blocks);
      check(single, KrylovProduct::local, spectral::kSingleDefaultTol, "single lower local");
      // The test's own operator on the same matrix agrees to round-off.
      ReplicatedDense replicated(grid, dense, nb);
      const KrylovResult mine = spectral::krylov_top_eigenpairs(replicated, k, KrylovSettings{});
      const KrylovResult stored = spectral::krylov_top_eigenpairs(full, k, KrylovSettings{});
      for (int j = 0; j < k; ++j)
        EXPECT_NEAR(mine.values[j], stored.values[j], 1e-12 * top[0]) << where << " value " << j;
    }
  }
}

TEST(SymmetricOperator, StoredOperatorCost) {
  // Summed over the ranks, a product reads every entry of A once (lower
  // blocks: the blocks below the diagonal twice), and the matrix holds n^2
  // values (lower blocks: those of the blocks on and below the diagonal).
  const Comm world = Comm::world();
  const int n = 150, nb = 8, w = 24;
  const std::int64_t blocks = (n + nb - 1) / nb;
  double lower_entries = 0;
  for (std::int64_t j = 0; j < blocks; ++j)
    lower_entries += double(std::min<std::int64_t>(nb, n - j * nb)) * double(n - j * nb);
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    DistMatrix full(grid, n, n, nb, nb), lower(grid, n, n, nb, nb);
    lower.set_storage(Storage::lower_blocks);
    SingleMatrix single(grid, n, n, nb, nb);
    const OperatorCost cf = StoredOperator(full, KrylovProduct::local).cost(w);
    const OperatorCost cl = StoredOperator(lower, KrylovProduct::local).cost(w);
    const OperatorCost cs = StoredOperator(single, KrylovProduct::local).cost(w);
    const OperatorCost cp = StoredOperator(full, KrylovProduct::pdgemm).cost(w);
    EXPECT_EQ(world.sum(cf.flops), 2.0 * n * n * w);
    EXPECT_EQ(world.sum(cl.flops), 2.0 * n * n * w);
    EXPECT_EQ(world.sum(cs.flops), 2.0 * n * n * w);
    EXPECT_EQ(world.sum(cp.flops), 2.0 * n * n * w);
    EXPECT_EQ(world.sum((long long)cf.held_bytes), (long long)n * n * 8);
    EXPECT_EQ(world.sum((long long)cs.held_bytes), (long long)n * n * 4);
    EXPECT_EQ(world.sum((long long)cl.held_bytes), (long long)lower_entries * 8);
    // The working blocks: at least X's rows and the reduce-scatter's n x w.
    const double line = rows_of(grid, n, nb).local_size();
    EXPECT_TRUE(all_ranks(world, double(cf.work_bytes) >= (n + 2 * line) * w * 8 &&
                                     cs.work_bytes < cf.work_bytes && cp.work_bytes > 0));
  }
}

TEST(SymmetricOperator, ErrorsAreAgreed) {
  const Comm world = Comm::world();
  BlacsGrid grid(world);
  const int n = 40;
  DistMatrix lower(grid, n, n, 8, 8);
  lower.set_storage(Storage::lower_blocks);
  SingleMatrix single(grid, n, n, 8, 8);
  // pdgemm reads only full double-precision storage.
  const std::string lower_pdgemm =
      test::caught([&] { StoredOperator op(lower, KrylovProduct::pdgemm); });
  const std::string single_pdgemm =
      test::caught([&] { StoredOperator op(single, KrylovProduct::pdgemm); });
  EXPECT_TRUE(all_ranks(world, lower_pdgemm.find("full storage") != std::string::npos))
      << lower_pdgemm;
  EXPECT_TRUE(all_ranks(world, single_pdgemm.find("double-precision") != std::string::npos))
      << single_pdgemm;
  const Dense a = dense_reflected(separated_spectrum(n, 41), 43);
  ReplicatedDense op(grid, a, 8);
  EXPECT_THROW(spectral::krylov_top_eigenpairs(op, 0, KrylovSettings{}), Error);
  EXPECT_THROW(spectral::krylov_top_eigenpairs(op, n + 1, KrylovSettings{}), Error);
  // Rows dealt in blocks of 16 where the operator says 8: refused on every rank.
  ReplicatedDense misdealt(grid, a, 8, 16);
  const std::string message =
      test::caught([&] { spectral::krylov_top_eigenpairs(misdealt, 4, KrylovSettings{}); });
  EXPECT_TRUE(all_ranks(world, message.find("rows") != std::string::npos)) << message;
}
