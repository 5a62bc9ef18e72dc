#pragma once
/// @file Geodesic distances to a few landmark vertices, for landmark
/// Isomap: Dijkstra from each landmark, the landmarks spread over the ranks,
/// the results exchanged so that each rank holds its block of rows of the
/// targets x landmarks matrix.
#include <cstdint>
#include <vector>

#include "kembed/core/index_range.hpp"
#include "kembed/graph/graph.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::graph {

/// Where each of `count` targets joins the graph: target a through the
/// vertices entries[offsets[a] .. offsets[a+1]), each at its edge length (a
/// new point and its nearest training points). With no offsets, target a
/// is vertex a itself (count = g.n).
struct GraphEntries {
  std::int64_t count = 0;
  std::vector<std::int64_t> offsets;  ///< count + 1 entries, or none
  std::vector<Neighbor> entries;
};

/// Values one round of landmark_geodesics sends from a rank, about (64 MiB).
inline constexpr std::int64_t kGeodesicRoundValues = std::int64_t{1} << 23;

/// Collective: the geodesic distance of every target to every landmark,
/// this rank's rows: targets neighbor_rows(count, rank, ranks) x M,
/// row-major, landmark l in column l. Landmark l's distance to target a is
/// the shortest path along g from a's entries (the shortest over them of
/// entry length + path length), +inf when there is none. Rank r runs
/// Dijkstra from landmarks neighbor_rows(M, r, ranks) (at most ceil(M/P)
/// searches of O(E log n)) in rounds of max(1, round_values / count)
/// landmarks; each round keeps the searches' entries at the targets in the
/// order of their owners, and one all-to-all moves them to the rows. Memory
/// per rank besides g: the ceil(count/P) x M result, and per round about
/// round_values values sent, as many received, and what MPI copies of them
/// (Open MPI's all-to-all held about one more copy of the send buffer,
/// measured on 1-3 ranks). The result does not depend on the number of
/// ranks or the round size, bit for bit.
/// @pre g identical on every rank, non-negative weights, landmarks in [0, g.n)
std::vector<double> landmark_geodesics(const Graph& g, const std::vector<std::int64_t>& landmarks,
                                       const GraphEntries& targets, const Comm& comm,
                                       std::int64_t round_values = kGeodesicRoundValues);

}  // namespace kembed::graph
