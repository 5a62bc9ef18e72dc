// Kernel assembly and centering against pair-by-pair serial evaluation, on
// every grid shape of the rank count and several block sizes.
#include <gtest/gtest.h>

#include <cmath>

#include "kembed/distribute/read_distributed.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/kernel/assemble.hpp"
#include "kembed/spectral/centering.hpp"
#include "serial_reference.hpp"
#include "test_support.hpp"

using kembed::test::grid_shapes;

using namespace kembed;
using namespace kembed::spectral;
using namespace kembed::kernel;
using namespace kembed::distribute;
using kembed::test::all_ranks;

namespace {

// Largest |a - b| relative to max |b| over two column-major matrices.
double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return diff / std::max(scale, 1e-300);
}

class Assembly : public ::testing::TestWithParam<KernelType> {};

}  // namespace

TEST_P(Assembly, MatchesSerialDefinitionOnEveryGrid) {
  const Comm world = Comm::world();
  const int n = 29, d = 5;
  auto x = test::random_data(n, d, 11);
  for (int t = 0; t < d; ++t) x[3 * d + t] = 0;  // a zero row: cosine must give 0 there
  const std::string dir = test::scratch_dir(world, "assembly");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  const Kernel kernel = test::test_kernel(GetParam());
  const auto reference = test::serial_kernel(kernel, x, n, d);
  for (auto [p, q] : grid_shapes(world.size()))
    for (int nb : {1, 4, 64}) {
      BlacsGrid grid(world, p, q);
      DistMatrix k(grid, n, n, nb, nb);
      const auto rows = read_panel(*file, k.row_dist());
      const auto cols = read_panel(*file, k.col_dist());
      assemble_kernel(kernel, rows, cols, d, k);
      const auto full = k.gather_to_root();
      if (world.is_root()) {
        EXPECT_LT(relative_difference(full, reference.a), 1e-13)
            << kernel.name() << " grid " << p << "x" << q << " nb " << nb;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(AllKernels, Assembly,
                         ::testing::Values(KernelType::linear, KernelType::poly, KernelType::rbf,
                                           KernelType::laplacian, KernelType::sigmoid,
                                           KernelType::cosine),
                         [](const auto& info) { return Kernel::name(info.param); });

TEST(PrecomputedKernel, ReadsIntoBlockCyclicLayout) {
  const Comm world = Comm::world();
  const int n = 23;
  const auto values = test::random_data(n, n, 5);  // row-major n x n in the file
  const std::string dir = test::scratch_dir(world, "precomputed");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "k.bin", values), {n, n});
  for (auto [p, q] : grid_shapes(world.size())) {
    BlacsGrid grid(world, p, q);
    DistMatrix k(grid, n, n, 3, 3);
    read_block_cyclic(*file, k);
    bool ok = true;
    for (int lj = 0; lj < k.local_cols(); ++lj)
      for (int li = 0; li < k.local_rows(); ++li)
        ok = ok &&
             k.local(li, lj) == values[k.row_dist().to_global(li) * n + k.col_dist().to_global(lj)];
    EXPECT_TRUE(all_ranks(world, ok)) << p << "x" << q;
  }
}

TEST(Centering, ZeroRowAndColumnSumsAndEqualsJKJ) {
  const Comm world = Comm::world();
  const int n = 31, d = 3;
  const auto x = test::random_data(n, d, 3);
  const std::string dir = test::scratch_dir(world, "centering");
  auto file = io::open_matrix_file(world, test::write_bin(world, dir, "x.bin", x), {n, d});
  Kernel kernel = test::test_kernel(KernelType::rbf);
  const auto reference = test::serial_center(test::serial_kernel(kernel, x, n, d));
  for (auto [p, q] : grid_shapes(world.size()))
    for (int nb : {2, 8}) {
      BlacsGrid grid(world, p, q);
      DistMatrix k(grid, n, n, nb, nb);
      assemble_kernel(kernel, read_panel(*file, k.row_dist()), read_panel(*file, k.col_dist()), d,
                      k);
      const CenteringStats before = center_kernel(k);
      const CenteringStats after = kernel_means(k);
      bool sums_zero = true;
      for (int i = 0; i < n; ++i)
        sums_zero = sums_zero && std::abs(after.row_means[i]) < 1e-14 &&
                    std::abs(after.col_means[i]) < 1e-14;
      EXPECT_TRUE(sums_zero);
      EXPECT_LT(std::abs(after.grand_mean), 1e-15);
      EXPECT_GT(before.grand_mean, 0.0);  // an rbf kernel has positive entries
      const auto full = k.gather_to_root();
      if (world.is_root()) {
        EXPECT_LT(relative_difference(full, reference.a), 1e-12) << p << "x" << q;
      }
    }
}
