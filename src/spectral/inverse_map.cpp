#include "kembed/spectral/inverse_map.hpp"

#include "kembed/core/error.hpp"
#include "kembed/distribute/read_distributed.hpp"
#include "kembed/kernel/assemble.hpp"
#include "kembed/linalg/scalapack.hpp"

namespace kembed::spectral {

namespace {

// The rows of the replicated row-major `full` (width columns) that `dist`
// gives this rank, in local order.
std::vector<double> rows_of(const std::vector<double>& full, int width,
                            const BlockCyclic1D& dist) {
  std::vector<double> panel(std::size_t(dist.local_size()) * width);
  for (int l = 0; l < dist.local_size(); ++l) {
    const double* src = &full[std::size_t(dist.to_global(l)) * width];
    std::copy(src, src + width, &panel[std::size_t(l) * width]);
  }
  return panel;
}

}  // namespace

InverseMap fit_inverse_map(const kernel::Kernel& kernel, const std::vector<double>& embedding, int k,
                           io::MatrixFile& x, double alpha, const BlacsGrid& grid,
                           int block_size) {
  const Comm& comm = grid.comm();
  agree(comm, alpha > 0 ? "" : "--alpha must be positive, got " + std::to_string(alpha));
  const std::int64_t n = x.rows(), d = x.cols();
  DistMatrix kz(grid, n, n, block_size, block_size);
  kernel::assemble_kernel(kernel, rows_of(embedding, k, kz.row_dist()),
                  rows_of(embedding, k, kz.col_dist()), k, kz);
  for (int lj = 0; lj < kz.local_cols(); ++lj) {
    const std::int64_t j = kz.col_dist().to_global(lj);
    if (kz.row_dist().is_local(j)) kz.local(kz.row_dist().to_local(j), lj) += alpha;
  }

  InverseMap map{std::vector<double>(d, 0.0), DistMatrix(grid, n, d, block_size, block_size)};
  DistMatrix& w = map.weights;
  distribute::read_block_cyclic(x, w);
  for (int lj = 0; lj < w.local_cols(); ++lj)
    for (int li = 0; li < w.local_rows(); ++li)
      map.mean[w.col_dist().to_global(lj)] += w.local(li, lj);
  comm.sum_in_place(map.mean);
  for (double& v : map.mean) v /= static_cast<double>(n);
  for (int lj = 0; lj < w.local_cols(); ++lj)
    for (int li = 0; li < w.local_rows(); ++li)
      w.local(li, lj) -= map.mean[w.col_dist().to_global(lj)];
  scalapack::posv(kz, w);
  return map;
}

std::vector<double> apply_inverse_map(const kernel::Kernel& kernel, const std::vector<double>& z, int k,
                                      io::MatrixFile& coefficients,
                                      const std::vector<double>& eigenvalues,
                                      io::MatrixFile& weights, const std::vector<double>& mean,
                                      const BlacsGrid& grid, int block_size) {
  const Comm& comm = grid.comm();
  const std::int64_t m = static_cast<std::int64_t>(z.size()) / k, n = weights.rows();
  const std::int64_t d = weights.cols();
  DistMatrix kstar(grid, m, n, block_size, block_size);
  auto training = distribute::read_panel(coefficients, kstar.col_dist());
  for (std::size_t t = 0; t < training.size(); ++t) training[t] *= eigenvalues[t % k];
  kernel::assemble_kernel(kernel, rows_of(z, k, kstar.row_dist()), training, k, kstar);
  DistMatrix w(grid, n, d, block_size, block_size);
  distribute::read_block_cyclic(weights, w);
  DistMatrix out(grid, m, d, block_size, block_size);
  scalapack::gemm('N', 'N', 1.0, kstar, w, 0.0, out);

  std::vector<double> full = out.gather_to_root();  // column-major m x d on rank 0
  full.resize(std::size_t(m) * d);
  comm.broadcast(full.data(), full.size());
  std::vector<double> points(std::size_t(m) * d);
  for (std::int64_t q = 0; q < m; ++q)
    for (std::int64_t t = 0; t < d; ++t)
      points[std::size_t(q) * d + t] = mean[t] + full[std::size_t(t) * m + q];
  return points;
}

}  // namespace kembed::spectral
