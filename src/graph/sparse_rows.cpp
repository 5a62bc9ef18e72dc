#include "kembed/graph/sparse_rows.hpp"

#include <algorithm>

namespace kembed::graph {

SparseRows symmetrized_rows(std::int64_t n, int block_size, const NeighborLists& lists,
                            const Comm& comm, const std::vector<std::int64_t>& label) {
  const auto name = [&](std::int64_t v) { return label.empty() ? v : label[v]; };
  const int p = comm.size();
  const BlockCyclic1D rows(n, block_size, comm.rank(), p);
  // Both directions of every listed pair (i, j), i != j, to the owner of
  // their first index: counted, then placed by owner.
  struct Pair {
    std::int64_t row, col;
  };
  std::vector<std::int64_t> counts(static_cast<std::size_t>(p), 0);
  const std::int64_t listed_rows = lists.rows.size();
  for (std::int64_t r = 0; r < listed_rows; ++r) {
    const std::int64_t i = name(lists.rows.begin + r);
    for (std::int64_t t = lists.offsets[r]; t < lists.offsets[r + 1]; ++t) {
      const std::int64_t j = name(lists.lists[t].index);
      if (j == i) continue;
      ++counts[rows.owner(i)];
      ++counts[rows.owner(j)];
    }
  }
  std::vector<std::int64_t> at(static_cast<std::size_t>(p), 0);
  for (int q = 1; q < p; ++q) at[q] = at[q - 1] + counts[q - 1];
  std::vector<Pair> out(static_cast<std::size_t>(at[p - 1] + counts[p - 1]));
  for (std::int64_t r = 0; r < listed_rows; ++r) {
    const std::int64_t i = name(lists.rows.begin + r);
    for (std::int64_t t = lists.offsets[r]; t < lists.offsets[r + 1]; ++t) {
      const std::int64_t j = name(lists.lists[t].index);
      if (j == i) continue;
      out[at[rows.owner(i)]++] = {i, j};
      out[at[rows.owner(j)]++] = {j, i};
    }
  }
  std::vector<Pair> in = comm.alltoallv(out, counts);
  std::vector<Pair>().swap(out);

  // Counting sort by local row, each row sorted by column; a pair listed
  // from both ends arrives twice and sums to 1.
  const int local = rows.local_size();
  SparseRows w{rows, std::vector<std::int64_t>(static_cast<std::size_t>(local) + 1, 0), {}, {}};
  std::vector<std::int64_t> start(static_cast<std::size_t>(local) + 1, 0);
  for (const Pair& e : in) ++start[rows.to_local(e.row) + 1];
  for (int li = 0; li < local; ++li) start[li + 1] += start[li];
  std::vector<std::int64_t> cols(in.size());
  {
    std::vector<std::int64_t> fill(start.begin(), start.end() - 1);
    for (const Pair& e : in) cols[fill[rows.to_local(e.row)]++] = e.col;
  }
  std::vector<Pair>().swap(in);
  w.columns.reserve(cols.size());
  w.values.reserve(cols.size());
  for (int li = 0; li < local; ++li) {
    std::sort(cols.begin() + start[li], cols.begin() + start[li + 1]);
    for (std::int64_t t = start[li]; t < start[li + 1]; ++t) {
      if (t > start[li] && cols[t] == cols[t - 1]) {
        w.values.back() += 0.5;
        continue;
      }
      w.columns.push_back(cols[t]);
      w.values.push_back(0.5);
    }
    w.offsets[li + 1] = static_cast<std::int64_t>(w.columns.size());
  }
  w.columns.shrink_to_fit();
  w.values.shrink_to_fit();
  return w;
}

}  // namespace kembed::graph
