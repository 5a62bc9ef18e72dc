#include "kembed/spectral/matrix_storage.hpp"

namespace kembed::spectral {

bool lower_storage_applies(StorageRequest request, bool tiled, Solver solver, std::int64_t n, int k,
                           const KrylovSettings& krylov) {
  return request != StorageRequest::full && tiled &&
         resolve_solver(solver, n, k, krylov) == Solver::krylov;
}

}  // namespace kembed::spectral
