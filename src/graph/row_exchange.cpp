#include "kembed/graph/row_exchange.hpp"

#include <algorithm>

namespace kembed::graph {

RowExchange::RowExchange(const BlockCyclic1D& rows, const std::vector<std::int64_t>& columns,
                         const Comm& comm)
    : comm_(comm), rows_(rows) {
  const int p = comm.size(), me = comm.rank();
  // The distinct columns other ranks hold, ordered by (owner, index): the
  // fetched rows arrive in this order.
  std::vector<std::int64_t> ghosts;
  for (std::int64_t j : columns)
    if (rows.owner(j) != me) ghosts.push_back(j);
  std::sort(ghosts.begin(), ghosts.end(), [&](std::int64_t a, std::int64_t b) {
    const int oa = rows.owner(a), ob = rows.owner(b);
    return oa < ob || (oa == ob && a < b);
  });
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  fetched_ = static_cast<std::int64_t>(ghosts.size());
  recv_counts_.assign(static_cast<std::size_t>(p), 0);
  for (std::int64_t j : ghosts) ++recv_counts_[rows.owner(j)];

  const int local = rows.local_size();
  index_.resize(columns.size());
  for (std::size_t t = 0; t < columns.size(); ++t) {
    const std::int64_t j = columns[t];
    const int owner = rows.owner(j);
    if (owner == me) {
      index_[t] = rows.to_local(j);
    } else {
      const auto it =
          std::lower_bound(ghosts.begin(), ghosts.end(), j, [&](std::int64_t a, std::int64_t b) {
            const int oa = rows.owner(a), ob = rows.owner(b);
            return oa < ob || (oa == ob && a < b);
          });
      index_[t] = local + static_cast<int>(it - ghosts.begin());
    }
  }

  // Every owner learns which of its rows to send, in the order asked.
  std::vector<std::int64_t> asked = comm.alltoallv(ghosts, recv_counts_, &send_counts_);
  send_rows_.resize(asked.size());
  for (std::size_t t = 0; t < asked.size(); ++t) send_rows_[t] = rows.to_local(asked[t]);
  send_values_.assign(static_cast<std::size_t>(p), 0);
  recv_values_.assign(static_cast<std::size_t>(p), 0);
}

void RowExchange::gather(const double* x, int ldx, int width, std::vector<double>& buffer) {
  const int local = rows_.local_size();
  const std::size_t w = static_cast<std::size_t>(width);
  buffer.resize((static_cast<std::size_t>(local) + fetched_) * w);
  for (int c = 0; c < width; ++c) {
    const double* col = x + std::size_t(c) * ldx;
    for (int li = 0; li < local; ++li) buffer[li * w + c] = col[li];
  }
  send_.resize(send_rows_.size() * w);
  for (std::size_t t = 0; t < send_rows_.size(); ++t) {
    const int li = send_rows_[t];
    for (int c = 0; c < width; ++c) send_[t * w + c] = x[li + std::size_t(c) * ldx];
  }
  for (std::size_t q = 0; q < send_counts_.size(); ++q) {
    send_values_[q] = send_counts_[q] * width;
    recv_values_[q] = recv_counts_[q] * width;
  }
  comm_.alltoallv(send_.data(), send_values_, buffer.data() + std::size_t(local) * w, recv_values_);
}

std::size_t RowExchange::buffer_bytes(int width) const {
  return (static_cast<std::size_t>(rows_.local_size()) + fetched_ + send_rows_.size()) *
         static_cast<std::size_t>(width) * sizeof(double);
}

std::size_t RowExchange::plan_bytes() const { return send_rows_.size() * sizeof(int); }

}  // namespace kembed::graph
