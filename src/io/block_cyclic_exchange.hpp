#pragma once
/// @file Private: the block-cyclic read shared by the binary and HDF5 files.
/// The ranks of a process row need the same file rows, each its own
/// columns: they split those rows into contiguous pieces, read one piece
/// each (so each entry of the file is read once over all ranks), and
/// exchange the columns in memory (MPI_Alltoallv within the process row).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kembed/io/matrix_file.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::io {

/// Reads the rows of `ranges` (ascending) into `out`, already sized to
/// their rows x cols, as float64 row-major; returns "" or an error message
/// (agreed by the caller). May be collective only if every rank calls it in
/// every round (exchange_block_cyclic makes the rounds equal on all ranks).
using ReadPiece = std::function<std::string(const std::vector<RowRange>&, std::vector<double>&)>;

/// True when `layout` has one rank of `comm` per grid position, as the
/// exchange needs (other layouts take MatrixFile's stripe path).
bool exchange_fits(const Comm& comm, const BlockCyclicLayout& layout);

/// Collective over `comm`: the block-cyclic read of the rows x cols matrix
/// in `path` (as messages name it) through `read`, handing this rank's
/// entries to `sink` column-major, about 16 MB of rows at a time. Read
/// errors are agreed; a non-finite value is an agreed error naming the
/// first such entry in file order. @pre exchange_fits(comm, layout)
void exchange_block_cyclic(const Comm& comm, const std::string& path, std::int64_t rows, std::int64_t cols,
                           const BlockCyclicLayout& layout, const ReadPiece& read, const LocalRowsSink& sink);

}  // namespace kembed::io
