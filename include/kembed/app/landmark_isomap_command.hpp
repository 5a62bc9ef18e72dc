#pragma once
/// @file `kembed isomap --approx landmark --landmarks M`: landmark Isomap's
/// options, run (result directory, run.json, model) and projection.
#include <boost/program_options.hpp>

#include "kembed/app/transform_command.hpp"
#include "kembed/graph/neighbors.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::app {

/// --approx, --landmarks (isomap's options add them).
boost::program_options::options_description landmark_isomap_options();

/// Whether the command line asks for landmark Isomap (--approx given; an
/// Error for any --approx but landmark, and for --landmarks without it).
bool wants_landmark_isomap(const boost::program_options::variables_map& vm);

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
