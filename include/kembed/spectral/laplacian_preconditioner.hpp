#pragma once
/// @file LOBPCG's preconditioner for the top eigenpairs of a normalized
/// affinity M = D^(-1/2) W D^(-1/2): (I - M)^+ = D^(1/2) (D - W)^+ D^(1/2),
/// with (D - W)^+ approximated by one V-cycle of the graph's multigrid.
#include "kembed/graph/graph_multigrid.hpp"
#include "kembed/spectral/lobpcg.hpp"

namespace kembed::spectral {

class NormalizedLaplacianPreconditioner final : public Preconditioner {
 public:
  /// `mg` built from the same rows of W (and so the same layout) as M.
  explicit NormalizedLaplacianPreconditioner(graph::GraphMultigrid& mg);
  /// z = D^(1/2) B D^(1/2) r; r orthogonal to sqrt(degree), so that D^(1/2) r
  /// has zero sum as the V-cycle B requires.
  void apply(const double* r, int ldr, int width, double* z, int ldz) override;

 private:
  graph::GraphMultigrid& mg_;
  std::vector<double> sqrt_degree_, scaled_;
};

}  // namespace kembed::spectral
