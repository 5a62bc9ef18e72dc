// PCA's row panels (pca_rows.hpp) against the block-cyclic layout: the
// reductions over contiguous runs give the block-cyclic results (the data
// fingerprint bit for bit, the Frobenius norm to rounding, also where it must
// scale, also from the squares centering takes as it writes), and a fit on a P x 1 grid (row panels) gives the fit on a 1 x P
// grid (X block-cyclic, pdgemm), including panels that are short or empty.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kembed/linalg/reductions.hpp"
#include "kembed/spectral/pca.hpp"
#include "kembed/spectral/pca_rows.hpp"
#include "kembed/spectral/spectral_step.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using namespace kembed;
using namespace kembed::spectral;
using kembed::test::all_ranks;
using kembed::test::max_abs_diff;

namespace {

// Row-major data with unequal column scales, non-zero means and correlation.
std::vector<double> tall_data(int n, int d, unsigned seed) {
  auto x = test::random_data(n, d, seed);
  for (int i = 0; i < n; ++i)
    for (int t = 1; t < d; ++t)
      x[std::size_t(i) * d + t] = (t + 1) * x[std::size_t(i) * d + t] + 0.5 * x[std::size_t(i) * d] + t;
  return x;
}

}  // namespace

TEST(PcaRows, RunReductionsMatchTheBlockCyclicOnes) {
  const Comm world = Comm::world();
  const int n = 37, d = 5, p = world.size(), r = world.rank();
  const auto x = test::random_data(n, d, 9);
  for (double scale : {1.0, 1e200, 1e-200}) {
    long double squares = 0;  // over scale^2, in extended range
    for (double v : x) squares += (long double)v * v;
    const double reference = scale * std::sqrt(static_cast<double>(squares));
    // Even panels, and panels of 4 rows with the rest (or none) on the last rank.
    for (bool even : {true, false}) {
      const std::int64_t first = even ? std::int64_t{n} * r / p : std::min(n, 4 * r);
      const std::int64_t end =
          even ? std::int64_t{n} * (r + 1) / p : (r == p - 1 ? n : std::min(n, 4 * (r + 1)));
      std::vector<double> run;
      for (std::int64_t t = first * d; t < end * d; ++t) run.push_back(scale * x[std::size_t(t)]);
      const double norm = frobenius_norm(world, run.data(), std::int64_t(run.size()));
      EXPECT_NEAR(norm, reference, 1e-14 * reference) << "scale " << scale;
      // Centering's pass (here with mean 0, scale 1) hands its squares on:
      // the same norm, and the run rescaled only where it must be.
      RowPanel panel{n, d, 1, first, end - first, run};
      const ColumnSquares written =
          standardize_columns(panel, std::vector<double>(d, 0.0), std::vector<double>(d, 1.0));
      EXPECT_TRUE(all_ranks(world, panel.values == run));
      const double fused = frobenius_norm(world, run.data(), std::int64_t(run.size()), written);
      EXPECT_NEAR(fused, reference, 1e-14 * reference) << "scale " << scale;
      const std::string fingerprint = data_fingerprint(world, run.data(), end - first, first, d);
      for (auto [pr, pc] : test::grid_shapes(p)) {
        BlacsGrid grid(world, pr, pc);
        DistMatrix a(grid, n, d, 3, 2);
        a.fill([&](std::int64_t i, std::int64_t j) { return scale * x[std::size_t(i * d + j)]; });
        EXPECT_TRUE(all_ranks(world, data_fingerprint(a) == fingerprint)) << "scale " << scale;
        EXPECT_NEAR(frobenius_norm(a), norm, 1e-14 * reference) << "scale " << scale;
      }
    }
  }
}

TEST(PcaRows, PanelFitMatchesTheBlockCyclicFit) {
  const Comm world = Comm::world();
  const int p = world.size();
  // 3 x 2 leaves a rank without rows at 4 ranks; 41 x 6 gives short last panels.
  for (auto [n, d] : {std::pair<int, int>{41, 6}, std::pair<int, int>{3, 2}}) {
    const auto x = tall_data(n, d, 13);
    const std::string dir = test::scratch_dir(world, "pca_rows");
    auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
    for (bool standardize : {false, true}) {
      PcaSettings settings;
      settings.components = d == 2 ? 1 : 3;
      settings.standardize = standardize;
      settings.whiten = standardize;
      settings.block_size = 2;
      BlacsGrid tall(world, p, 1), wide(world, 1, p);
      EXPECT_TRUE(uses_row_panels(tall, n, d));
      EXPECT_EQ(uses_row_panels(wide, n, d), p == 1);
      EXPECT_FALSE(uses_row_panels(tall, n, kRowPanelMaxCols + 1));
      PhaseTimer timer;
      const PcaResult a = fit_pca(*file, tall, settings, timer);
      const PcaResult b = fit_pca(*file, wide, settings, timer);
      const std::string what = std::to_string(n) + " x " + std::to_string(d) +
                               (standardize ? " standardized, whitened" : " centered");
      // The panels are the embedding's row blocks.
      const int block = (n + p - 1) / p, first = std::min(n, world.rank() * block);
      EXPECT_EQ(a.embedding->row_dist().local_size(), std::min(n, first + block) - first) << what;
      EXPECT_EQ(a.data_fingerprint, b.data_fingerprint) << what;
      EXPECT_LT(max_abs_diff(a.mean, b.mean), 1e-12) << what;
      EXPECT_LT(max_abs_diff(a.scale, b.scale), 1e-12) << what;
      EXPECT_NEAR(a.total_variance, b.total_variance, 1e-13 * b.total_variance) << what;
      EXPECT_LT(max_abs_diff(a.explained_variance, b.explained_variance),
                1e-12 * b.explained_variance[0])
          << what;
      const auto za = row_major_on_root(*a.embedding), zb = row_major_on_root(*b.embedding);
      if (world.is_root()) {
        EXPECT_LT(max_abs_diff(za, zb), 1e-10) << what;
        EXPECT_LT(max_abs_diff(a.components, b.components), 1e-10) << what;
      }
    }
  }
}

TEST(PcaRows, MemoryPlanCountsThePanelsSums) {
  // 3000 x 2000 on 2 x 1: the panels hold the 2000 x 2000 sums (the
  // block-cyclic local path would not, since 2 d > n); 2100 columns take the
  // block-cyclic route, whose pdgemm keeps no such sums.
  PcaSettings settings;
  settings.components = 3;
  auto sums = [&](std::int64_t d) {
    double bytes = 0;
    for (const auto& item : plan_memory(pca_problem_shape(3000, d, settings, 2, 1)).items)
      if (item.first == "cross-product partial sums") bytes = item.second;
    return bytes;
  };
  EXPECT_GE(sums(kRowPanelMaxCols - 48), 8.0 * (kRowPanelMaxCols - 48) * (kRowPanelMaxCols - 48));
  EXPECT_EQ(sums(kRowPanelMaxCols + 52), 0.0);
}
