#pragma once
/// @file The rows of a row-distributed block that a rank's sparse rows
/// reference and other ranks hold ("ghost" rows): which ones is planned once
/// from the column indices; each product then fetches them by one all-to-all
/// exchange, and the product reads its own rows and the fetched ones from one
/// row-major buffer.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "kembed/linalg/block_cyclic.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::graph {

class RowExchange {
 public:
  /// Collective over `comm` (whose ranks hold the rows of `rows`): plans the
  /// exchange for the global column indices `columns` of this rank's rows.
  RowExchange(const BlockCyclic1D& rows, const std::vector<std::int64_t>& columns,
              const Comm& comm);

  /// Index of every entry of `columns` (as given to the constructor) in the
  /// gathered buffer: a local row's local index, a fetched row's
  /// rows.local_size() + its place among the fetched. Moved out: call once.
  std::vector<int> take_buffer_index() { return std::move(index_); }
  int local_rows() const { return rows_.local_size(); }
  int fetched_rows() const { return static_cast<int>(fetched_); }
  /// Rows this rank sends to others per product.
  std::int64_t sent_rows() const { return static_cast<std::int64_t>(send_rows_.size()); }

  /// Collective: `buffer` (resized to (local_rows() + fetched_rows()) x
  /// width, row-major) receives this rank's rows of x (column-major,
  /// local_rows() x width, leading dimension ldx) and then the fetched rows.
  void gather(const double* x, int ldx, int width, std::vector<double>& buffer);

  /// Bytes of the buffers of one gather of width `width` (the gathered rows
  /// and the rows sent), and of the plan itself.
  std::size_t buffer_bytes(int width) const;
  std::size_t plan_bytes() const;

 private:
  const Comm& comm_;
  BlockCyclic1D rows_;
  std::int64_t fetched_ = 0;
  std::vector<int> index_;
  std::vector<int> send_rows_;  // local rows sent, grouped by destination rank
  std::vector<std::int64_t> send_counts_, recv_counts_;  // rows per rank
  std::vector<std::int64_t> send_values_, recv_values_;  // values per rank (rows x width)
  std::vector<double> send_;
};

}  // namespace kembed::graph
