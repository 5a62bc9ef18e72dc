#include "kembed/app/graph_report.hpp"

namespace kembed::app {

Json graph_report(const graph::GraphStats& s) {
  Json j = Json::object();
  j["edges"] = s.edges;
  j["connected_components"] = s.components;
  j["min_degree"] = s.min_degree;
  j["max_degree"] = s.max_degree;
  return j;
}

Json connect_report(const std::vector<graph::Edge>& added, const graph::GraphStats& after,
                    const std::string& definition) {
  Json joined = Json::object();
  joined["edges_added"] = static_cast<std::int64_t>(added.size());
  std::vector<double> lengths;
  Json ends = Json::array();
  for (const auto& e : added) {
    lengths.push_back(e.length);
    ends.push_back(Json::array({e.source + 1, e.target + 1}));
  }
  joined["lengths"] = lengths;
  joined["edges"] = ends;
  joined["connected_components_after"] = after.components > 0 ? 1 : 0;
  joined["definition"] = definition;
  return joined;
}

}  // namespace kembed::app
