#pragma once
/// @file Private: copy_to_npy and fingerprint_rows with the number of rows
/// each rank handles per round made explicit (tests use small rounds).
#include <cstdint>
#include <string>

#include "kembed/io/matrix_file.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::io {

/// Collective: fingerprint_rows (and the copy to `path` when not empty),
/// each rank reading and writing `chunk_rows` consecutive rows per round.
/// @pre chunk_rows > 0
std::string fingerprint_rows_in_rounds(const Comm& comm, MatrixFile& source, const std::string& path,
                                       std::int64_t chunk_rows);

}  // namespace kembed::io
