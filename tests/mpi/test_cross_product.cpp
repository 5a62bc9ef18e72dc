// cross_product (AᵀA, AAᵀ) against a serial product of the values written
// here, on every grid shape the rank count allows (the local path on P x 1
// and 1 x P, pdgemm elsewhere), for tall, wide and square A and block sizes
// that leave some ranks without rows of C.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "kembed/linalg/cross_product.hpp"
#include "kembed/linalg/dist_matrix.hpp"
#include "test_support.hpp"

using kembed::BlacsGrid;
using kembed::Comm;
using kembed::DistMatrix;
using kembed::test::all_ranks;
using kembed::test::grid_shapes;

TEST(CrossProduct, MatchesASerialProductOnEveryGridAndTakesTheLocalPathWhereItShould) {
  const Comm world = Comm::world();
  const int ranks = world.size();
  std::vector<std::pair<int, int>> shapes = grid_shapes(ranks);
  shapes.emplace_back(ranks, 1);
  shapes.emplace_back(1, ranks);
  for (auto [p, q] : shapes) {
    const BlacsGrid grid(world, p, q);
    for (auto [n, d] : {std::pair{50, 7}, std::pair{7, 50}, std::pair{13, 13}})
      for (int nb : {1, 4, 64})
        for (char trans : {'T', 'N'}) {
          std::mt19937 gen(unsigned(n * 100 + d + nb));
          std::uniform_real_distribution<double> dist(-1, 1);
          std::vector<double> x(std::size_t(n) * d);  // column-major
          for (double& v : x) v = dist(gen);
          DistMatrix a(grid, n, d, nb, nb);
          a.fill([&, rows = n](std::int64_t i, std::int64_t j) { return x[std::size_t(j) * rows + i]; });
          const int m = trans == 'T' ? d : n;
          DistMatrix c(grid, m, m, nb, nb);
          const double alpha = 0.5;
          kembed::cross_product(trans, alpha, a, c);
          double worst = 0;
          for (int lj = 0; lj < c.local_cols(); ++lj)
            for (int li = 0; li < c.local_rows(); ++li) {
              const std::int64_t i = c.row_dist().to_global(li), j = c.col_dist().to_global(lj);
              double expected = 0;
              if (trans == 'T')
                for (int t = 0; t < n; ++t)
                  expected += x[std::size_t(i) * n + t] * x[std::size_t(j) * n + t];
              else
                for (int t = 0; t < d; ++t)
                  expected += x[std::size_t(t) * n + i] * x[std::size_t(t) * n + j];
              worst = std::max(worst, std::abs(c.local(li, lj) - alpha * expected));
            }
          const std::string where = std::to_string(p) + "x" + std::to_string(q) + " nb " +
                                    std::to_string(nb) + " " + std::to_string(n) + " x " +
                                    std::to_string(d) + " trans " + trans;
          EXPECT_TRUE(all_ranks(world, worst < 1e-13)) << where << ": " << worst;
          // The local path: whole rows for AᵀA, whole columns for AAᵀ, and
          // the m x m partial sum no larger than A's share.
          const bool local = trans == 'T' ? q == 1 && d * ranks <= n : p == 1 && n * ranks <= d;
          EXPECT_EQ(kembed::cross_product_is_local(trans, a), local) << where;
        }
  }
}
