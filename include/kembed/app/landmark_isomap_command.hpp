#pragma once
/// @file `kembed isomap --approx landmark --landmarks M`: landmark Isomap's
/// options, run (result directory, run.json, model) and projection.
#include <boost/program_options.hpp>
#include <cstdint>
#include <functional>

#include "kembed/app/transform_command.hpp"
#include "kembed/approx/landmark_isomap.hpp"
#include "kembed/graph/neighbors.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::app {

/// --approx, --landmarks (isomap's options add them).
boost::program_options::options_description landmark_isomap_options();

/// Whether the command line asks for landmark Isomap (--approx given; an
/// Error for any --approx but landmark, and for --landmarks without it).
bool wants_landmark_isomap(const boost::program_options::variables_map& vm);

/// The memory plan of landmark Isomap with --neighbors K, made before the
/// graph exists: the graph counted with its most edges, n K
/// (approx::landmark_isomap_memory), the geodesics stored when that fits in
/// `limit` bytes per rank on `ranks` ranks, else recomputed. `kembed plan
/// isomap --approx landmark` prints it; the run checks it and hands its
/// storage down to the fit, whose own check (with the graph's real edges,
/// at most these) then passes too.
struct LandmarkIsomapPlan {
  double stored = 0, recomputed = 0;  ///< bytes of the busiest rank on `ranks` ranks
  approx::GeodesicStorage storage = approx::GeodesicStorage::stored;
  std::function<double(int)> bytes_for;  ///< the chosen storage's bytes on P ranks
};
LandmarkIsomapPlan landmark_isomap_memory_plan(std::int64_t n, std::int64_t d, int neighbors,
                                               std::int64_t m, int k, int ranks, double limit);

/// Collective: landmark Isomap on the graph of `graph` (joined when
/// `connect`), committing embedding.csv, eigenvalues.csv, run.json and
/// model/. Refuses --dry-run and the exact decomposition's options. Throws
/// agreed Errors.
void run_landmark_isomap(const boost::program_options::variables_map& vm, const Comm& world,
                         const graph::NeighborSettings& graph, bool connect);

/// Collective: places new points with a landmark Isomap model (manifest
/// "approximation": "landmark"; see approx::landmark_isomap_transform).
Projection project_landmark_isomap(const io::Model& model, io::MatrixFile& points,
                                   const Comm& comm);

}  // namespace kembed::app
