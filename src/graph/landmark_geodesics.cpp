#include "kembed/graph/landmark_geodesics.hpp"

#include <algorithm>
#include <limits>

#include "kembed/graph/geodesic_search.hpp"
#include "kembed/graph/neighbors.hpp"

namespace kembed::graph {

std::vector<double> landmark_geodesics(const Graph& g, const std::vector<std::int64_t>& landmarks,
                                       const GraphEntries& targets, const Comm& comm,
                                       std::int64_t round_values) {
  const int ranks = comm.size();
  const auto m = static_cast<std::int64_t>(landmarks.size());
  const std::int64_t count = targets.count;
  const bool through = !targets.offsets.empty();
  std::vector<IndexRange> owned(ranks), sources(ranks);
  std::int64_t most = 0;
  for (int r = 0; r < ranks; ++r) {
    owned[r] = neighbor_rows(count, r, ranks);
    sources[r] = neighbor_rows(m, r, ranks);
    most = std::max(most, sources[r].size());
  }
  const IndexRange mine = owned[comm.rank()];
  // Landmarks per rank and round: one round's sends at most about
  // round_values values (and so what MPI may copy of them).
  const std::int64_t batch = std::max<std::int64_t>(1, round_values / std::max<std::int64_t>(count, 1));
  const std::int64_t rounds = (most + batch - 1) / batch;
  std::vector<double> local(static_cast<std::size_t>(mine.size() * m));
  std::vector<double> send, recv;
  GeodesicSearch search(g);
  std::vector<std::int64_t> send_counts(ranks), recv_counts(ranks), offset(ranks + 1);
  const double inf = std::numeric_limits<double>::infinity();
  for (std::int64_t round = 0; round < rounds; ++round) {
    // This round: landmarks [first_r, last_r) of each rank r's block.
    const auto in_round = [&](int r) {
      const std::int64_t first = std::min(sources[r].end, sources[r].begin + round * batch);
      return IndexRange{first, std::min(sources[r].end, first + batch)};
    };
    const IndexRange now = in_round(comm.rank());
    for (int r = 0; r < ranks; ++r) {
      send_counts[r] = now.size() * owned[r].size();
      recv_counts[r] = in_round(r).size() * mine.size();
      offset[r + 1] = offset[r] + send_counts[r];
    }
    // Sent to rank r: this round's landmarks' distances to r's targets,
    // landmark by landmark (now.size() x owned[r].size(), row-major).
    send.resize(static_cast<std::size_t>(offset[ranks]));  // every entry written below
    for (std::int64_t l = now.begin; l < now.end; ++l) {
      search.run(landmarks[l]);
      const std::int64_t row = l - now.begin;
      for (int r = 0; r < ranks; ++r) {
        double* out = &send[offset[r] + row * owned[r].size()];
        for (std::int64_t a = owned[r].begin; a < owned[r].end; ++a) {
          double best = inf;
          if (!through) {
            best = search.distance(a);
          } else {
            for (std::int64_t e = targets.offsets[a]; e < targets.offsets[a + 1]; ++e)
              best = std::min(best, targets.entries[e].distance +
                                        search.distance(targets.entries[e].index));
          }
          out[a - owned[r].begin] = best;
        }
      }
    }
    std::int64_t received = 0;
    for (auto c : recv_counts) received += c;
    recv.resize(static_cast<std::size_t>(received));
    comm.alltoallv(send.data(), send_counts, recv.data(), recv_counts);
    // From rank r: its landmarks of this round (in order) x this rank's
    // targets, into their columns of the rows x M result; transposed in
    // tiles of kTile targets, so that the rows written stay in the cache
    // (a row of the result is M values apart from the next).
    constexpr std::int64_t kTile = 64;
    std::int64_t at = 0;
    for (int r = 0; r < ranks; ++r) {
      const IndexRange theirs = in_round(r);
      for (std::int64_t a0 = 0; a0 < mine.size(); a0 += kTile) {
        const std::int64_t a1 = std::min(mine.size(), a0 + kTile);
        for (std::int64_t l = theirs.begin; l < theirs.end; ++l) {
          const double* in = &recv[std::size_t(at + (l - theirs.begin) * mine.size())];
          for (std::int64_t a = a0; a < a1; ++a) local[std::size_t(a * m + l)] = in[a];
        }
      }
      at += theirs.size() * mine.size();
    }
  }
  return local;
}

}  // namespace kembed::graph
