#pragma once
/// @file `kembed kpca`: options -> grid -> fit -> result directory.
#include <boost/program_options.hpp>

#include "kembed/mpi/comm.hpp"

namespace kembed::app {

boost::program_options::options_description kpca_options();

/// Collective: runs kernel PCA and commits embedding.csv, eigenvalues.csv and
/// run.json to the output directory. Throws agreed Errors.
void run_kpca(const boost::program_options::variables_map& vm, const Comm& world);

}  // namespace kembed::app
