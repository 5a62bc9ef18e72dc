#pragma once
/// @file `kembed mds`: options -> grid -> fit -> result directory and model.
#include <boost/program_options.hpp>

#include "kembed/app/transform_command.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::app {

boost::program_options::options_description mds_options();

/// Collective: runs classical MDS and commits embedding.csv, eigenvalues.csv,
/// spectrum.csv (evd), run.json and model/ to the output directory. Throws
/// agreed Errors.
void run_mds(const boost::program_options::variables_map& vm, const Comm& world);

/// Collective: places new points with an MDS model (see Projector): their
/// m x n distances to the training points, or (for a model fitted on points)
/// the new points themselves.
Projection project_mds(const io::Model& model, io::MatrixFile& points, const BlacsGrid& grid,
                       int block_size);

}  // namespace kembed::app
