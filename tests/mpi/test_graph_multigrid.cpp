// The graph multigrid (GraphMultigrid) and LOBPCG on the normalized
// affinity it preconditions, on a weighted lattice graph built here: the
// V-cycle is symmetric and positive on zero-sum vectors, converges as an
// iteration (which fails when a coarse graph is wrong), is L^+ itself when
// one dense level remains, and LOBPCG's eigenpairs equal LAPACK's of the
// dense M, on 1-4 ranks, with rows in contiguous blocks or cycled in
// blocks of 16 (most neighbours then on other ranks), through distributed,
// gathered and replicated levels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kembed/core/splitmix64.hpp"
#include "kembed/graph/graph_multigrid.hpp"
#include "kembed/graph/sparse_rows.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/spectral/laplacian_preconditioner.hpp"
#include "kembed/spectral/lobpcg.hpp"
#include "kembed/spectral/normalized_affinity.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using namespace kembed;

namespace {

// Weight of the lattice edge between vertices a < b: in [0.5, 1.5).
double edge_weight(std::int64_t a, std::int64_t b) {
  return 0.5 + double(mix64(std::uint64_t(a) * 1000003u + std::uint64_t(b)) >> 11) * 0x1.0p-53;
}

// The r x c lattice (vertex i * c + j; edges to the four neighbours, and
// to the diagonal neighbour (i + 1, j + 1)), this rank's rows in blocks of nb.
graph::SparseRows lattice_rows(int r, int c, int nb, const Comm& comm) {
  const std::int64_t n = std::int64_t(r) * c;
  graph::SparseRows w{BlockCyclic1D(n, nb, comm.rank(), comm.size()), {0}, {}, {}};
  for (int li = 0; li < w.rows.local_size(); ++li) {
    const std::int64_t v = w.rows.to_global(li);
    const int i = int(v / c), j = int(v % c);
    std::vector<std::int64_t> nbr;
    for (const auto& [di, dj] : {std::pair{-1, -1}, {-1, 0}, {0, -1}, {0, 1}, {1, 0}, {1, 1}})
      if (i + di >= 0 && i + di < r && j + dj >= 0 && j + dj < c)
        nbr.push_back(std::int64_t(i + di) * c + (j + dj));
    std::sort(nbr.begin(), nbr.end());
    for (std::int64_t u : nbr) {
      w.columns.push_back(u);
      w.values.push_back(edge_weight(std::min(u, v), std::max(u, v)));
    }
    w.offsets.push_back(std::int64_t(w.columns.size()));
  }
  return w;
}

test::Dense dense_of(int r, int c) {
  const int n = r * c;
  test::Dense w{n, std::vector<double>(std::size_t(n) * n, 0.0)};
  const Comm self = Comm::self();
  const graph::SparseRows all = lattice_rows(r, c, n, self);
  for (int v = 0; v < n; ++v)
    for (std::int64_t t = all.offsets[v]; t < all.offsets[v + 1]; ++t)
      w(v, int(all.columns[t])) = all.values[t];
  return w;
}

// Zero-sum vectors (width columns) by global row, the same on any rank count.
std::vector<double> zero_sum(const BlockCyclic1D& rows, int width, std::uint64_t seed,
                             const Comm& comm) {
  const int m = rows.local_size(), ld = std::max(1, m);
  std::vector<double> x(std::size_t(ld) * width, 0.0);
  std::vector<double> sums(std::size_t(width), 0.0);
  for (int c = 0; c < width; ++c)
    for (int i = 0; i < m; ++i) {
      x[i + std::size_t(c) * ld] = counter_gaussian(seed, std::uint64_t(rows.to_global(i)), c);
      sums[c] += x[i + std::size_t(c) * ld];
    }
  comm.sum_in_place(sums);
  for (int c = 0; c < width; ++c)
    for (int i = 0; i < m; ++i) x[i + std::size_t(c) * ld] -= sums[c] / double(rows.global_size());
  return x;
}

double dot(const std::vector<double>& a, const std::vector<double>& b, int rows, int ld, int ca,
           int cb, const Comm& comm) {
  double s = 0;
  for (int i = 0; i < rows; ++i) s += a[i + std::size_t(ca) * ld] * b[i + std::size_t(cb) * ld];
  return comm.sum(s);
}

struct Layout {
  int nb;  // 0: one contiguous block per rank
  const char* name;
};

int block_of(const Layout& l, std::int64_t n, const Comm& comm) {
  return l.nb > 0 ? l.nb : int((n + comm.size() - 1) / comm.size());
}

// sqrt(degree) / ||sqrt(degree)||, M's eigenvector of eigenvalue 1 (this rank's rows).
std::vector<double> top_vector(const spectral::NormalizedAffinity& op, const Comm& comm) {
  std::vector<double> top;
  double norm = 0;
  for (double d : op.degrees()) {
    top.push_back(std::sqrt(d));
    norm += d;
  }
  norm = std::sqrt(comm.sum(norm));
  for (double& t : top) t /= norm;
  return top;
}

graph::MultigridSettings small_levels() {
  graph::MultigridSettings s;
  s.coarsest = 12;
  s.gather = 150;
  return s;
}

}  // namespace

// <B x, y> = <x, B y> and <B x, x> > 0 for zero-sum x, y; the hierarchy has
// several levels, a copy onto every rank above one rank, and ends small.
TEST(GraphMultigrid, VcycleIsSymmetricAndPositive) {
  const Comm comm = Comm::world();
  const int r = 30, c = 40, width = 4;
  for (const Layout layout : {Layout{0, "contiguous"}, Layout{16, "cycled"}}) {
    const graph::SparseRows w = lattice_rows(r, c, block_of(layout, r * c, comm), comm);
    graph::GraphMultigrid mg(w, comm, small_levels());
    ASSERT_TRUE(mg.usable()) << layout.name;
    const auto& sizes = mg.level_sizes();
    EXPECT_GE(sizes.size(), 3u) << layout.name;
    EXPECT_LE(sizes.back(), 12) << layout.name;
    for (std::size_t l = 1; l < sizes.size(); ++l) EXPECT_LE(sizes[l], sizes[l - 1]);
    const int m = w.rows.local_size(), ld = std::max(1, m);
    const auto x = zero_sum(w.rows, width, 7, comm);
    std::vector<double> bx(x.size());
    mg.solve(x.data(), ld, width, bx.data(), ld);
    for (int a = 0; a < width; ++a) {
      EXPECT_GT(dot(bx, x, m, ld, a, a, comm), 0) << layout.name;
      for (int b = a + 1; b < width; ++b) {
        const double ab = dot(bx, x, m, ld, a, b, comm), ba = dot(bx, x, m, ld, b, a, comm);
        EXPECT_NEAR(ab, ba, 1e-12 * std::max(1.0, std::abs(ab))) << layout.name << " " << a << b;
      }
    }
  }
}

// As an iteration e <- (I - B L) e (the coarse correction unweighted), the
// V-cycle shrinks the error in the energy norm ||e||_L every step: a coarse
// graph that is not P^T L P, or a restriction that loses weight, does not.
TEST(GraphMultigrid, VcycleIterationConverges) {
  const Comm comm = Comm::world();
  const int r = 30, c = 40, width = 2;
  for (const Layout layout : {Layout{0, "contiguous"}, Layout{16, "cycled"}}) {
    const graph::SparseRows w = lattice_rows(r, c, block_of(layout, r * c, comm), comm);
    graph::MultigridSettings s = small_levels();
    s.correction_weight = 1;
    graph::GraphMultigrid mg(w, comm, s);
    ASSERT_TRUE(mg.usable());
    const int m = w.rows.local_size(), ld = std::max(1, m);
    auto e = zero_sum(w.rows, width, 11, comm);
    std::vector<double> le(e.size()), ble(e.size());
    const auto energy = [&](int col) {
      mg.laplacian(e.data(), ld, width, le.data(), ld);
      return std::sqrt(dot(e, le, m, ld, col, col, comm));
    };
    double before = energy(0);
    for (int step = 0; step < 8; ++step) {
      mg.laplacian(e.data(), ld, width, le.data(), ld);
      mg.solve(le.data(), ld, width, ble.data(), ld);
      for (std::size_t t = 0; t < e.size(); ++t) e[t] -= ble[t];
      const double after = energy(0);
      EXPECT_LT(after, 0.9 * before) << layout.name << " step " << step;
      before = after;
    }
  }
}

// One level small enough to be factored: B b = L^+ b, so L B b = b.
TEST(GraphMultigrid, SingleDenseLevelIsTheInverse) {
  const Comm comm = Comm::world();
  const int r = 6, c = 7, width = 3;
  const graph::SparseRows w = lattice_rows(r, c, 5, comm);
  graph::GraphMultigrid mg(w, comm, {});
  ASSERT_TRUE(mg.usable());
  EXPECT_EQ(mg.level_sizes().back(), r * c);
  const int m = w.rows.local_size(), ld = std::max(1, m);
  const auto b = zero_sum(w.rows, width, 3, comm);
  std::vector<double> x(b.size()), lx(b.size());
  mg.solve(b.data(), ld, width, x.data(), ld);
  mg.laplacian(x.data(), ld, width, lx.data(), ld);
  double err = 0;
  for (std::size_t t = 0; t < b.size(); ++t) err = std::max(err, std::abs(lx[t] - b[t]));
  EXPECT_LT(comm.max(err), 1e-12);
}

// LOBPCG with the multigrid on M = D^-1/2 W D^-1/2, the top vector
// sqrt(degree) deflated: the next four eigenvalues and vectors equal those
// of LAPACK's dense eigendecomposition (vectors up to sign), on every rank
// count and layout.
TEST(GraphMultigrid, LobpcgMatchesDenseEigenpairs) {
  const Comm comm = Comm::world();
  const int r = 24, c = 25, n = r * c, k = 4;
  const test::Dense w = dense_of(r, c);
  std::vector<double> degree(n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) degree[i] += w(i, j);
  test::Dense mdense{n, std::vector<double>(std::size_t(n) * n)};
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) mdense(i, j) = w(i, j) / std::sqrt(degree[i] * degree[j]);
  test::Dense v;
  const auto lambda = test::serial_eigh(mdense, v);  // ascending; lambda[n-1] = 1
  for (const Layout layout : {Layout{0, "contiguous"}, Layout{16, "cycled"}}) {
    const int nb = block_of(layout, n, comm);
    BlacsGrid grid(comm);
    graph::SparseRows rows = lattice_rows(r, c, nb, comm);
    graph::GraphMultigrid mg(rows, comm, small_levels());
    ASSERT_TRUE(mg.usable());
    spectral::NormalizedAffinity op(std::move(rows), grid);
    const std::vector<double> top = top_vector(op, comm);
    spectral::NormalizedLaplacianPreconditioner t(mg);
    spectral::LobpcgSettings settings;
    const auto result = spectral::lobpcg_top_eigenpairs(op, k, t, settings, top);
    ASSERT_TRUE(result.converged) << layout.name;
    for (int j = 0; j < k; ++j) {
      EXPECT_NEAR(result.values[j], lambda[n - 2 - j], 1e-12) << layout.name << " pair " << j;
      EXPECT_LE(result.residuals[j], 1e-12) << layout.name;
    }
    // Vectors: each column against LAPACK's, up to sign.
    const int m = op.rows().local_size(), ld = std::max(1, m);
    double worst = 0;
    for (int j = 0; j < k; ++j) {
      double s = 0;
      for (int i = 0; i < m; ++i)
        s += result.vectors[i + std::size_t(j) * ld] * v(int(op.rows().to_global(i)), n - 2 - j);
      const double sign = comm.sum(s) < 0 ? -1 : 1;
      for (int i = 0; i < m; ++i)
        worst = std::max(worst, std::abs(result.vectors[i + std::size_t(j) * ld] -
                                         sign * v(int(op.rows().to_global(i)), n - 2 - j)));
    }
    EXPECT_LT(comm.max(worst), 1e-9) << layout.name;
  }
}

// A tolerance below round-off: LOBPCG stops at its precision floor (the
// largest residual no longer halving), converged and saying so, with
// residuals far below kFloorAccepted, long before max_iterations.
TEST(GraphMultigrid, LobpcgStopsAtItsPrecisionFloor) {
  const Comm comm = Comm::world();
  const int r = 24, c = 25, k = 2;
  BlacsGrid grid(comm);
  graph::SparseRows rows = lattice_rows(r, c, block_of(Layout{0, ""}, r * c, comm), comm);
  graph::GraphMultigrid mg(rows, comm, small_levels());
  spectral::NormalizedAffinity op(std::move(rows), grid);
  const std::vector<double> top = top_vector(op, comm);
  spectral::NormalizedLaplacianPreconditioner t(mg);
  spectral::LobpcgSettings settings;
  settings.tol = 1e-19;
  const auto result = spectral::lobpcg_top_eigenpairs(op, k, t, settings, top);
  EXPECT_TRUE(result.converged);
  EXPECT_TRUE(result.at_precision_floor);
  EXPECT_LT(result.iterations, 300);
  for (double res : result.residuals) EXPECT_LT(res, 1e-13);
}

// The memory plan's count of the hierarchy (multigrid_planned_bytes, what
// kembed plan and the guard add up) bounds what the built hierarchy holds
// and one V-cycle's work blocks, on every rank, for either layout.
TEST(GraphMultigrid, PlannedBytesBoundTheHierarchy) {
  const Comm comm = Comm::world();
  const int r = 30, c = 40, width = 4;
  for (const Layout layout : {Layout{0, "contiguous"}, Layout{16, "cycled"}}) {
    const graph::SparseRows w = lattice_rows(r, c, block_of(layout, r * c, comm), comm);
    for (const graph::MultigridSettings& s : {small_levels(), graph::MultigridSettings{}}) {
      graph::GraphMultigrid mg(w, comm, s);
      ASSERT_TRUE(mg.usable());
      const double rows = w.rows.local_size(), entries = double(w.nonzeros());
      const double planned =
          graph::multigrid_planned_bytes(r * c, rows, entries, entries, width, s);
      const double held = double(mg.held_bytes() + mg.work_bytes(width));
      EXPECT_TRUE(test::all_ranks(comm, held <= planned))
          << layout.name << ": held " << held << ", planned " << planned;
      EXPECT_GT(held, 0);
    }
  }
}
