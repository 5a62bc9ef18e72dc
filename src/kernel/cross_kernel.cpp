#include "kembed/kernel/cross_kernel.hpp"

#include <algorithm>

#include "kembed/kernel/assemble.hpp"

namespace kembed::kernel {

CrossKernel::CrossKernel(const Comm& comm, const Kernel& kernel, std::vector<double> columns,
                         int d)
    : self_(comm.split(comm.rank(), 0)),
      grid_(self_, 1, 1),
      kernel_(kernel),
      columns_(std::move(columns)),
      m_(d > 0 ? static_cast<int>(columns_.size() / std::size_t(d)) : 0),
      d_(d) {}

const double* CrossKernel::evaluate(const std::vector<double>& rows, int count) {
  // One block covering the whole matrix: assemble_kernel then fills it with
  // the local dgemm and the elementwise map, and its collectives run on this
  // rank alone. Kept between calls: panels mostly have the same height.
  if (!block_ || block_->rows() != count)
    block_ = std::make_unique<DistMatrix>(grid_, count, m_, std::max(count, 1), std::max(m_, 1));
  if (count > 0 && m_ > 0) assemble_kernel(kernel_, rows, columns_, d_, *block_);
  return block_->data();
}

}  // namespace kembed::kernel
