// Correspondence analysis of sparse tables (SparseNormalOperator,
// fit_sparse_ca) against the dense fit_ca on the same table (its S formed
// in place over the block-cyclic table, solved by pdsyevd: another path
// throughout), and against identities: the normal operator's product
// against B^T B formed by loops here, the total inertia of an indicator
// matrix (J - Q) / Q, contributions summing to 1. Equal, skewed and partly
// empty row ranges; empty rows and columns refused or dropped with the dense
// path's messages; bad tables and settings fail on every rank. MCA's
// indicator matrix as the categorical reader builds it: a hand-written
// table's CSR rows, and its fit and Burt inertia against the dense fit and
// S^T S formed by loops here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "kembed/core/error.hpp"
#include "kembed/distribute/read_distributed.hpp"
#include "kembed/io/categorical_file.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/spectral/burt_inertia.hpp"
#include "kembed/spectral/ca.hpp"
#include "kembed/spectral/sparse_ca.hpp"
#include "kembed/spectral/sparse_normal_operator.hpp"
#include "sparse_rows_support.hpp"
#include "test_support.hpp"

using namespace kembed;
using namespace kembed::spectral;
using kembed::test::all_ranks;
using kembed::test::max_abs_diff;

namespace {

using kembed::test::kSplits;
using kembed::test::my_rows;
using kembed::test::Split;




// Row-major counts, about `density` of them non-zero (1 to 9).
std::vector<double> sparse_counts(int rows, int cols, double density, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> coin(0, 1);
  std::uniform_int_distribution<int> count(1, 9);
  std::vector<double> n(std::size_t(rows) * cols, 0.0);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      if (coin(gen) < density) n[std::size_t(i) * cols + j] = count(gen);
  // Every row and column non-empty: the diagonal of the table gets a count.
  for (int i = 0; i < rows; ++i) n[std::size_t(i) * cols + (i % cols)] += 1;
  for (int j = 0; j < cols; ++j) n[std::size_t(j % rows) * cols + j] += 1;
  return n;
}

// The dense fit: the table scattered block-cyclically, pdsyevd.
CaResult dense_fit(const BlacsGrid& grid, const std::vector<double>& n_ij, int rows, int cols,
                   CaSettings settings) {
  DistMatrix table(grid, rows, cols, settings.block_size, settings.block_size);
  std::vector<double> column_major(n_ij.size());
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      column_major[std::size_t(j) * rows + i] = n_ij[std::size_t(i) * cols + j];
  table.scatter_from_root(column_major);
  settings.solver = Solver::evd;
  PhaseTimer timer;
  return fit_ca(table, settings, "table", {}, {}, timer);
}

double largest(const std::vector<double>& v) {
  double m = 0;
  for (double e : v) m = std::max(m, std::abs(e));
  return m;
}

// Every field of the sparse fit against the dense one, on every rank (the
// rank-0 arrays on rank 0, the verdict shared).
void expect_same(const Comm& comm, const CaResult& s, const CaResult& d, const std::string& what) {
  EXPECT_EQ(s.k, d.k) << what;
  EXPECT_EQ(s.rows, d.rows) << what;
  EXPECT_EQ(s.cols, d.cols) << what;
  EXPECT_EQ(s.route, CaRoute::columns) << what;
  EXPECT_NEAR(s.grand_total, d.grand_total, 1e-13 * d.grand_total) << what;
  EXPECT_NEAR(s.total_inertia, d.total_inertia, 1e-12 * d.total_inertia) << what;
  bool values_ok = s.principal_inertias.size() == d.principal_inertias.size();
  for (std::size_t t = 0; values_ok && t < s.principal_inertias.size(); ++t)
    values_ok = std::abs(s.principal_inertias[t] - d.principal_inertias[t]) <=
                1e-10 * d.principal_inertias[t];
  EXPECT_TRUE(all_ranks(comm, values_ok)) << what << ": principal inertias";
  bool residuals_ok = int(s.residuals.size()) == s.k;
  for (double r : s.residuals) residuals_ok = residuals_ok && r < 1e-10;
  EXPECT_TRUE(all_ranks(comm, residuals_ok)) << what << ": residuals";
  for (const auto& [sp, dp, side] : {std::tuple{&s.row_points, &d.row_points, "rows"},
                                     std::tuple{&s.col_points, &d.col_points, "columns"}}) {
    EXPECT_EQ(sp->dropped, dp->dropped) << what << " " << side;
    EXPECT_LE(max_abs_diff(sp->mass, dp->mass), 1e-15) << what << " " << side;
    EXPECT_LE(max_abs_diff(sp->inertia, dp->inertia), 1e-12 * d.total_inertia)
        << what << " " << side;
    bool ok = true;
    if (comm.is_root())
      ok = max_abs_diff(sp->standard, dp->standard) <= 1e-8 * largest(dp->standard) &&
           max_abs_diff(sp->principal, dp->principal) <= 1e-8 * largest(dp->principal) &&
           max_abs_diff(sp->contribution, dp->contribution) <= 1e-8 &&
           max_abs_diff(sp->cos2, dp->cos2) <= 1e-8 &&
           max_abs_diff(sp->quality, dp->quality) <= 1e-8;
    EXPECT_TRUE(all_ranks(comm, ok)) << what << " " << side << ": coordinates";
    // Contributions of one dimension sum to 1 over the points.
    bool sums_ok = true;
    if (comm.is_root())
      for (int t = 0; t < s.k; ++t) {
        double sum = 0;
        for (std::size_t i = 0; i < sp->mass.size(); ++i) sum += sp->contribution[i * s.k + t];
        sums_ok = sums_ok && std::abs(sum - 1) < 1e-10;
      }
    EXPECT_TRUE(all_ranks(comm, sums_ok)) << what << " " << side << ": contributions";
  }
}

CaResult sparse_fit(const Comm& comm, const BlacsGrid& grid, const std::vector<double>& n_ij,
                    int rows, int cols, Split split, const CaSettings& settings) {
  const io::CsrRows table = my_rows(comm, n_ij, rows, cols, split);
  PhaseTimer timer;
  return fit_sparse_ca(table, grid, settings, "table", timer);
}

}  // namespace

// y = B^T B x for random factors (some zero) against B formed by loops.
TEST(SparseNormalOperator, ProductMatchesDenseNormalMatrix) {
  const Comm comm = Comm::world();
  const int n = 50, d = 23, width = 4;
  const auto x = sparse_counts(n, d, 0.2, 3);
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<double> u(-1, 2);
  std::vector<double> da(n), a(n), db(d), b(d), block(std::size_t(d) * width);
  for (double& v : da) v = u(gen);
  for (double& v : a) v = u(gen);
  for (double& v : db) v = u(gen);
  for (double& v : b) v = u(gen);
  for (double& v : block) v = u(gen);  // column-major d x width
  da[7] = a[7] = db[4] = b[4] = 0;
  // C = B^T B, B_ij = da_i x_ij db_j - a_i b_j.
  std::vector<double> c(std::size_t(d) * d, 0.0);
  for (int p = 0; p < d; ++p)
    for (int q = 0; q < d; ++q)
      for (int i = 0; i < n; ++i)
        c[std::size_t(p) * d + q] += (da[i] * x[std::size_t(i) * d + p] * db[p] - a[i] * b[p]) *
                                     (da[i] * x[std::size_t(i) * d + q] * db[q] - a[i] * b[q]);
  BlacsGrid grid(comm, 1, comm.size());
  for (Split split : kSplits)
    for (int nb : {1, 5}) {
      const io::CsrRows rows = my_rows(comm, x, n, d, split);
      NormalFactors f;
      f.row_scale.assign(da.begin() + rows.first_row,
                         da.begin() + rows.first_row + rows.local_rows());
      f.row_shift.assign(a.begin() + rows.first_row,
                         a.begin() + rows.first_row + rows.local_rows());
      f.col_scale = db;
      f.col_shift = b;
      check_csr_rows(rows, comm, "product.npz");
      SparseNormalOperator op(rows, grid, nb, f);
      const BlockCyclic1D& layout = op.rows();
      const int ld = std::max(1, layout.local_size()) + 1;
      std::vector<double> in(std::size_t(ld) * width, 0.0), out(std::size_t(ld) * width, 0.0);
      for (int k = 0; k < width; ++k)
        for (int l = 0; l < layout.local_size(); ++l)
          in[std::size_t(k) * ld + l] = block[std::size_t(k) * d + layout.to_global(l)];
      op.apply(in.data(), ld, width, out.data(), ld);
      double worst = 0, scale = 0;
      for (int k = 0; k < width; ++k)
        for (int l = 0; l < layout.local_size(); ++l) {
          const std::int64_t g = layout.to_global(l);
          double s = 0;
          for (int q = 0; q < d; ++q)
            s += c[std::size_t(g) * d + q] * block[std::size_t(k) * d + q];
          worst = std::max(worst, std::abs(out[std::size_t(k) * ld + l] - s));
          scale = std::max(scale, std::abs(s));
        }
      EXPECT_LE(comm.max(worst), 1e-12 * comm.max(scale)) << "block " << nb;
      // B V for this rank's rows against the loops.
      std::vector<double> v(std::size_t(d) * width), t(std::size_t(rows.local_rows()) * width);
      for (int q = 0; q < d; ++q)
        for (int k = 0; k < width; ++k)
          v[std::size_t(q) * width + k] = block[std::size_t(k) * d + q];
      op.left_product(v.data(), width, t.data());
      double worst_t = 0;
      for (std::int64_t li = 0; li < rows.local_rows(); ++li)
        for (int k = 0; k < width; ++k) {
          const std::int64_t i = rows.first_row + li;
          double s = 0;
          for (int q = 0; q < d; ++q)
            s += (da[i] * x[std::size_t(i) * d + q] * db[q] - a[i] * b[q]) *
                 v[std::size_t(q) * width + k];
          worst_t = std::max(worst_t, std::abs(t[std::size_t(li) * width + k] - s));
        }
      EXPECT_LE(comm.max(worst_t), 1e-12) << "block " << nb;
      EXPECT_EQ(op.products(), 1);
    }
}

TEST(SparseCa, MatchesDenseFit) {
  const Comm comm = Comm::world();
  BlacsGrid grid(comm);
  for (const auto& [rows, cols, density] : {std::tuple{120, 30, 0.15}, std::tuple{40, 60, 0.3}}) {
    const auto n_ij = sparse_counts(rows, cols, density, unsigned(rows + cols));
    CaSettings settings;
    settings.components = 4;
    settings.block_size = 8;
    const CaResult dense = dense_fit(grid, n_ij, rows, cols, settings);
    for (Split split : kSplits)
      for (int nb : {1, 8}) {
        settings.block_size = nb;
        const CaResult sparse = sparse_fit(comm, grid, n_ij, rows, cols, split, settings);
        expect_same(comm, sparse, dense,
                    std::to_string(rows) + " x " + std::to_string(cols) + ", split " +
                        std::to_string(int(split)) + ", block " + std::to_string(nb));
        EXPECT_EQ(sparse.solver_used, "krylov");
        EXPECT_TRUE(sparse.spectrum.empty());
      }
  }
}

// An MCA indicator matrix: Q = 4 variables of 3, 4, 2 and 5 levels, one 1
// per variable in each row. Its total inertia is (J - Q) / Q = 10 / 4.
TEST(SparseCa, IndicatorMatrixMatchesDenseFitAndItsTotalInertia) {
  const Comm comm = Comm::world();
  BlacsGrid grid(comm);
  const std::vector<int> levels{3, 4, 2, 5};
  const int rows = 150, cols = 14, q = 4;
  std::vector<double> z(std::size_t(rows) * cols, 0.0);
  std::mt19937_64 gen(21);
  for (int i = 0; i < rows; ++i) {
    int offset = 0;
    for (int v = 0; v < q; ++v) {
      // Level i mod L for the first rows (every level used), then related
      // to the previous variable's level so the table has structure.
      const int level = i < 5 ? i % levels[v] : int((gen() % 3 + offset + i % 2) % levels[v]);
      z[std::size_t(i) * cols + offset + level] = 1;
      offset += levels[v];
    }
  }
  CaSettings settings;
  settings.components = 3;
  settings.block_size = 4;
  const CaResult dense = dense_fit(grid, z, rows, cols, settings);
  for (Split split : kSplits) {
    const CaResult sparse = sparse_fit(comm, grid, z, rows, cols, split, settings);
    expect_same(comm, sparse, dense, "indicator, split " + std::to_string(int(split)));
    EXPECT_NEAR(sparse.total_inertia, double(cols - q) / q, 1e-12);
    EXPECT_EQ(sparse.grand_total, double(rows * q));
  }
}

TEST(SparseCa, EmptyRowsAndColumnsAreRefusedOrDroppedAsTheDenseFit) {
  const Comm comm = Comm::world();
  BlacsGrid grid(comm);
  const int rows = 45, cols = 12;
  auto n_ij = sparse_counts(rows, cols, 0.3, 9);
  for (int j = 0; j < cols; ++j)
    n_ij[std::size_t(6) * cols + j] = n_ij[std::size_t(40) * cols + j] = 0;
  for (int i = 0; i < rows; ++i) n_ij[std::size_t(i) * cols + 3] = 0;
  CaSettings settings;
  settings.components = 3;
  settings.block_size = 4;
  for (Split split : kSplits) {
    const std::string dense_message =
        test::caught([&] { dense_fit(grid, n_ij, rows, cols, settings); });
    const std::string sparse_message =
        test::caught([&] { sparse_fit(comm, grid, n_ij, rows, cols, split, settings); });
    EXPECT_NE(sparse_message.find("row 7 is all zero"), std::string::npos) << sparse_message;
    EXPECT_EQ(sparse_message, dense_message);
    EXPECT_TRUE(all_ranks(comm, !sparse_message.empty()));
  }
  settings.drop_empty = true;
  const CaResult dense = dense_fit(grid, n_ij, rows, cols, settings);
  for (Split split : kSplits) {
    const CaResult sparse = sparse_fit(comm, grid, n_ij, rows, cols, split, settings);
    expect_same(comm, sparse, dense, "dropped, split " + std::to_string(int(split)));
    EXPECT_EQ(sparse.row_points.dropped, (std::vector<std::int64_t>{6, 40}));
    EXPECT_EQ(sparse.col_points.dropped, std::vector<std::int64_t>{3});
    bool zero = true;
    if (comm.is_root())
      for (int t = 0; t < sparse.k; ++t)
        zero = zero && sparse.row_points.standard[std::size_t(40) * sparse.k + t] == 0 &&
               sparse.col_points.standard[std::size_t(3) * sparse.k + t] == 0;
    EXPECT_TRUE(all_ranks(comm, zero));
  }
}

TEST(SparseCa, BadTablesAndSettingsAreAgreedErrors) {
  const Comm comm = Comm::world();
  BlacsGrid grid(comm);
  const int rows = 20, cols = 6;
  const auto good = sparse_counts(rows, cols, 0.4, 2);
  auto negative = good;
  negative[std::size_t(17) * cols + 4] = -3;  // a late row: the last rank's
  std::vector<double> independent;            // outer product: zero inertia
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) independent.push_back(double((i % 4 + 1) * (2 * j + 3)));
  CaSettings settings;
  settings.block_size = 2;
  const struct {
    const std::vector<double>* table;
    int k;
    CaRoute route;
    Solver solver;
    std::string expected;
  } cases[] = {
      {&negative, 2, CaRoute::automatic, Solver::automatic,
       "table: row 18, column 5 holds the negative count -3; correspondence analysis needs "
       "non-negative counts"},
      {&independent, 2, CaRoute::automatic, Solver::automatic, "one of independence"},
      {&good, 6, CaRoute::automatic, Solver::automatic,
       "--components 6 must be between 1 and min(I, J) - 1 = 5"},
      {&good, 2, CaRoute::rows, Solver::automatic, "--route rows is not available"},
      {&good, 2, CaRoute::columns, Solver::evd, "--solver evd is not available"},
  };
  for (const auto& c : cases)
    for (Split split : {Split::equal, Split::skewed}) {
      settings.components = c.k;
      settings.route = c.route;
      settings.solver = c.solver;
      const std::string message =
          test::caught([&] { sparse_fit(comm, grid, *c.table, rows, cols, split, settings); });
      EXPECT_NE(message.find(c.expected), std::string::npos) << message;
      EXPECT_TRUE(all_ranks(comm, !message.empty())) << c.expected;
    }
}

namespace {

// Rank 0 writes `text` to dir/name; every rank gets the path once it exists.
std::string written(const Comm& comm, const std::string& dir, const std::string& name,
                    const std::string& text) {
  const std::string path = dir + "/" + name;
  if (comm.is_root()) std::ofstream(path) << text;
  comm.barrier();
  return path;
}

}  // namespace

// Categories sort per variable (bytes for text, numerically for integers),
// variable after variable: colour blue, green, red -> columns 0-2; size 1, 2,
// 10 -> 3-5; shape oval, round, square -> 6-8. Each rank holds an equal
// share of the rows, each row its Q = 3 columns in ascending order.
TEST(SparseCa, IndicatorRowsHoldQOnesInTheirCategoriesColumns) {
  const Comm comm = Comm::world();
  const std::string path =
      written(comm, test::scratch_dir(comm, "indicator_rows"), "t.csv",
              "colour,size,shape\nred,10,round\nblue,2,square\nred,2,round\ngreen,10,oval\n"
              "blue,1,round\n");
  const std::vector<std::vector<std::int32_t>> expected = {
      {2, 5, 7}, {0, 4, 8}, {2, 4, 7}, {1, 5, 6}, {0, 3, 7}};
  const auto input = io::open_indicator_matrix(comm, path);
  const io::CsrRows& z = input->csr();
  EXPECT_EQ(input->format(), "categorical");
  EXPECT_EQ(z.rows, 5);
  EXPECT_EQ(z.cols, 9);
  // Equal row counts: rank r starts at floor(5 r / P).
  const int p = comm.size(), r = comm.rank();
  EXPECT_EQ(z.first_row, 5 * r / p);
  EXPECT_EQ(z.local_rows(), 5 * (r + 1) / p - 5 * r / p);
  bool rows_ok = z.nonzeros() == 3 * z.local_rows() &&
                 z.values == std::vector<double>(std::size_t(z.nonzeros()), 1.0);
  for (std::int64_t i = 0; rows_ok && i < z.local_rows(); ++i) {
    rows_ok = z.offsets[std::size_t(i)] == 3 * i &&
              std::vector<std::int32_t>(z.columns.begin() + z.offsets[std::size_t(i)],
                                        z.columns.begin() + z.offsets[std::size_t(i) + 1]) ==
                  expected[std::size_t(z.first_row + i)];
  }
  EXPECT_TRUE(all_ranks(comm, rows_ok));
  EXPECT_EQ(comm.sum(static_cast<long long>(z.local_rows())), 5);
  if (comm.is_root()) {
    EXPECT_EQ(
        input->column_names(),
        (std::vector<std::string>{"colour:blue", "colour:green", "colour:red", "size:1", "size:2",
                                  "size:10", "shape:oval", "shape:round", "shape:square"}));
  }
  // The dense rows (the dense fit's path): every rank asks for all of them.
  std::vector<double> dense(45, 0.0);
  for (std::size_t i = 0; i < 5; ++i)
    for (std::int32_t j : expected[i]) dense[i * 9 + std::size_t(j)] = 1;
  EXPECT_TRUE(all_ranks(comm, input->read_rows({{0, 5}}) == dense));
}

// MCA of a categorical file on the sparse path (the reader's CSR rows,
// fit_sparse_ca) against the dense fit of the indicator matrix built here
// from the same codes (pdsyevd), and the Burt inertia against S^T S formed
// by loops: sum_jl (S^T S)_jl^2, and the dense solve's ||S^T S||_F^2 and
// spectrum.
TEST(SparseCa, McaOfACategoricalFileMatchesTheDenseFitAndItsBurtInertia) {
  const Comm comm = Comm::world();
  BlacsGrid grid(comm);
  const std::vector<int> levels{3, 4, 5};
  const int rows = 120, q = 3, cols = 12;
  std::string csv = "a,b,c\n";
  std::vector<double> z(std::size_t(rows) * cols, 0.0);
  for (int i = 0; i < rows; ++i) {
    // Every level used in the first rows; then related to one another.
    const int a = i % 3, b = i < 4 ? i : (a + (i / 7) % 2) % 4,
              c = i < 5 ? i : (b + a * (i % 3 == 0)) % 5;
    csv += "x" + std::to_string(a) + "," + std::to_string(b) + ",c" + std::to_string(c) + "\n";
    z[std::size_t(i) * cols + a] = z[std::size_t(i) * cols + 3 + b] =
        z[std::size_t(i) * cols + 7 + c] = 1;
  }
  const std::string path = written(comm, test::scratch_dir(comm, "mca_file"), "m.csv", csv);
  const auto input = io::open_indicator_matrix(comm, path);
  CaSettings settings;
  settings.components = 3;
  settings.block_size = 4;
  const CaResult dense = dense_fit(grid, z, rows, cols, settings);
  PhaseTimer timer;
  const CaResult sparse = fit_sparse_ca(input->csr(), grid, settings, path, timer);
  expect_same(comm, sparse, dense, "categorical file");
  EXPECT_NEAR(sparse.total_inertia, double(cols - q) / q, 1e-12);

  // S^T S by loops: r_i = 1/n, c_j = n_j / (n Q), s_ij = (z_ij / (n Q) -
  // c_j / n) / sqrt(c_j / n).
  std::vector<double> c(cols, 0.0);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) c[j] += z[std::size_t(i) * cols + j] / (rows * q);
  double loops = 0;
  for (int j = 0; j < cols; ++j)
    for (int l = 0; l < cols; ++l) {
      double g = 0;
      for (int i = 0; i < rows; ++i)
        g += (z[std::size_t(i) * cols + j] / (rows * q) - c[j] / rows) / std::sqrt(c[j] / rows) *
             (z[std::size_t(i) * cols + l] / (rows * q) - c[l] / rows) / std::sqrt(c[l] / rows);
      loops += g * g;
    }
  const double burt = burt_inertia(input->csr(), comm);
  EXPECT_NEAR(burt, loops, 1e-13 * loops);
  EXPECT_NEAR(burt, dense.solved_frobenius * dense.solved_frobenius, 1e-12 * loops);
  // Sum lambda^2 over the whole spectrum (the dense solve's) equals it too.
  double squares = 0;
  for (double v : dense.spectrum) squares += v * v;
  EXPECT_NEAR(burt, squares, 1e-12 * loops);
  EXPECT_TRUE(all_ranks(comm, burt == comm.max(burt)));  // the same on every rank
  // Every eigenvalue of that S^T S against the dense solve's (pdsyevd).
  const std::vector<double> spectrum = indicator_spectrum(input->csr(), comm);
  ASSERT_EQ(spectrum.size(), dense.spectrum.size());
  EXPECT_TRUE(all_ranks(comm, max_abs_diff(spectrum, dense.spectrum) < 1e-13));
  EXPECT_TRUE(all_ranks(comm, std::is_sorted(spectrum.rbegin(), spectrum.rend())));
}
