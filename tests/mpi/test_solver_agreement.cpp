// Every solver gives the evd result for every method: eigenvalues to 1e-10
// relative and embeddings to 1e-8 after the sign convention, on every grid.
#include <gtest/gtest.h>

#include <cmath>

#include "kembed/linalg/elpa.hpp"
#include "kembed/spectral/kpca.hpp"
#include "kembed/spectral/mds.hpp"
#include "kembed/spectral/pca.hpp"
#include "kembed/spectral/spectral_step.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using kembed::test::grid_shapes;

using namespace kembed;
using namespace kembed::spectral;
using namespace kembed::kernel;

namespace {

std::vector<Solver> solvers() {
  std::vector<Solver> all = {Solver::evr, Solver::krylov};
  if (elpa::available()) all.push_back(Solver::elpa);
  return all;
}

struct Outcome {
  std::vector<double> values, embedding;
};

// Runs `fit(solver, grid)` for evd and each other solver; compares.
template <class Fit>
void expect_agreement(const Comm& world, Fit&& fit, const std::string& method) {
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    const Outcome reference = fit(Solver::evd, grid);
    for (Solver solver : solvers()) {
      const Outcome other = fit(solver, grid);
      const std::string what =
          method + " " + solver_name(solver) + " " + std::to_string(p) + "x" + std::to_string(q);
      ASSERT_EQ(other.values.size(), reference.values.size()) << what;
      for (std::size_t j = 0; j < reference.values.size(); ++j)
        EXPECT_NEAR(other.values[j], reference.values[j], 1e-10 * std::abs(reference.values[0]))
            << what;
      double worst = 0;
      for (std::size_t i = 0; i < reference.embedding.size(); ++i)
        worst = std::max(worst, std::abs(other.embedding[i] - reference.embedding[i]));
      EXPECT_LT(worst, 1e-8) << what;
    }
  }
}

}  // namespace

TEST(SolverAgreement, KernelPca) {
  const Comm world = Comm::world();
  const int n = 70, d = 5;
  const std::string dir = test::scratch_dir(world, "agree_kpca");
  auto file = io::open_matrix_file(
      world, test::write_bin(world, dir, "x.bin", test::random_data(n, d, 31)), {n, d});
  expect_agreement(world, [&](Solver solver, const BlacsGrid& grid) {
    KpcaSettings s;
    s.kernel.type = KernelType::rbf;
    s.components = 4;
    s.solver = solver;
    s.block_size = 8;
    s.krylov.tol = 1e-12;
    PhaseTimer timer;
    auto r = fit_kpca(*file, grid, s, timer);
    return Outcome{r.eigenvalues, r.embedding};
  }, "kpca");
}

TEST(SolverAgreement, PcaGramRoute) {
  const Comm world = Comm::world();
  const int n = 24, d = 60;  // d > n: the Gram route
  const std::string dir = test::scratch_dir(world, "agree_pca");
  auto file = io::open_matrix_file(
      world, test::write_bin(world, dir, "x.bin", test::random_data(n, d, 32)), {n, d});
  expect_agreement(world, [&](Solver solver, const BlacsGrid& grid) {
    PcaSettings s;
    s.components = 3;
    s.route = PcaRoute::gram;
    s.solver = solver;
    s.block_size = 4;
    s.krylov.tol = 1e-12;
    PhaseTimer timer;
    auto r = fit_pca(*file, grid, s, timer);
    return Outcome{r.explained_variance, row_major_on_root(*r.embedding)};
  }, "pca");
}

TEST(SolverAgreement, ClassicalMds) {
  const Comm world = Comm::world();
  const int n = 50, d = 4;
  const std::string dir = test::scratch_dir(world, "agree_mds");
  auto file = io::open_matrix_file(
      world, test::write_bin(world, dir, "x.bin", test::random_data(n, d, 33)), {n, d});
  expect_agreement(world, [&](Solver solver, const BlacsGrid& grid) {
    MdsSettings s;
    s.metric = Metric::euclidean;
    s.components = 3;
    s.solver = solver;
    s.block_size = 8;
    s.krylov.tol = 1e-12;
    PhaseTimer timer;
    auto r = fit_mds(*file, grid, s, timer);
    return Outcome{r.eigenvalues, r.embedding};
  }, "mds");
}

// A krylov run that cannot converge falls back to evr, and every method says
// so in its result (solver_used and solver_note), with evd's numbers.
TEST(SolverAgreement, FallbackNoteReachesEveryMethod) {
  const Comm world = Comm::world();
  const int n = 40, d = 3;
  const std::string dir = test::scratch_dir(world, "agree_fallback");
  auto file = io::open_matrix_file(
      world, test::write_bin(world, dir, "x.bin", test::random_data(n, d, 34)), {n, d});
  BlacsGrid grid(world);
  KrylovSettings stuck;
  stuck.max_cycles = 1;
  stuck.tol = 1e-300;  // unreachable
  struct Fit {
    std::string used, note;
    std::vector<double> values, evd_values;
  };
  auto expect_fallback = [&](const Fit& f, const std::string& method) {
    EXPECT_EQ(f.used, "evr") << method;
    EXPECT_NE(f.note.find("krylov did not reach --tol"), std::string::npos) << method << f.note;
    EXPECT_NE(f.note.find("fell back to evr"), std::string::npos) << method << f.note;
    ASSERT_EQ(f.values.size(), f.evd_values.size()) << method;
    for (std::size_t j = 0; j < f.values.size(); ++j)
      EXPECT_NEAR(f.values[j], f.evd_values[j], 1e-10 * std::abs(f.evd_values[0])) << method;
  };
  {
    KpcaSettings s;
    s.components = 2;
    s.block_size = 8;
    s.solver = Solver::krylov;
    s.krylov = stuck;
    PhaseTimer timer;
    const auto r = fit_kpca(*file, grid, s, timer);
    s.solver = Solver::evd;
    const auto e = fit_kpca(*file, grid, s, timer);
    expect_fallback({r.solver_used, r.solver_note, r.eigenvalues, e.eigenvalues}, "kpca");
  }
  for (PcaRoute route : {PcaRoute::gram, PcaRoute::covariance}) {
    PcaSettings s;
    s.components = 2;
    s.route = route;
    s.block_size = 8;
    s.solver = Solver::krylov;
    s.krylov = stuck;
    PhaseTimer timer;
    const auto r = fit_pca(*file, grid, s, timer);
    s.solver = Solver::evd;
    const auto e = fit_pca(*file, grid, s, timer);
    expect_fallback({r.solver_used, r.solver_note, r.explained_variance, e.explained_variance},
                    "pca " + pca_route_name(route));
  }
  {
    MdsSettings s;
    s.metric = Metric::euclidean;
    s.components = 2;
    s.block_size = 8;
    s.solver = Solver::krylov;
    s.krylov = stuck;
    PhaseTimer timer;
    const auto r = fit_mds(*file, grid, s, timer);
    s.solver = Solver::evd;
    const auto e = fit_mds(*file, grid, s, timer);
    expect_fallback({r.solver_used, r.solver_note, r.eigenvalues, e.eigenvalues}, "mds");
  }
}
