#pragma once
/// @file `kembed kpca`: options -> grid -> fit -> result directory.
#include "kembed/app/options.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::app {

/// Collective: runs kernel PCA as `options` say and commits embedding.csv,
/// eigenvalues.csv and run.json to the output directory. Throws agreed Errors.
void run_kpca(const KpcaOptions& options, const Comm& world);

}  // namespace kembed::app
