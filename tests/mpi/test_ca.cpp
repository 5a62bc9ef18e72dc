// Correspondence analysis (fit_ca) against a serial LAPACK SVD of the
// standardized residuals formed in the test, and against identities: total
// inertia = chi-square / n, the transition (barycentric) formulas, contributions
// summing to 1; both routes, every grid shape; bad tables fail on every rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kembed/core/error.hpp"
#include "kembed/spectral/ca.hpp"
#include "test_support.hpp"

extern "C" void dgesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, double* a,
                        const int* lda, double* s, double* u, const int* ldu, double* vt,
                        const int* ldvt, double* work, const int* lwork, int* info, std::size_t,
                        std::size_t);

using kembed::test::grid_shapes;

using namespace kembed;
using namespace kembed::spectral;
using kembed::test::max_abs_diff;

namespace {

// Row-major I x J counts with structure (no zero row or column).
std::vector<double> counts(int rows, int cols) {
  std::vector<double> n(std::size_t(rows) * cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      n[std::size_t(i) * cols + j] = (i * 7 + j * 13 + i * j * 3) % 11 + (i % cols == j ? 6 : 1);
  return n;
}

struct SerialCa {
  std::vector<double> r, c;        // masses
  std::vector<double> inertias;    // all min(I, J) sigma^2, descending
  std::vector<double> phi, gamma;  // I x k, J x k row-major standard coordinates
  double chi2_over_n = 0;          // from expected counts, not from S
};

// CA by the book: S by loops, LAPACK dgesvd, coordinates D^{-1/2} U, D^{-1/2} V,
// each dimension flipped so its largest |row standard coordinate| is positive.
SerialCa serial_ca(const std::vector<double>& n_ij, int rows, int cols, int k) {
  SerialCa ref;
  double n = 0;
  ref.r.assign(rows, 0.0);
  ref.c.assign(cols, 0.0);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      const double v = n_ij[std::size_t(i) * cols + j];
      n += v;
      ref.r[i] += v;
      ref.c[j] += v;
    }
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      const double expected = ref.r[i] * ref.c[j] / n;
      ref.chi2_over_n += std::pow(n_ij[std::size_t(i) * cols + j] - expected, 2) / expected / n;
    }
  for (double& v : ref.r) v /= n;
  for (double& v : ref.c) v /= n;
  std::vector<double> s(std::size_t(rows) * cols);  // column-major
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      s[std::size_t(j) * rows + i] = (n_ij[std::size_t(i) * cols + j] / n - ref.r[i] * ref.c[j]) /
                                     std::sqrt(ref.r[i] * ref.c[j]);
  const int m = std::min(rows, cols);
  std::vector<double> sv(m), u(std::size_t(rows) * m), vt(std::size_t(m) * cols);
  int lwork = -1, info = 0;
  double query = 0;
  dgesvd_("S", "S", &rows, &cols, s.data(), &rows, sv.data(), u.data(), &rows, vt.data(), &m,
          &query, &lwork, &info, 1, 1);
  lwork = int(query);
  std::vector<double> work(lwork);
  dgesvd_("S", "S", &rows, &cols, s.data(), &rows, sv.data(), u.data(), &rows, vt.data(), &m,
          work.data(), &lwork, &info, 1, 1);
  EXPECT_EQ(info, 0);
  for (double v : sv) ref.inertias.push_back(v * v);
  ref.phi.assign(std::size_t(rows) * k, 0.0);
  ref.gamma.assign(std::size_t(cols) * k, 0.0);
  for (int t = 0; t < k; ++t) {
    int arg = 0;
    for (int i = 0; i < rows; ++i) {
      ref.phi[std::size_t(i) * k + t] = u[std::size_t(t) * rows + i] / std::sqrt(ref.r[i]);
      if (std::abs(ref.phi[std::size_t(i) * k + t]) > std::abs(ref.phi[std::size_t(arg) * k + t]))
        arg = i;
    }
    const double sign = ref.phi[std::size_t(arg) * k + t] < 0 ? -1.0 : 1.0;
    for (int i = 0; i < rows; ++i) ref.phi[std::size_t(i) * k + t] *= sign;
    for (int j = 0; j < cols; ++j)
      ref.gamma[std::size_t(j) * k + t] = sign * vt[std::size_t(j) * m + t] / std::sqrt(ref.c[j]);
  }
  return ref;
}

// The row-major table as a DistMatrix on `grid`.
DistMatrix distribute(const BlacsGrid& grid, const std::vector<double>& n_ij, int rows, int cols,
                      int nb) {
  DistMatrix a(grid, rows, cols, nb, nb);
  std::vector<double> column_major(n_ij.size());
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      column_major[std::size_t(j) * rows + i] = n_ij[std::size_t(i) * cols + j];
  a.scatter_from_root(column_major);
  return a;
}

CaResult fit(const BlacsGrid& grid, const std::vector<double>& n_ij, int rows, int cols,
             CaSettings settings) {
  DistMatrix table = distribute(grid, n_ij, rows, cols, settings.block_size);
  PhaseTimer timer;
  return fit_ca(table, settings, "table", {}, {}, timer);
}

// The agreed message of a fit that must fail ("" if it did not).
std::string failure(const BlacsGrid& grid, const std::vector<double>& n_ij, int rows, int cols,
                    CaSettings settings) {
  try {
    fit(grid, n_ij, rows, cols, settings);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

struct CaCase {
  int rows, cols;
  CaRoute route;
  Solver solver;
};

class CaVsSerial : public ::testing::TestWithParam<CaCase> {};

TEST_P(CaVsSerial, MatchesSvdAndIdentities) {
  const Comm world = Comm::world();
  const auto [rows, cols, route, solver] = GetParam();
  const int k = 3;
  const auto n_ij = counts(rows, cols);
  const SerialCa ref = serial_ca(n_ij, rows, cols, k);
  double total = 0;
  for (double v : n_ij) total += v;
  CaSettings settings;
  settings.components = k;
  settings.route = route;
  settings.solver = solver;
  for (auto [p, q] : grid_shapes(world.size()))
    for (int nb : {2, 16}) {
      BlacsGrid grid(world, p, q);
      settings.block_size = nb;
      const CaResult r = fit(grid, n_ij, rows, cols, settings);
      const std::string where = std::to_string(p) + "x" + std::to_string(q) + " nb " +
                                std::to_string(nb) + " route " + ca_route_name(r.route);
      // No ASSERT: a rank leaving early would hang the others' collectives.
      EXPECT_EQ(r.k, k) << where;
      EXPECT_NEAR(r.grand_total, total, 1e-12 * total);
      EXPECT_NEAR(r.total_inertia, ref.chi2_over_n, 1e-12 * ref.chi2_over_n) << where;
      EXPECT_LT(max_abs_diff(r.row_points.mass, ref.r), 1e-15) << where;
      EXPECT_LT(max_abs_diff(r.col_points.mass, ref.c), 1e-15) << where;
      for (int t = 0; t < std::min<int>(k, int(r.principal_inertias.size())); ++t)
        EXPECT_NEAR(r.principal_inertias[t], ref.inertias[t], 1e-12 * ref.inertias[0]) << where;
      if (!world.is_root()) {
        EXPECT_TRUE(r.row_points.standard.empty());
        continue;
      }
      EXPECT_LT(max_abs_diff(r.row_points.standard, ref.phi), 1e-9) << where;
      EXPECT_LT(max_abs_diff(r.col_points.standard, ref.gamma), 1e-9) << where;
      // Transition formulas: F = D_r^{-1} P Gamma, G = D_c^{-1} P^T Phi.
      double worst = 0;
      for (int t = 0; t < k; ++t) {
        for (int i = 0; i < rows; ++i) {
          double f = 0;
          for (int j = 0; j < cols; ++j)
            f += n_ij[std::size_t(i) * cols + j] / total / ref.r[i] *
                 r.col_points.standard[std::size_t(j) * k + t];
          worst = std::max(worst, std::abs(f - r.row_points.principal[std::size_t(i) * k + t]));
        }
        for (int j = 0; j < cols; ++j) {
          double g = 0;
          for (int i = 0; i < rows; ++i)
            g += n_ij[std::size_t(i) * cols + j] / total / ref.c[j] *
                 r.row_points.standard[std::size_t(i) * k + t];
          worst = std::max(worst, std::abs(g - r.col_points.principal[std::size_t(j) * k + t]));
        }
      }
      EXPECT_LT(worst, 1e-10) << where;
      // Contributions sum to 1 per dimension; cos2 = f^2 / d^2 from the
      // profiles; the point inertias sum to the total.
      for (const CaPoints* pts : {&r.row_points, &r.col_points}) {
        const bool is_row = pts == &r.row_points;
        const int count = is_row ? rows : cols;
        double inertia_sum = 0;
        for (int t = 0; t < k; ++t) {
          double ctr = 0;
          for (int i = 0; i < count; ++i) ctr += pts->contribution[std::size_t(i) * k + t];
          EXPECT_NEAR(ctr, 1.0, 1e-12) << where;
        }
        for (int i = 0; i < count; ++i) {
          double d2 = 0;  // chi-square distance of profile i to the centroid
          for (int o = 0; o < (is_row ? cols : rows); ++o) {
            const double nio =
                is_row ? n_ij[std::size_t(i) * cols + o] : n_ij[std::size_t(o) * cols + i];
            const double mass = is_row ? ref.r[i] : ref.c[i], other = is_row ? ref.c[o] : ref.r[o];
            d2 += std::pow(nio / total / mass - other, 2) / other;
          }
          inertia_sum += pts->inertia[i];
          EXPECT_NEAR(pts->inertia[i], pts->mass[i] * d2, 1e-12) << where;
          double quality = 0;
          for (int t = 0; t < k; ++t) {
            const double f = pts->principal[std::size_t(i) * k + t];
            EXPECT_NEAR(pts->cos2[std::size_t(i) * k + t], f * f / d2, 1e-10) << where;
            quality += f * f / d2;
          }
          EXPECT_NEAR(pts->quality[i], quality, 1e-10) << where;
        }
        EXPECT_NEAR(inertia_sum, ref.chi2_over_n, 1e-12) << where;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Variants, CaVsSerial,
                         ::testing::Values(CaCase{9, 6, CaRoute::automatic, Solver::evd},
                                           CaCase{6, 9, CaRoute::automatic, Solver::evr},
                                           CaCase{9, 6, CaRoute::rows, Solver::evd},
                                           CaCase{6, 9, CaRoute::columns, Solver::krylov}),
                         [](const auto& info) {
                           return std::to_string(info.param.rows) + "x" +
                                  std::to_string(info.param.cols) + "_" +
                                  ca_route_name(info.param.route) + "_" +
                                  solver_name(info.param.solver);
                         });

// An all-zero row and column: refused by default, naming them; with
// drop_empty the same map as the table without them.
TEST(Ca, EmptyRowsAndColumnsAreRefusedOrDropped) {
  const Comm world = Comm::world();
  BlacsGrid grid(world);
  const int rows = 7, cols = 5, k = 2;
  const auto small = counts(rows, cols);
  std::vector<double> big;  // row 3 and column 2 (1-based) inserted, all zero
  for (int i = 0; i <= rows; ++i)
    for (int j = 0; j <= cols; ++j)
      big.push_back(i == 2 || j == 1 ? 0.0
                                     : small[std::size_t(i - (i > 2)) * cols + (j - (j > 1))]);
  CaSettings settings;
  settings.components = k;
  settings.block_size = 2;
  const std::string message = failure(grid, big, rows + 1, cols + 1, settings);
  EXPECT_NE(message.find("row 3 is all zero"), std::string::npos) << message;
  EXPECT_NE(message.find("--drop-empty"), std::string::npos) << message;
  EXPECT_TRUE(test::all_ranks(world, !message.empty()));

  settings.drop_empty = true;
  const CaResult dropped = fit(grid, big, rows + 1, cols + 1, settings);
  settings.drop_empty = false;
  const CaResult plain = fit(grid, small, rows, cols, settings);
  EXPECT_EQ(dropped.row_points.dropped, std::vector<std::int64_t>{2});
  EXPECT_EQ(dropped.col_points.dropped, std::vector<std::int64_t>{1});
  EXPECT_LT(max_abs_diff(dropped.principal_inertias, plain.principal_inertias), 1e-13);
  if (world.is_root()) {
    std::vector<double> kept;
    for (int i = 0; i <= rows; ++i)
      for (int t = 0; t < k; ++t)
        if (i != 2) kept.push_back(dropped.row_points.standard[std::size_t(i) * k + t]);
    EXPECT_LT(max_abs_diff(kept, plain.row_points.standard), 1e-10);
  }
}

TEST(Ca, BadTablesAreAgreedErrors) {
  const Comm world = Comm::world();
  BlacsGrid grid(world);
  CaSettings settings;
  settings.components = 2;
  settings.block_size = 2;
  auto negative = counts(6, 5);
  negative[3 * 5 + 4] = -2;
  std::vector<double> independent;  // outer product: rank 1, zero inertia
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 5; ++j) independent.push_back(double((i + 1) * (2 * j + 3)));
  const struct {
    std::vector<double> table;
    int rows, cols, k;
    std::string expected;
  } cases[] = {
      {negative, 6, 5, 2, "row 4, column 5 holds the negative count -2"},
      {independent, 6, 5, 2, "independence"},
      {counts(1, 5), 1, 5, 1, "at least 2 non-empty rows"},
      {counts(6, 5), 6, 5, 5, "--components 5 must be between 1 and min(I, J) - 1 = 4"},
  };
  for (const auto& c : cases) {
    settings.components = c.k;
    const std::string message = failure(grid, c.table, c.rows, c.cols, settings);
    EXPECT_NE(message.find(c.expected), std::string::npos) << message;
    EXPECT_TRUE(test::all_ranks(world, !message.empty())) << c.expected;
  }
}

}  // namespace
