#include "kembed/spectral/stored_operator.hpp"

#include <algorithm>

#include "kembed/core/error.hpp"
#include "kembed/linalg/scalapack.hpp"

namespace kembed::spectral {

StoredOperator::StoredOperator(const DistMatrix& a, KrylovProduct product)
    : StoredOperator(a, &a, nullptr, product) {}

StoredOperator::StoredOperator(const SingleMatrix& a, KrylovProduct product)
    : StoredOperator(a, nullptr, &a, product) {}

template <class T>
StoredOperator::StoredOperator(const BasicDistMatrix<T>& a, const DistMatrix* ad,
                               const SingleMatrix* af, KrylovProduct product)
    : double_(ad),
      single_(af),
      grid_(&a.grid()),
      n_(a.rows()),
      nb_(a.row_dist().block_size()),
      line_(a.rows(), a.row_dist().block_size(), a.grid().comm().rank(), a.grid().comm().size()),
      product_(product) {
  if (product == KrylovProduct::pdgemm) {
    // Every rank holds the same matrix type and storage: all throw alike.
    if (af) throw Error("krylov: the pdgemm product needs double-precision storage");
    if (a.storage() != Storage::full) throw Error("krylov: the pdgemm product needs full storage");
    if (a.cols() != n_ || a.col_dist().block_size() != nb_)
      throw Error("krylov: the matrix must be square with square blocks");
    const Comm& comm = a.grid().comm();
    line_grid_.emplace(comm, comm.size(), 1);
    return;
  }
  block_product_.emplace(a);
}

void StoredOperator::apply(const double* x, int ldx, int width, double* y, int ldy) {
  if (product_ == KrylovProduct::pdgemm)
    apply_pdgemm(x, ldx, width, y, ldy);
  else
    block_product_->apply(x, ldx, width, y, ldy);
}

void StoredOperator::apply_pdgemm(const double* x, int ldx, int width, double* y, int ldy) {
  if (width <= 0) return;
  // The first product sizes the blocks (the solver's block width); its later
  // narrower products reuse them.
  if (!x_ || x_->cols() < width) {
    x_.reset(), p_.reset(), line_x_.reset(), line_y_.reset();
    line_x_.emplace(*line_grid_, n_, width, nb_, width);
    line_y_.emplace(*line_grid_, n_, width, nb_, width);
    x_.emplace(*grid_, n_, width, nb_, nb_);
    p_.emplace(*grid_, n_, width, nb_, nb_);
  }
  const int rows = line_.local_size();
  for (int j = 0; j < width; ++j)
    std::copy_n(x + std::size_t(j) * ldx, rows, line_x_->data() + std::size_t(j) * line_x_->ld());
  copy(*line_x_, 0, 0, n_, width, *x_, 0, 0);
  scalapack::gemm('N', 'N', 1.0, *double_, *x_, 0.0, *p_);
  copy(*p_, 0, 0, n_, width, *line_y_, 0, 0);
  for (int j = 0; j < width; ++j)
    std::copy_n(line_y_->data() + std::size_t(j) * line_y_->ld(), rows, y + std::size_t(j) * ldy);
}

namespace {

// Entries of A the local piece of `a` stands for in a product, and the bytes
// it is stored in: with lower-block storage the blocks strictly below the
// diagonal serve twice (A_IJ and A_IJ^T).
template <class T>
std::pair<double, double> stored_entries(const BasicDistMatrix<T>& a) {
  double used = 0, held = 0;
  const int rows = a.local_rows();
  for (int lj = 0; lj < a.local_cols(); ++lj) {
    const int from = a.stored_from(lj), below = a.below_diagonal_from(lj);
    used += (below - from) + 2.0 * (rows - below);
    held += a.packed() ? rows - from : std::max(1, a.ld());
  }
  if (a.storage() == Storage::full) used = double(rows) * a.local_cols();
  return {used, held * sizeof(T)};
}

}  // namespace

OperatorCost StoredOperator::cost(int width) const {
  const auto [used, held] = single_ ? stored_entries(*single_) : stored_entries(*double_);
  const bool lower = (single_ ? single_->storage() : double_->storage()) == Storage::lower_blocks;
  const int local_rows = single_ ? single_->local_rows() : double_->local_rows();
  const int local_cols = single_ ? single_->local_cols() : double_->local_cols();
  OperatorCost cost;
  cost.held_bytes = static_cast<std::size_t>(held);
  if (product_ == KrylovProduct::pdgemm) {
    // X and A X in the line layout and on the 2-D grid.
    const int cols = BlockCyclic1D(width, nb_, grid_->mycol(), grid_->npcol()).local_size();
    cost.work_bytes =
        (2 * std::size_t(line_.local_size()) * width + 2 * std::size_t(local_rows) * cols) *
        sizeof(double);
  } else {
    cost.work_bytes = static_cast<std::size_t>(product_work_bytes(
        double(n_), line_.local_size(), local_rows, local_cols, lower, single_ != nullptr, width));
  }
  cost.flops = 2 * used * width;
  return cost;
}

double StoredOperator::product_work_bytes(double n, double line_rows, double local_rows,
                                          double local_cols, bool lower_blocks,
                                          bool single_precision, double width) {
  constexpr double kDouble = 8;
  const double held = lower_blocks ? line_rows + n + 2 * (local_rows + local_cols)
                                   : line_rows + 2 * local_cols + local_rows;
  return (held * (single_precision ? kDouble / 2 : kDouble) + (n + line_rows) * kDouble) * width;
}

}  // namespace kembed::spectral
