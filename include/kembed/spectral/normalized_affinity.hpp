#pragma once
/// @file M = D^(-1/2) W D^(-1/2) of a sparse symmetric affinity W held as
/// distributed rows (the kNN graph of Laplacian eigenmaps), as a
/// SymmetricOperator: each rank keeps its rows of M, a product fetches the
/// rows of X they reference from the other ranks (one all-to-all exchange)
/// and multiplies in O(nonzeros x width). Never n x n.
#include <cstdint>
#include <vector>

#include "kembed/graph/row_exchange.hpp"
#include "kembed/graph/sparse_rows.hpp"
#include "kembed/spectral/symmetric_operator.hpp"

namespace kembed::spectral {

class NormalizedAffinity final : public SymmetricOperator {
 public:
  /// Collective over grid.comm(): takes `w`'s rows (with a zero diagonal; its
  /// layout: w.rows over grid.comm()'s ranks with w.rows.block_size()),
  /// takes the degrees d = W 1 and scales every entry by 1/sqrt(d_i d_j).
  /// @pre every degree positive (agreed by the caller), w symmetric
  NormalizedAffinity(graph::SparseRows w, const BlacsGrid& grid);

  std::int64_t order() const override { return rows_.global_size(); }
  const BlacsGrid& grid() const override { return grid_; }
  int block_size() const override { return rows_.block_size(); }
  const BlockCyclic1D& rows() const override { return rows_; }
  /// y = M x; the same bits on any number of ranks (every row summed in the
  /// order of its global column indices).
  void apply(const double* x, int ldx, int width, double* y, int ldy) override;
  OperatorCost cost(int width) const override;

  /// The degrees of this rank's rows (rows() order).
  const std::vector<double>& degrees() const { return degree_; }
  /// Collective: ||M||_F (sum of w_ij^2 / (d_i d_j) over all entries).
  double frobenius_norm() const;
  /// Collective: the smallest and the largest degree.
  double min_degree() const;
  double max_degree() const;
  /// Products applied so far, and the columns they multiplied.
  long long products() const { return products_; }
  long long columns_applied() const { return columns_; }

 private:
  const BlacsGrid& grid_;
  BlockCyclic1D rows_;
  std::vector<std::int64_t> offsets_;
  std::vector<int> index_;  // entries' places in the gathered rows
  std::vector<double> values_;
  std::vector<double> degree_;
  graph::RowExchange exchange_;
  std::vector<double> gathered_;
  long long products_ = 0, columns_ = 0;
};

/// Bytes per rank of the operator of an n-vertex graph with `nonzeros`
/// stored entries on this rank and `fetched` rows fetched from others,
/// `sent` sent, for products of width `width` (for the memory plan):
/// held = entries (index 4 + value 8 bytes), offsets, degrees, the
/// exchange plan; work = the gathered rows and the rows sent.
OperatorCost normalized_affinity_cost(double local_rows, double nonzeros, double fetched,
                                      double sent, double width);

}  // namespace kembed::spectral
