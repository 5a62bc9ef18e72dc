#pragma once
/// @file `kembed plan`: the memory estimate and grid of a run, without running it.
#include <boost/program_options.hpp>

#include "kembed/mpi/comm.hpp"

namespace kembed::app {

boost::program_options::options_description plan_options();
/// Collective: prints (rank 0) the per-rank memory plan of `kembed METHOD`
/// for the shape given by --rows/--cols or read from --input's header.
void run_plan(const boost::program_options::variables_map& vm, const Comm& world);

}  // namespace kembed::app
