#include "kembed/kernel/local_blocks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kembed/core/error.hpp"
#include "kembed/linalg/lapack.hpp"

namespace kembed::kernel {

std::vector<double> row_norms_squared(const std::vector<double>& panel, int rows, int d) {
  std::vector<double> norms(rows);
  for (int i = 0; i < rows; ++i) {
    const double* x = &panel[std::size_t(i) * d];
    double s = 0;
    for (int t = 0; t < d; ++t) s += x[t] * x[t];
    norms[i] = s;
  }
  return norms;
}

std::vector<double> row_max_magnitudes(const std::vector<double>& panel, int rows, int d) {
  std::vector<double> largest(rows, 0.0);
  for (int i = 0; i < rows; ++i) {
    const double* x = &panel[std::size_t(i) * d];
    for (int t = 0; t < d; ++t) largest[i] = std::max(largest[i], std::abs(x[t]));
  }
  return largest;
}

void local_gram(const std::vector<double>& row_panel, const std::vector<double>& col_panel, int d,
                DistMatrix& out) {
  const int m = out.local_rows(), n = out.local_cols(), ld = out.ld();
  if (out.storage() != Storage::full) throw Error("local_gram: the whole block (full storage)");
  if (m == 0 || n == 0) return;
  lapack::gemm('T', 'N', m, n, d, 1.0, row_panel.data(), d, col_panel.data(), d, 0.0, out.data(),
               ld);
}

void gram_tile(const std::vector<double>& row_panel, const std::vector<double>& col_panel, int d,
               DistMatrix& out, const LocalTile& tile) {
  if (tile.rows == 0 || tile.cols == 0) return;
  lapack::gemm('T', 'N', tile.rows, tile.cols, d, 1.0, &row_panel[std::size_t(tile.row) * d], d,
               &col_panel[std::size_t(tile.col) * d], d, 0.0, out.column(tile.col) + tile.row,
               out.column_ld(tile.col));
}

namespace {

// Rows per tile: the sums of a tile's rows stay in registers (8 SSE2, 4 AVX2
// or 2 AVX-512 registers) while the tile is read.
constexpr int kL1Lanes = 16;

// column[i] = sum_t |x_i[t] - y[t]| for i < rows, where tiles holds the rows
// in tiles of kL1Lanes: tile r, entry (t, c) = row r * kL1Lanes + c, column t,
// so that a tile is read front to back. Each sum runs over t in order, as the
// pair-by-pair loop does, and no fused operation applies, so every
// instruction set gives the same bits. Written on vector types of the
// target's width (as in vector_exp.cpp): left to itself, the compiler
// vectorizes the reduction over t instead.
template <int Width>
struct L1Vector {
  typedef double Real __attribute__((vector_size(Width * sizeof(double))));
  typedef std::int64_t Bits __attribute__((vector_size(Width * sizeof(double))));
};

template <int Width>
__attribute__((always_inline)) inline void l1_tiles_column(const double* tiles, int rows,
                                                           const double* y, int d, double* column) {
  using Real = typename L1Vector<Width>::Real;
  using Bits = typename L1Vector<Width>::Bits;
  constexpr int kRegisters = kL1Lanes / Width;
  const Bits magnitude = Bits{} + 0x7fffffffffffffff;  // clears the sign bit
  for (int i = 0; i < rows; i += kL1Lanes) {
    const double* tile = tiles + std::size_t(i) * d;
    Real sum[kRegisters] = {};
    for (int t = 0; t < d; ++t)
      for (int r = 0; r < kRegisters; ++r) {
        Real x;
        std::memcpy(&x, tile + std::size_t(t) * kL1Lanes + r * Width, sizeof x);
        sum[r] += reinterpret_cast<Real>(reinterpret_cast<Bits>(x - y[t]) & magnitude);
      }
    double out[kL1Lanes];
    std::memcpy(out, sum, sizeof out);
    std::memcpy(column + i, out, std::size_t(std::min(kL1Lanes, rows - i)) * sizeof(double));
  }
}

void l1_tiles_column_baseline(const double* tiles, int rows, const double* y, int d,
                              double* column) {
  l1_tiles_column<2>(tiles, rows, y, d, column);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx2"))) void l1_tiles_column_avx2(const double* tiles, int rows,
                                                          const double* y, int d, double* column) {
  l1_tiles_column<4>(tiles, rows, y, d, column);
}

__attribute__((target("avx512f"))) void l1_tiles_column_avx512(const double* tiles, int rows,
                                                               const double* y, int d,
                                                               double* column) {
  l1_tiles_column<8>(tiles, rows, y, d, column);
}
#endif

using L1TilesColumn = void (*)(const double*, int, const double*, int, double*);

L1TilesColumn l1_tiles_column_for(SimdLevel level) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (level == SimdLevel::avx512) return l1_tiles_column_avx512;
  if (level == SimdLevel::avx2) return l1_tiles_column_avx2;
#endif
  (void)level;
  return l1_tiles_column_baseline;
}

}  // namespace

void local_l1_distances(const std::vector<double>& row_panel, const std::vector<double>& col_panel,
                        int d, DistMatrix& out) {
  const int m = out.local_rows(), n = out.local_cols();
  if (out.storage() != Storage::full)
    throw Error("local_l1_distances: the whole block (full storage)");
  // Rows go in blocks whose tiles (block x d doubles) stay in cache while
  // every column passes over them.
  const int block = std::clamp((32768 / std::max(d, 1)) / kL1Lanes * kL1Lanes, kL1Lanes, 512);
  std::vector<double> tiles(std::size_t(block) * d);
  const L1TilesColumn l1_column = l1_tiles_column_for(best_simd_level());
  for (int i0 = 0; i0 < m; i0 += block) {
    const int rows = std::min(block, m - i0);
    std::fill(tiles.begin(), tiles.end(), 0.0);
    for (int i = 0; i < rows; ++i)
      for (int t = 0; t < d; ++t)
        tiles[(std::size_t(i / kL1Lanes) * d + t) * kL1Lanes + i % kL1Lanes] =
            row_panel[std::size_t(i0 + i) * d + t];
    for (int lj = 0; lj < n; ++lj)
      l1_column(tiles.data(), rows, &col_panel[std::size_t(lj) * d], d, out.column(lj) + i0);
  }
}

}  // namespace kembed::kernel
