#include "kembed/spectral/kpca_transform.hpp"

#include "kembed/core/error.hpp"
#include "kembed/distribute/read_distributed.hpp"
#include "kembed/kernel/assemble.hpp"
#include "kembed/linalg/scalapack.hpp"
#include "kembed/spectral/centering.hpp"

namespace kembed::spectral {

std::vector<double> kpca_transform(const KpcaProjection& model, io::MatrixFile* training,
                                   io::MatrixFile& coefficients, io::MatrixFile& points,
                                   const BlacsGrid& grid, int block_size) {
  const Comm& comm = grid.comm();
  const bool precomputed = model.kernel.type == kernel::KernelType::precomputed;
  const std::int64_t m = points.rows();
  const std::int64_t expected_cols = precomputed ? model.n : model.d;
  std::string error;
  if (points.cols() != expected_cols)
    error = points.path() + ": has " + std::to_string(points.cols()) + " columns, but the model " +
            (precomputed ? "needs the kernel against its " + std::to_string(model.n) +
                               " training samples (m x n)"
                         : "was fitted on " + std::to_string(model.d) + " features");
  else if (coefficients.rows() != model.n || coefficients.cols() != model.k)
    error = coefficients.path() + ": coefficient matrix has the wrong shape";
  agree(comm, error);

  const int nb = block_size;
  DistMatrix kstar(grid, m, model.n, nb, nb);
  if (precomputed) {
    distribute::read_block_cyclic(points, kstar);
  } else {
    const auto rows = distribute::read_panel(points, kstar.row_dist());
    const auto cols = distribute::read_panel(*training, kstar.col_dist());
    kernel::assemble_kernel(model.kernel, rows, cols, static_cast<int>(model.d), kstar);
  }
  // Center with the training column means and the test rows' own means.
  const CenteringStats test = kernel_means(kstar);
  for (int lj = 0; lj < kstar.local_cols(); ++lj) {
    const double shift = model.grand_mean - model.col_means[kstar.col_dist().to_global(lj)];
    for (int li = 0; li < kstar.local_rows(); ++li)
      kstar.local(li, lj) += shift - test.row_means[kstar.row_dist().to_global(li)];
  }
  DistMatrix a(grid, model.n, model.k, nb, nb);
  distribute::read_block_cyclic(coefficients, a);
  DistMatrix z(grid, m, model.k, nb, nb);
  scalapack::gemm('N', 'N', 1.0, kstar, a, 0.0, z);
  const auto full = z.gather_to_root();  // column-major m x k
  std::vector<double> embedding;
  if (comm.is_root()) {
    embedding.resize(full.size());
    for (std::int64_t i = 0; i < m; ++i)
      for (int j = 0; j < model.k; ++j)
        embedding[std::size_t(i) * model.k + j] = full[std::size_t(j) * m + i];
  }
  return embedding;
}

}  // namespace kembed::spectral
