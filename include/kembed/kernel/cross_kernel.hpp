#pragma once
/// @file Kernel values between the rows of a local panel and a fixed set of
/// points (the landmarks of the Nystrom method), on one rank, with the same
/// formulas and overflow fallbacks as assemble_kernel.
#include <memory>
#include <vector>

#include "kembed/kernel/kernel.hpp"
#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::kernel {

/// K(x_i, y_j) for panels of rows x against `columns` y_1..y_m. Each rank
/// evaluates on a 1 x 1 process grid of its own, so a block is one
/// assemble_kernel call without communication. Move-only.
class CrossKernel {
 public:
  /// Collective over `comm` (it splits off the single-rank grids).
  /// `columns` holds m points of `d` coordinates, row-major.
  /// @pre kernel.type != precomputed, gamma resolved
  CrossKernel(const Comm& comm, const Kernel& kernel, std::vector<double> columns, int d);

  int columns() const { return m_; }

  /// The count x m matrix K(rows, columns), column-major with leading
  /// dimension max(1, count), valid until the next call. `rows` holds at
  /// least count points, row-major. Local: an entry that overflows (linear,
  /// poly, sigmoid) throws Error on this rank only, so call it inside
  /// collectively(); the entry's row is counted within the panel.
  const double* evaluate(const std::vector<double>& rows, int count);

 private:
  Comm self_;
  BlacsGrid grid_;
  Kernel kernel_;
  std::vector<double> columns_;
  int m_ = 0, d_ = 0;
  std::unique_ptr<DistMatrix> block_;
};

}  // namespace kembed::kernel
