#include "io/block_cyclic_exchange.hpp"

#include <mpi.h>

#include <algorithm>
#include <climits>

#include "io/block_cyclic_rows.hpp"
#include "io/row_ranges.hpp"
#include "kembed/core/error.hpp"

namespace kembed::io {

bool exchange_fits(const Comm& comm, const BlockCyclicLayout& layout) {
  return static_cast<long long>(layout.nprow) * layout.npcol == comm.size();
}

void exchange_block_cyclic(const Comm& comm, const std::string& path, std::int64_t rows, std::int64_t cols,
                           const BlockCyclicLayout& layout, const ReadPiece& read, const LocalRowsSink& sink) {
  // Large contiguous reads, then the scatter in memory: collective I/O on a
  // darray file view does the same in principle, but ran at under 10% of the
  // streaming bandwidth with either of Open MPI's MPI-IO components.
  const Comm row_comm = comm.split(layout.myrow, layout.mycol);
  const int q = layout.npcol;
  const int rb = layout.row_block, cb = layout.col_block;
  const std::int64_t local_rows = owned_count(rows, rb, layout.myrow, layout.nprow);
  std::vector<std::int64_t> widths(static_cast<std::size_t>(q));
  for (int c = 0; c < q; ++c) widths[static_cast<std::size_t>(c)] = owned_count(cols, cb, c, q);
  const std::int64_t local_cols = widths[static_cast<std::size_t>(layout.mycol)];
  // The same on every rank of the process row (widths[0] is the widest);
  // 16 MB pieces keep the buffers small and the transposes in cache.
  const std::int64_t group = rows_per_group(std::max(cols * 8 / q, widths[0] * 8), std::int64_t{16} << 20);
  // Equal on all ranks, so that a collective `read` is called alike.
  const long long rounds = comm.max(static_cast<long long>((local_rows + group - 1) / group));

  std::vector<double> mine, send, received;
  std::vector<int> send_counts(static_cast<std::size_t>(q)), send_offsets(static_cast<std::size_t>(q)),
      receive_counts(static_cast<std::size_t>(q)), receive_offsets(static_cast<std::size_t>(q));
  std::string error;
  long long first_bad = LLONG_MAX;  // row * cols + col of the first non-finite entry
  for (long long round = 0; round < rounds; ++round) {
    const std::int64_t a = std::min<std::int64_t>(local_rows, round * group);
    const std::int64_t b = std::min(local_rows, a + group);
    auto piece_begin = [&](int c) { return a + (b - a) * c / q; };
    const std::int64_t my_begin = piece_begin(layout.mycol), my_end = piece_begin(layout.mycol + 1);
    const std::int64_t my_count = my_end - my_begin;

    // Global rows of my piece: runs of consecutive local rows within a block.
    std::vector<RowRange> ranges;
    for (std::int64_t l = my_begin; l < my_end;) {
      const std::int64_t run = std::min(my_end - l, rb - l % rb);
      const std::int64_t g = owned_to_global(l, rb, layout.myrow, layout.nprow);
      ranges.push_back({g, g + run});
      l += run;
    }
    grow(mine, static_cast<std::size_t>(my_count * cols));
    const std::string read_error = read(ranges, mine);
    if (error.empty()) error = read_error;
    if (error.empty() && first_bad == LLONG_MAX) {
      const std::int64_t bad = first_non_finite(mine.data(), static_cast<std::int64_t>(mine.size()));
      if (bad >= 0) first_bad = global_row(ranges, bad / cols) * cols + bad % cols;
    }

    // Each destination's columns of my rows, already column-major (the
    // layout of its local block), whole column blocks at a time.
    grow(send, mine.size());
    std::int64_t at = 0;
    for (int c = 0; c < q; ++c) {
      const std::int64_t width = widths[static_cast<std::size_t>(c)];
      for (std::int64_t lj = 0; lj < width; lj += cb)
        transpose_into(mine.data(), my_count, cols, owned_to_global(lj, cb, c, q),
                       std::min<std::int64_t>(cb, width - lj), send.data() + at + lj * my_count, my_count);
      send_offsets[static_cast<std::size_t>(c)] = static_cast<int>(at);
      send_counts[static_cast<std::size_t>(c)] = static_cast<int>(my_count * width);
      at += my_count * width;
    }
    // My own piece goes to the sink straight from the send buffer.
    const double* own = send.data() + send_offsets[static_cast<std::size_t>(layout.mycol)];
    send_counts[static_cast<std::size_t>(layout.mycol)] = 0;
    std::int64_t received_total = 0;
    for (int c = 0; c < q; ++c) {
      const std::int64_t count = c == layout.mycol ? 0 : (piece_begin(c + 1) - piece_begin(c)) * local_cols;
      receive_offsets[static_cast<std::size_t>(c)] = static_cast<int>(received_total);
      receive_counts[static_cast<std::size_t>(c)] = static_cast<int>(count);
      received_total += count;
    }
    grow(received, static_cast<std::size_t>(received_total));
    // Comm has no all-to-all; this is the one collective the exchange needs.
    if (q > 1)
      MPI_Alltoallv(send.data(), send_counts.data(), send_offsets.data(), MPI_DOUBLE, received.data(),
                    receive_counts.data(), receive_offsets.data(), MPI_DOUBLE, row_comm.get());
    if (!error.empty() || first_bad != LLONG_MAX || local_cols == 0) continue;
    for (int c = 0; c < q; ++c) {
      const std::int64_t count = piece_begin(c + 1) - piece_begin(c);
      if (count == 0) continue;
      sink(piece_begin(c), count,
           c == layout.mycol ? own : received.data() + receive_offsets[static_cast<std::size_t>(c)]);
    }
  }
  agree(comm, error);
  // Every rank reports the first bad entry in file order, whoever read it.
  first_bad = comm.min(first_bad);
  if (first_bad != LLONG_MAX) throw Error(non_finite_message(path, first_bad / cols, first_bad % cols));
}

}  // namespace kembed::io
