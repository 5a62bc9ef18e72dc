#pragma once
/// @file Whether a method keeps its whole n x n matrix or only the blocks on
/// and below the diagonal (Storage::lower_blocks).
#include <cstdint>

#include "kembed/spectral/eigensolver.hpp"

namespace kembed::spectral {

/// --storage: full, lower, or automatic (lower where lower_storage_applies).
enum class StorageRequest { automatic, full, lower };

/// Whether a method stores its symmetric n x n matrix in lower blocks: not
/// asked for full storage, the matrix assembled from points in Gram tiles
/// (`tiled`: the assembly then computes only the stored blocks), and the
/// solver krylov (automatic resolving to it). evd, evr and elpa get the
/// whole matrix.
bool lower_storage_applies(StorageRequest request, bool tiled, Solver solver, std::int64_t n, int k,
                           const KrylovSettings& krylov);

}  // namespace kembed::spectral
