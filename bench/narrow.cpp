// The two local kernels of the lower-block product (narrow_product_add,
// A X_J, and narrow_product_transposed_add, A^T X_I) on one rank's block,
// from memory and from cache, alone and paired per chunk in both orders,
// beside a square dgemm measured in the same run. Every rank runs the same
// work on its own block at once (as the ranks of a solve do); rank 0
// prints the slowest rank's best time of --repeat.
//
//   OPENBLAS_NUM_THREADS=1 mpirun -np 2 kembed_bench_narrow [--rows 8000]
//       [--width 24] [--repeat 3]
//
// --rows R: the block is R x R doubles (8000 is a rank's share of the lower
// blocks at n = 16000 on 2 ranks); the in-cache cases use a 256 x 256 block
// (512 KB, within L2) run until they have done the same flops.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "kembed/core/splitmix64.hpp"
#include "kembed/linalg/lapack.hpp"
#include "kembed/linalg/narrow_product.hpp"
#include "kembed/mpi/comm.hpp"
#include "kembed/mpi/session.hpp"

namespace {

using kembed::narrow_product_add;
using kembed::narrow_product_transposed_add;

constexpr int kColumnBlock = 64;  // a column block of the lower-block storage
constexpr int kChunkRows = 2048;  // rows of it taken at a time (BlockProduct)

struct Block {
  int rows;
  int width;
  std::vector<double> a, x_cols, x_rows, y_rows, y_cols;
  Block(int r, int w) : rows(r), width(w) {
    const std::size_t n = std::size_t(r) * w;
    a.resize(std::size_t(r) * r);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = kembed::counter_gaussian(1, i, 0);
    x_cols.assign(n, 0.5);
    x_rows.assign(n, 0.25);
    y_rows.assign(n, 0.0);
    y_cols.assign(n, 0.0);
  }
  // Over every chunk of every column block: `first`, then `second` (either may be empty).
  template <class F, class G>
  void sweep(F first, G second) {
    for (int c = 0; c < rows; c += kColumnBlock)
      for (int r = 0; r < rows; r += kChunkRows) {
        const int m = std::min(rows, r + kChunkRows) - r;
        const int cols = std::min(kColumnBlock, rows - c);
        first(r, c, m, cols);
        second(r, c, m, cols);
      }
  }
  void ax(int r, int c, int m, int cols) {
    narrow_product_add(m, width, cols, &a[std::size_t(c) * rows + r], rows, &x_cols[c], rows,
                       &y_rows[r], rows);
  }
  void atx(int r, int c, int m, int cols) {
    narrow_product_transposed_add(m, width, cols, &a[std::size_t(c) * rows + r], rows,
                                  &x_rows[std::size_t(r) * width], width,
                                  &y_cols[std::size_t(c) * width], width);
  }
};

double seconds(const kembed::Comm& comm, const std::function<void()>& work, int repeat) {
  double best = 1e300;
  for (int i = 0; i < repeat; ++i) {
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    work();
    const std::chrono::duration<double> t = std::chrono::steady_clock::now() - start;
    best = std::min(best, comm.max(t.count()));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  kembed::MpiSession mpi(argc, argv);
  const kembed::Comm comm = kembed::Comm::world();
  const int rank = comm.rank(), ranks = comm.size();
  int rows = 8000, width = 24, repeat = 3;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = i + 1 < argc ? std::atoi(argv[i + 1]) : 0;
    int* target = flag == "--rows"     ? &rows
                  : flag == "--width"  ? &width
                  : flag == "--repeat" ? &repeat
                                       : nullptr;
    if (!target || value < 1) {
      if (rank == 0)
        std::fprintf(stderr, "usage: kembed_bench_narrow [--rows R] [--width W] [--repeat N]\n");
      return 2;
    }
    *target = value;
  }
  const auto nothing = [](int, int, int, int) {};
  const auto print = [&](const char* what, double s, double flops) {
    if (rank == 0) std::printf("  %-40s %8.4f s %6.1f GFlop/s\n", what, s, flops / s * 1e-9);
  };

  const int m = 2000;
  std::vector<double> p(std::size_t(m) * m, 1.0), q(p.size(), 0.5), r(p.size());
  const double dgemm_s = seconds(
      comm,
      [&] {
        kembed::lapack::gemm('N', 'N', m, m, m, 1.0, p.data(), m, q.data(), m, 0.0, r.data(), m);
      },
      repeat);
  if (rank == 0)
    std::printf("%d ranks, one block of %d x %d per rank, width %d, best of %d\n", ranks, rows,
                rows, width, repeat);
  print("square dgemm 2000^3", dgemm_s, 2.0 * m * m * m);

  Block big(rows, width);
  const double one = 2.0 * rows * double(rows) * width;  // flops of one kernel over the block
  print("A X_J from memory",
        seconds(
            comm, [&] { big.sweep([&](auto... s) { big.ax(s...); }, nothing); }, repeat),
        one);
  print("A^T X_I from memory",
        seconds(
            comm, [&] { big.sweep([&](auto... s) { big.atx(s...); }, nothing); }, repeat),
        one);
  print("both per chunk, A X_J first",
        seconds(
            comm,
            [&] { big.sweep([&](auto... s) { big.ax(s...); }, [&](auto... s) { big.atx(s...); }); },
            repeat),
        2 * one);
  print("both per chunk, A^T X_I first",
        seconds(
            comm,
            [&] { big.sweep([&](auto... s) { big.atx(s...); }, [&](auto... s) { big.ax(s...); }); },
            repeat),
        2 * one);

  Block small(256, width);
  const double small_one = 2.0 * 256 * 256 * width;
  const int times = std::max(1, static_cast<int>(one / small_one));
  const auto again = [&](auto kernel) {
    return [&, kernel] {
      for (int t = 0; t < times; ++t) small.sweep(kernel, nothing);
    };
  };
  print("A X_J in cache (256 x 256)",
        seconds(comm, again([&](auto... s) { small.ax(s...); }), repeat), times * small_one);
  print("A^T X_I in cache (256 x 256)",
        seconds(comm, again([&](auto... s) { small.atx(s...); }), repeat), times * small_one);
  return 0;
}
