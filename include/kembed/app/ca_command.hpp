#pragma once
/// @file `kembed ca` (a contingency table) and `kembed mca` (categorical
/// variables, through their indicator matrix): options -> grid -> fit ->
/// inertias.csv, rows.csv, columns.csv and run.json.
#include <boost/program_options.hpp>

#include "kembed/app/options.hpp"
#include "kembed/app/transform_command.hpp"
#include "kembed/mpi/comm.hpp"
#include "kembed/spectral/ca.hpp"

namespace kembed::app {

boost::program_options::options_description ca_options();

/// Collective: correspondence analysis of the I x J count table of --input.
/// Throws agreed Errors.
void run_ca(const boost::program_options::variables_map& vm, const Comm& world);

/// The default grid of ca on a rows x cols table (the route resolved):
/// P x 1 for S^T S (the J x J product of whole rows), 1 x P for S S^T.
GridPreference ca_grid(spectral::CaRoute route, std::int64_t rows, std::int64_t cols);

/// Collective: principal coordinates of supplementary rows (rows of
/// `points` with the table's J columns) or supplementary columns (given as
/// rows of I entries, when I != J) with a CA model (see Projector).
Projection project_ca(const io::Model& model, io::MatrixFile& points, const BlacsGrid& grid,
                      int block_size);

boost::program_options::options_description mca_options();

/// Collective: multiple correspondence analysis of the categorical table of
/// --input (CA of its indicator matrix, with Benzécri's and Greenacre's
/// adjusted inertias). Throws agreed Errors.
void run_mca(const boost::program_options::variables_map& vm, const Comm& world);

}  // namespace kembed::app
