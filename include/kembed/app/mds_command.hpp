#pragma once
/// @file `kembed mds`: options -> grid -> fit -> result directory and model.
#include <boost/program_options.hpp>

#include "kembed/app/driver.hpp"
#include "kembed/app/transform_command.hpp"
#include "kembed/mpi/comm.hpp"
#include "kembed/spectral/mds.hpp"

namespace kembed::app {

boost::program_options::options_description mds_options();

/// Collective: runs classical MDS and commits embedding.csv, eigenvalues.csv,
/// spectrum.csv (evd), run.json and model/ to the output directory. Throws
/// agreed Errors.
void run_mds(const boost::program_options::variables_map& vm, const Comm& world);

/// Collective: writes the model of an MDS-like fit into the staging
/// directory: what Gower's formula needs (vectors, eigenvalues, row means of
/// the squared distances and their grand mean), the training points when
/// `with_points`, and the method's own manifest `fields`.
void save_gower_model(Run& run, const spectral::MdsResult& r, int k, bool with_points,
                      const Json& fields);

/// Collective: places new points with an MDS model (see Projector): their
/// m x n distances to the training points, or (for a model fitted on points)
/// the new points themselves.
Projection project_mds(const io::Model& model, io::MatrixFile& points, const BlacsGrid& grid,
                       int block_size);

}  // namespace kembed::app
