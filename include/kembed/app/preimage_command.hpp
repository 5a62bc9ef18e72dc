#pragma once
/// @file `kembed preimage`: from a kernel PCA embedding back to input space.
#include <boost/program_options.hpp>

#include "kembed/mpi/comm.hpp"

namespace kembed::app {

boost::program_options::options_description preimage_options();
/// Collective: reconstructs --input points (denoising) or --embedding
/// coefficients with a kernel PCA model and commits preimages.csv and
/// run.json to the output directory. Throws agreed Errors.
void run_preimage(const boost::program_options::variables_map& vm, const Comm& world);

}  // namespace kembed::app
