#pragma once
/// @file Distribution: the rows of a matrix file that a rank of a process
/// grid needs, read straight into its panel or its block-cyclic block.
#include <vector>

#include "kembed/io/matrix_file.hpp"
#include "kembed/linalg/block_cyclic.hpp"
#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::distribute {

/// Collective: the rows of the data matrix in `file` whose global indices
/// `dist` gives this rank, row-major (dist.local_size() x file.cols()), in
/// local index order. These are the data a rank needs for its rows (or
/// columns) of a kernel matrix; no rank holds more of X than that.
std::vector<double> read_panel(io::MatrixFile& file, const BlockCyclic1D& dist);

/// Collective: reads the m x n matrix in `file` into the block-cyclic `k`
/// (io::MatrixFile::read_block_cyclic: binary and HDF5 files read each entry
/// once over all ranks; memory: about 64 MB of local rows per rank at a time).
/// @pre file is k.rows() x k.cols()
void read_block_cyclic(io::MatrixFile& file, DistMatrix& k);

}  // namespace kembed::distribute
