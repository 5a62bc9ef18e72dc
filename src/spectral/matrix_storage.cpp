#include "kembed/spectral/matrix_storage.hpp"

#include <algorithm>

namespace kembed::spectral {

std::string storage_name(MatrixStorage storage) {
  switch (storage) {
    case MatrixStorage::full:
      return "full";
    case MatrixStorage::lower_blocks:
      return "lower_blocks";
    case MatrixStorage::none:
      return "none";
  }
  return "?";
}

bool lower_storage_applies(StorageRequest request, bool tiled, Solver solver, std::int64_t n, int k,
                           const KrylovSettings& krylov) {
  return (request == StorageRequest::automatic || request == StorageRequest::lower) && tiled &&
         resolve_solver(solver, n, k, krylov) == Solver::krylov;
}

KrylovSettings matrix_free_krylov(KrylovSettings krylov, int k) {
  if (krylov.block == 0) krylov.block = std::max(k + std::max(4, k / 4), kMatrixFreeBlockWidth);
  return krylov;
}

StorageChoice choose_storage(StorageRequest request, bool tiled, bool from_points,
                             ProblemShape shape, const KrylovSettings& krylov, double limit,
                             int ranks) {
  StorageChoice choice;
  const auto matrix_free = [&] {
    choice.storage = MatrixStorage::none;
    choice.shape.matrix_free = true;
    choice.shape.lower_storage = false;
    choice.shape.solver = Solver::krylov;
  };
  const bool lower = lower_storage_applies(request, tiled, shape.solver, shape.n, shape.k, krylov);
  shape.lower_storage = lower;
  shape.matrix_free = false;
  choice.shape = shape;
  choice.storage = lower ? MatrixStorage::lower_blocks : MatrixStorage::full;
  if (request == StorageRequest::none) {
    matrix_free();
    return choice;
  }
  const bool krylov_allowed = shape.solver == Solver::automatic || shape.solver == Solver::krylov;
  if (request != StorageRequest::automatic || !from_points || !krylov_allowed || !(limit > 0))
    return choice;
  const std::string stored = memory_shortfall(shape, ranks, limit);
  if (stored.empty()) return choice;
  const StorageChoice kept = choice;
  matrix_free();
  if (!memory_shortfall(choice.shape, ranks, limit).empty()) return kept;
  choice.note = "--storage auto: the stored matrix needs about " +
                human_bytes(plan_memory(shape).total()) + " per rank, more than the " +
                human_bytes(limit) + " available; running matrix-free (--storage none: about " +
                human_bytes(plan_memory(choice.shape).total()) +
                " per rank, the matrix recomputed from the points in every product)";
  return choice;
}

std::string storage_solver_error(const StorageChoice& choice, Solver solver) {
  if (choice.storage != MatrixStorage::none || solver == Solver::automatic ||
      solver == Solver::krylov)
    return "";
  return "--storage none needs --solver krylov (or auto): --solver " + solver_name(solver) +
         " works on a stored matrix";
}

}  // namespace kembed::spectral
