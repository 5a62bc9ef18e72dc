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

bool lower_storage_applies(StorageRequest request, bool tiled, Solver solver) {
  return (request == StorageRequest::automatic || request == StorageRequest::lower) && tiled &&
         solver == Solver::krylov;
}

KrylovSettings matrix_free_krylov(KrylovSettings krylov, int k) {
  if (krylov.block == 0) krylov.block = std::max(k + std::max(4, k / 4), kMatrixFreeBlockWidth);
  return krylov;
}

FitPlan plan_fit(StorageRequest request, bool tiled, bool from_points, ProblemShape shape,
                 const KrylovSettings& krylov, double limit, int ranks) {
  FitPlan plan;
  const Solver asked = shape.solver;
  // The one place a fit's solver is resolved. Single precision runs krylov
  // whatever auto stands for; its storage follows auto's resolution.
  const Solver resolved = resolve_solver(asked, shape.n, shape.k, krylov);
  const Solver solver = shape.single_precision ? Solver::krylov : resolved;
  const auto finish = [&](MatrixStorage storage, const ProblemShape& planned, MemoryPlan memory) {
    plan.storage = storage;
    plan.shape = planned;
    plan.solver = planned.solver;
    plan.krylov = storage == MatrixStorage::none ? matrix_free_krylov(krylov, shape.k) : krylov;
    plan.memory = std::move(memory);
    return plan;
  };
  shape.solver = solver;
  shape.lower_storage = lower_storage_applies(request, tiled, resolved);
  shape.matrix_free = false;
  ProblemShape none = shape;
  none.matrix_free = true;
  none.lower_storage = false;
  none.solver = Solver::krylov;
  if (request == StorageRequest::none) return finish(MatrixStorage::none, none, plan_memory(none));
  const MatrixStorage stored =
      shape.lower_storage ? MatrixStorage::lower_blocks : MatrixStorage::full;
  MemoryPlan memory = plan_memory(shape);
  const bool krylov_allowed = asked == Solver::automatic || asked == Solver::krylov;
  if (request != StorageRequest::automatic || !from_points || !krylov_allowed || !(limit > 0) ||
      memory_shortfall(shape, memory, ranks, limit).empty())
    return finish(stored, shape, std::move(memory));
  MemoryPlan free = plan_memory(none);
  if (!memory_shortfall(none, free, ranks, limit).empty())
    return finish(stored, shape, std::move(memory));
  plan.note = "--storage auto: the stored matrix needs about " + human_bytes(memory.total()) +
              " per rank, more than the " + human_bytes(limit) +
              " available; running matrix-free (--storage none: about " +
              human_bytes(free.total()) +
              " per rank, the matrix recomputed from the points in every product)";
  return finish(MatrixStorage::none, none, std::move(free));
}

std::string storage_solver_error(const FitPlan& plan, Solver asked) {
  if (plan.storage != MatrixStorage::none || asked == Solver::automatic || asked == Solver::krylov)
    return "";
  return "--storage none needs --solver krylov (or auto): --solver " + solver_name(asked) +
         " works on a stored matrix";
}

}  // namespace kembed::spectral
