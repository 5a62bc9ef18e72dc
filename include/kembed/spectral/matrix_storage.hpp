#pragma once
/// @file How a method holds its symmetric n x n matrix: whole, only the
/// blocks on and below the diagonal (Storage::lower_blocks), or not at all
/// (matrix-free: recomputed from the points in every product). Decided once
/// at the start of a fit, with the solver and the memory plan (plan_fit),
/// and handed down.
#include <cstdint>
#include <string>

#include "kembed/spectral/eigensolver.hpp"
#include "kembed/spectral/memory_plan.hpp"

namespace kembed::spectral {

/// --storage: full, lower, none, or automatic (lower where
/// lower_storage_applies; none where nothing stored fits, see plan_fit).
enum class StorageRequest { automatic, full, lower, none };

/// What a fit holds.
enum class MatrixStorage { full, lower_blocks, none };

/// "full", "lower_blocks" or "none" (run.json's kernel_storage / matrix_storage).
std::string storage_name(MatrixStorage storage);

/// Whether a method stores its symmetric n x n matrix in lower blocks: not
/// asked for full storage, the matrix assembled from points in Gram tiles
/// (`tiled`: the assembly then computes only the stored blocks), and the
/// solver krylov. evd, evr and elpa get the whole matrix.
/// @pre `solver` is resolved (not automatic)
bool lower_storage_applies(StorageRequest request, bool tiled, Solver solver);

/// The Krylov settings of a matrix-free run: block width
/// max(k + max(4, k/4), kMatrixFreeBlockWidth) unless one is given. Each
/// product recomputes the matrix whatever its width, and its own flops grow
/// with the width (4 b per entry below the diagonal beside the Gram
/// product's 2 d), so the width is chosen by measurement: n = 8000, d = 64,
/// rbf, k = 10, 2 ranks (a shared 2-core VM): b = 16: 15 products, 7.4 s;
/// b = 24: 12 products, 7.2 s; b = 32: 12, 7.8 s; b = 48: 12, 10.0 s. Wider
/// blocks saved no product here, so the stored path's width stays.
inline constexpr int kMatrixFreeBlockWidth = 24;
KrylovSettings matrix_free_krylov(KrylovSettings krylov, int k);

/// A fit's decisions, made once at its start (plan_fit) and handed down:
/// the layers below read them instead of deriving them again from the
/// options. `shape` is what the memory plan counts, with shape.solver ==
/// solver and its storage flags set; `memory` is plan_memory(shape).
struct FitPlan {
  MatrixStorage storage = MatrixStorage::full;
  Solver solver = Solver::evd;  ///< resolved: never Solver::automatic
  KrylovSettings krylov;        ///< as the solver uses them (matrix-free: matrix_free_krylov)
  ProblemShape shape;
  MemoryPlan memory;
  std::string note;  ///< what --storage auto chose and why (empty when nothing was chosen)
};

/// The plan of a fit of `shape` (shape.solver as asked, auto allowed):
/// the solver resolved once (resolve_solver with `krylov`; krylov for
/// single precision and matrix-free), the storage (lower blocks where
/// lower_storage_applies; `tiled` and `from_points` say whether the matrix
/// is assembled from points in Gram tiles and whether it is computed from
/// points at all, which matrix-free needs), the Krylov settings as used and
/// the memory plan. --storage auto picks none where the stored matrix does
/// not fit in `limit` bytes per rank on `ranks` ranks (the run would be
/// refused), the solver asked is krylov or auto, and the matrix-free run
/// fits; the note says so. A request the fit cannot honour is the caller's
/// error to raise (the commands refuse it before reading anything).
FitPlan plan_fit(StorageRequest request, bool tiled, bool from_points, ProblemShape shape,
                 const KrylovSettings& krylov, double limit, int ranks);

/// Why the solver asked (`asked`, before plan_fit resolved it) cannot run
/// on `plan`, or "": a matrix-free fit has no stored matrix for evd, evr or
/// elpa (krylov and auto only).
std::string storage_solver_error(const FitPlan& plan, Solver asked);

}  // namespace kembed::spectral
