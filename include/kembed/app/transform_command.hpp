#pragma once
/// @file `kembed transform`: project new data with a saved model.
#include <boost/program_options.hpp>
#include <vector>

#include "kembed/io/matrix_file.hpp"
#include "kembed/io/model.hpp"
#include "kembed/linalg/blacs_grid.hpp"

namespace kembed::app {

/// New points' coordinates in a fitted embedding.
struct Projection {
  int components = 0;
  std::vector<double> embedding;  ///< rank 0 only: m x components, row-major
};

/// Collective: projects `points` with `model` (of the projector's method).
using Projector = Projection (*)(const io::Model& model, io::MatrixFile& points,
                                 const BlacsGrid& grid, int block_size);

boost::program_options::options_description transform_options();
void run_transform(const boost::program_options::variables_map& vm, const Comm& world);

}  // namespace kembed::app
