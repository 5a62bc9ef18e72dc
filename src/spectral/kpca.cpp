#include "kembed/spectral/kpca.hpp"

#include <cmath>
#include <limits>
#include <sstream>

#include "kembed/core/error.hpp"
#include "kembed/kernel/assemble.hpp"
#include "kembed/linalg/reductions.hpp"
#include "kembed/linalg/symmetry.hpp"
#include "kembed/spectral/centering.hpp"
#include "kembed/spectral/memory_plan.hpp"
#include "kembed/spectral/residuals.hpp"
#include "kembed/spectral/sign_convention.hpp"

namespace kembed {

namespace {

// Relative tolerance for a precomputed kernel to count as symmetric.
constexpr double kSymmetryTolerance = 1e-10;

void check_shape(const io::MatrixFile& file, const KpcaSettings& s, const Comm& comm) {
  std::string error;
  const auto n = file.rows();
  if (s.kernel.type == KernelType::precomputed && file.rows() != file.cols())
    error = file.path() + ": a precomputed kernel must be square, found " +
            std::to_string(file.rows()) + " x " + std::to_string(file.cols());
  else if (n < 2)
    error = file.path() + ": kernel PCA needs at least 2 samples, found " + std::to_string(n);
  else if (s.components > n)
    error = "--components " + std::to_string(s.components) + " exceeds the number of samples (" +
            std::to_string(n) + ") in " + file.path();
  agree(comm, error);
}

// Assembles the kernel matrix of `file` into k (collective). Phases go to
// `timer` when given.
void build_kernel(io::MatrixFile& file, const Kernel& kernel, DistMatrix& k, PhaseTimer* timer,
                  bool check_symmetry) {
  if (kernel.type == KernelType::precomputed) {
    if (timer) timer->start("distribute");
    read_block_cyclic(file, k);
    if (!check_symmetry) return;
    if (auto a = find_asymmetry(k, kSymmetryTolerance)) {
      std::ostringstream msg;
      msg.precision(17);
      msg << file.path() << ": precomputed kernel is not symmetric: entry (" << a->i + 1 << ", "
          << a->j + 1 << ") is " << a->a_ij << " but (" << a->j + 1 << ", " << a->i + 1
          << ") is " << a->a_ji << " (1-based)";
      agree(k.grid().comm(), msg.str());
    }
    return;
  }
  if (timer) timer->start("distribute");
  const auto row_panel = read_panel(file, k.row_dist());
  const auto col_panel = read_panel(file, k.col_dist());
  if (timer) timer->start("assemble");
  assemble_kernel(kernel, row_panel, col_panel, static_cast<int>(file.cols()), k);
}

ProblemShape shape_of(const KpcaResult& r, const KpcaSettings& s, const BlacsGrid& grid) {
  return {r.n, r.d, s.components, grid.nprow(), grid.npcol(), s.block_size, s.solver};
}

}  // namespace

KpcaResult fit_kpca(io::MatrixFile& file, const BlacsGrid& grid, const KpcaSettings& settings,
                    PhaseTimer& timer) {
  const Comm& comm = grid.comm();
  check_shape(file, settings, comm);
  KpcaResult result;
  result.n = file.rows();
  result.d = settings.kernel.type == KernelType::precomputed ? 0 : file.cols();
  result.kernel = settings.kernel.with_default_gamma(result.d);
  const int k = settings.components, nb = settings.block_size;
  const std::int64_t n = result.n;
  const MemoryCheck memory =
      check_memory(shape_of(result, settings, grid), settings.max_memory_per_rank, comm);
  result.estimated_peak_bytes = memory.estimate;
  result.memory_limit_bytes = memory.limit;

  DistMatrix kmat(grid, n, n, nb, nb);
  build_kernel(file, result.kernel, kmat, &timer, true);

  timer.start("center");
  {
    CenteringStats stats = center_kernel(kmat);
    result.col_means = std::move(stats.col_means);
    result.grand_mean = stats.grand_mean;
  }
  result.trace = trace(kmat);
  result.frobenius_norm = frobenius_norm(kmat);

  timer.start("solve");
  Eigenpairs pairs = top_eigenpairs(kmat, k, settings.solver, settings.krylov);
  result.solver_used = solver_name(pairs.used);
  result.solver_note = pairs.note;
  result.iterations = pairs.iterations;
  result.matvecs = pairs.matvecs;
  result.eigenvalues = pairs.values;
  result.spectrum = pairs.spectrum;

  // Components must have numerically positive eigenvalues: z = K~ a with
  // a = v / sqrt(lambda) is undefined otherwise.
  const double largest = std::abs(pairs.values[0]);
  const double threshold = static_cast<double>(n) * std::numeric_limits<double>::epsilon() *
                           std::max(largest, result.frobenius_norm);
  int positive = 0;
  for (double v : pairs.values) positive += v > threshold ? 1 : 0;
  if (positive < k) {
    std::string count = std::to_string(positive);
    if (!pairs.spectrum.empty()) {
      int all_positive = 0;
      for (double v : pairs.spectrum) all_positive += v > threshold ? 1 : 0;
      count = std::to_string(all_positive);
    }
    agree(comm, "--components " + std::to_string(k) + " asks for more components than the " +
                    count + " positive eigenvalues of the centered kernel matrix (eigenvalue " +
                    std::to_string(positive + 1) + " is " +
                    std::to_string(pairs.values[positive]) + "); use --components " +
                    std::to_string(std::max(positive, 1)) + " or fewer");
  }
  for (double v : pairs.values) result.explained_ratio.push_back(v / result.trace);
  if (pairs.spectrum.size() > static_cast<std::size_t>(k)) {
    result.smallest_gap = std::numeric_limits<double>::infinity();
    for (int j = 0; j < k; ++j)
      result.smallest_gap = std::min(
          result.smallest_gap, (pairs.spectrum[j] - pairs.spectrum[j + 1]) / largest);
  }

  timer.start("project");
  fix_signs(pairs.vectors);
  const auto v = pairs.vectors.gather_to_root();
  if (comm.is_root()) {
    result.embedding.resize(std::size_t(n) * k);
    result.coefficients.resize(std::size_t(n) * k);
    for (int j = 0; j < k; ++j) {
      const double scale = std::sqrt(result.eigenvalues[j]);
      for (std::int64_t i = 0; i < n; ++i) {
        result.embedding[std::size_t(i) * k + j] = v[std::size_t(j) * n + i] * scale;
        result.coefficients[std::size_t(i) * k + j] = v[std::size_t(j) * n + i] / scale;
      }
    }
  }

  // Residuals need K~ again. pdsyevd and pdsyevr overwrote it: rebuild it in
  // place rather than keep a third n x n matrix.
  timer.start("residual");
  if (!pairs.input_preserved) {
    build_kernel(file, result.kernel, kmat, nullptr, false);
    center_kernel(kmat);
  }
  const auto norms = residual_norms(kmat, pairs.vectors, pairs.values);
  for (double r : norms) result.residuals.push_back(r / result.frobenius_norm);
  reject_inaccurate_pairs(comm, result.residuals, result.solver_used);
  timer.stop();
  return result;
}

}  // namespace kembed
