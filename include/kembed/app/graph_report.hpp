#pragma once
// run.json's account of a neighbour graph: its statistics and the edges
// --connect added (exact and landmark Isomap, spectral embedding).

#include <string>
#include <vector>

#include "kembed/app/driver.hpp"
#include "kembed/graph/connect.hpp"
#include "kembed/graph/graph.hpp"

namespace kembed::app {

/// Edges, connected components, smallest and largest degree.
Json graph_report(const graph::GraphStats& s);
/// The edges --connect added (1-based rows), their lengths, the components
/// left after them (`after`: the graph's statistics once joined) and
/// `definition`.
Json connect_report(const std::vector<graph::Edge>& added, const graph::GraphStats& after,
                    const std::string& definition);

}  // namespace kembed::app
