#include "kembed/graph/landmark_geodesics.hpp"

#include <algorithm>
#include <limits>

#include "kembed/graph/neighbors.hpp"
#include "kembed/graph/shortest_paths.hpp"

namespace kembed::graph {

std::vector<double> landmark_geodesics(const Graph& g, const std::vector<std::int64_t>& landmarks,
                                       const GraphEntries& targets, const Comm& comm) {
  const int ranks = comm.size();
  const auto m = static_cast<std::int64_t>(landmarks.size());
  const std::int64_t count = targets.count;
  const bool through = !targets.offsets.empty();
  const IndexRange sources = neighbor_rows(m, comm.rank(), ranks);
  const IndexRange mine = neighbor_rows(count, comm.rank(), ranks);
  std::vector<IndexRange> owned(ranks);
  std::vector<std::int64_t> send_counts(ranks), recv_counts(ranks);
  for (int r = 0; r < ranks; ++r) {
    owned[r] = neighbor_rows(count, r, ranks);
    send_counts[r] = sources.size() * owned[r].size();
    recv_counts[r] = neighbor_rows(m, r, ranks).size() * mine.size();
  }
  // Sent to rank r: this rank's landmarks' distances to r's targets,
  // landmark by landmark (sources.size() x owned[r].size(), row-major).
  std::vector<std::int64_t> offset(ranks + 1, 0);
  for (int r = 0; r < ranks; ++r) offset[r + 1] = offset[r] + send_counts[r];
  std::vector<double> send(static_cast<std::size_t>(offset[ranks]));
  std::vector<double> dist;
  const double inf = std::numeric_limits<double>::infinity();
  for (std::int64_t l = sources.begin; l < sources.end; ++l) {
    shortest_paths_from(g, landmarks[l], dist);
    const std::int64_t row = l - sources.begin;
    for (int r = 0; r < ranks; ++r) {
      double* out = &send[offset[r] + row * owned[r].size()];
      for (std::int64_t a = owned[r].begin; a < owned[r].end; ++a) {
        double best = inf;
        if (!through) {
          best = dist[a];
        } else {
          for (std::int64_t e = targets.offsets[a]; e < targets.offsets[a + 1]; ++e)
            best = std::min(best, targets.entries[e].distance + dist[targets.entries[e].index]);
        }
        out[a - owned[r].begin] = best;
      }
    }
  }
  dist = {};
  std::int64_t received = 0;
  for (auto c : recv_counts) received += c;
  std::vector<double> recv(static_cast<std::size_t>(received));
  comm.alltoallv(send.data(), send_counts, recv.data(), recv_counts);
  send = {};
  // From rank r: its landmarks (in order) x this rank's targets; placed in
  // columns neighbor_rows(m, r).begin ... of the rows x M result.
  const std::int64_t rows = mine.size();
  std::vector<double> local(static_cast<std::size_t>(rows * m));
  std::int64_t at = 0;
  for (int r = 0; r < ranks; ++r) {
    const IndexRange theirs = neighbor_rows(m, r, ranks);
    for (std::int64_t l = theirs.begin; l < theirs.end; ++l)
      for (std::int64_t a = 0; a < rows; ++a) local[std::size_t(a * m + l)] = recv[at++];
  }
  return local;
}

}  // namespace kembed::graph
