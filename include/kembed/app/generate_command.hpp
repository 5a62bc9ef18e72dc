#pragma once
/// @file `kembed generate`: a synthetic data set written as .npy in parallel.
#include <boost/program_options.hpp>

#include "kembed/mpi/comm.hpp"

namespace kembed::app {

boost::program_options::options_description generate_options();

/// Collective: generates --dataset with --rows x --cols and --seed, each rank
/// its own contiguous block of rows, and writes it to --output (.npy) with
/// MPI-IO; the file appears whole (rename) or not at all. Throws agreed Errors.
void run_generate(const boost::program_options::variables_map& vm, const Comm& world);

}  // namespace kembed::app
