#include "kembed/spectral/kpca.hpp"

#include <cmath>

#include "kembed/core/error.hpp"
#include "kembed/distribute/read_distributed.hpp"
#include "kembed/io/format_double.hpp"
#include "kembed/kernel/assemble.hpp"
#include "kembed/linalg/symmetry.hpp"
#include "kembed/spectral/centered_operator.hpp"
#include "kembed/spectral/centering.hpp"
#include "kembed/spectral/kernel_operator.hpp"
#include "kembed/spectral/input_shape.hpp"
#include "kembed/spectral/memory_plan.hpp"
#include "kembed/spectral/spectral_step.hpp"

namespace kembed::spectral {

namespace {

// Relative tolerance for a precomputed kernel to count as symmetric.
constexpr double kSymmetryTolerance = 1e-10;

void check_shape(const io::MatrixFile& file, const KpcaSettings& s, const Comm& comm) {
  agree(comm, input_shape_error(file, s.kernel.type == kernel::KernelType::precomputed,
                                "a precomputed kernel must be square", "kernel PCA", "samples",
                                s.components));
}

// Assembles the kernel matrix of `file` into k (collective). Phases go to
// `timer` when given. Assembled kernels leave their local sums in `sums`
// (when given) for one-pass centering; a precomputed kernel leaves it empty.
void build_kernel(io::MatrixFile& file, const kernel::Kernel& kernel, DistMatrix& k, PhaseTimer* timer,
                  bool check_symmetry, kernel::LocalSums* sums = nullptr) {
  if (kernel.type == kernel::KernelType::precomputed) {
    if (timer) timer->start("distribute");
    distribute::read_block_cyclic(file, k);
    if (!check_symmetry) return;
    if (auto a = find_asymmetry(k, kSymmetryTolerance)) {
      agree(k.grid().comm(), file.path() + ": precomputed kernel is not symmetric: entry (" +
                                 std::to_string(a->i + 1) + ", " + std::to_string(a->j + 1) + ") is " +
                                 io::format_double(a->a_ij) + " but (" + std::to_string(a->j + 1) + ", " +
                                 std::to_string(a->i + 1) + ") is " + io::format_double(a->a_ji) +
                                 " (1-based)");
    }
    return;
  }
  if (timer) timer->start("distribute");
  const auto row_panel = distribute::read_panel(file, k.row_dist());
  const auto col_panel = distribute::read_panel(file, k.col_dist());
  if (timer) timer->start("assemble");
  kernel::assemble_kernel(kernel, row_panel, col_panel, static_cast<int>(file.cols()), k, sums);
}

ProblemShape shape_of(const KpcaResult& r, const KpcaSettings& s, const BlacsGrid& grid) {
  ProblemShape shape{r.n, r.d, s.components, grid.nprow(), grid.npcol(), s.block_size, s.solver};
  shape.single_precision = s.single_precision;
  shape.lower_storage = r.lower_storage;
  shape.single_precision_available = r.d > 0;
  return shape;
}

// The request every precision shares: z = K~ a with a = v / sqrt(lambda)
// needs numerically positive eigenvalues.
SpectralRequest kpca_request(const KpcaSettings& settings) {
  const int k = settings.components;
  SpectralRequest request{k, settings.solver, settings.krylov};
  request.too_few_positive = [k](const PositiveShortfall& s) {
    const int available = s.total.value_or(s.positive);
    // With none positive there is no smaller --components to suggest.
    const std::string advice =
        available > 0 ? "; use --components " + std::to_string(available) + " or fewer"
                      : "; no component exists: the centered kernel is zero to round-off (all "
                        "samples alike under this kernel: identical rows, or a --gamma so small "
                        "or so large that every pair gets the same value)";
    return "--components " + std::to_string(k) + " asks for more components than the " +
           std::to_string(available) + " positive eigenvalues of the centered kernel matrix " +
           "(eigenvalue " + std::to_string(s.positive + 1) + " is " + io::format_double(s.value) +
           ")" + advice;
  };
  return request;
}

// Collective: the centered kernel in float32, assembled in double slabs.
SpectralStep solve_single(io::MatrixFile& file, const BlacsGrid& grid, const KpcaSettings& settings,
                          KpcaResult& result, PhaseTimer& timer) {
  agree(grid.comm(), result.kernel.type == kernel::KernelType::precomputed
                         ? "--precision single needs the samples to assemble the kernel from; a "
                           "precomputed kernel is read in double (use --precision double)"
                         : "");
  const int nb = settings.block_size;
  SingleMatrix kmat =
      SingleMatrix::uninitialized(grid, result.n, result.n, nb, nb,
                                  result.lower_storage ? Storage::lower_blocks : Storage::full);
  kernel::LocalSums sums;
  {  // The data panels are freed before the solve, as in double.
    timer.start("distribute");
    const auto row_panel = distribute::read_panel(file, kmat.row_dist());
    const auto col_panel = distribute::read_panel(file, kmat.col_dist());
    timer.start("assemble");
    kernel::assemble_kernel(result.kernel, row_panel, col_panel, static_cast<int>(file.cols()),
                            kmat, sums);
  }
  timer.start("center");
  CenteringStats stats = center_kernel(kmat, sums);
  result.col_means = std::move(stats.col_means);
  result.grand_mean = stats.grand_mean;
  SpectralRequest request = kpca_request(settings);
  request.known_frobenius_norm = stats.frobenius_norm;
  return spectral_step(kmat, request, timer);
}

// Collective: the centered kernel as an operator that is never stored; the
// means, trace and ||K~||_F from two recomputing passes of their own.
SpectralStep solve_matrix_free(io::MatrixFile& file, const BlacsGrid& grid,
                               const KpcaSettings& settings, KpcaResult& result,
                               PhaseTimer& timer) {
  const std::int64_t n = result.n;
  const int nb = settings.block_size;
  timer.start("distribute");
  auto row_panel = distribute::read_panel(file, BlockCyclic1D(n, nb, grid.myrow(), grid.nprow()));
  auto col_panel = distribute::read_panel(file, BlockCyclic1D(n, nb, grid.mycol(), grid.npcol()));
  PointMatrixOperator kmat(grid, n, nb, std::move(row_panel), std::move(col_panel),
                           static_cast<int>(result.d), result.kernel, settings.single_precision);
  timer.start("center");
  const PointMatrixSums sums = kmat.sums();
  std::vector<double> means = sums.row_sums;
  for (double& m : means) m /= static_cast<double>(n);
  const double grand_mean = sums.total / (static_cast<double>(n) * static_cast<double>(n));
  SpectralRequest request = kpca_request(settings);
  request.known_frobenius_norm = kmat.centered_frobenius_norm(means, grand_mean);
  CenteredOperator centered(kmat, means, grand_mean);
  // trace(J K J) = trace(K) - 1^T K 1 / n.
  SpectralStep step = spectral_step(centered, sums.trace - sums.total / static_cast<double>(n),
                                    request, timer);
  result.col_means = std::move(means);
  result.grand_mean = grand_mean;
  result.passes = kmat.passes();
  return step;
}

}  // namespace

FitPlan kpca_fit_plan(const KpcaSettings& s, const ProblemShape& shape, double limit, int ranks) {
  const kernel::KernelType type = s.kernel.type;
  const bool points = type != kernel::KernelType::precomputed;
  const bool tiled = points && type != kernel::KernelType::laplacian;
  ProblemShape asked = shape;
  asked.solver = s.solver;
  return plan_fit(s.storage, tiled, points, asked, s.krylov, limit, ranks);
}

namespace {

// The agreed refusals of a storage the fit cannot honour.
void check_storage(const KpcaSettings& s, const FitPlan& plan, const Comm& comm) {
  std::string error;
  if (plan.storage == MatrixStorage::none && s.kernel.type == kernel::KernelType::precomputed)
    error = "--storage none recomputes the kernel from the samples; a precomputed kernel has "
            "none (use --storage auto)";
  else
    error = storage_solver_error(plan, s.solver);
  agree(comm, error);
}

}  // namespace

KpcaResult fit_kpca(io::MatrixFile& file, const BlacsGrid& grid, const KpcaSettings& asked,
                    PhaseTimer& timer) {
  const Comm& comm = grid.comm();
  check_shape(file, asked, comm);
  KpcaResult result;
  result.n = file.rows();
  result.d = asked.kernel.type == kernel::KernelType::precomputed ? 0 : file.cols();
  result.kernel = asked.kernel.with_default_gamma(result.d);
  const int k = asked.components, nb = asked.block_size;
  const std::int64_t n = result.n;
  // Storage, solver, Krylov settings and memory plan are decided here, once;
  // everything below reads them from `settings`, never from the options.
  const double limit =
      asked.max_memory_per_rank > 0 ? asked.max_memory_per_rank : available_memory_per_rank(comm);
  const FitPlan plan = kpca_fit_plan(asked, shape_of(result, asked, grid), limit, comm.size());
  check_storage(asked, plan, comm);
  KpcaSettings settings = asked;
  settings.solver = plan.solver;
  settings.krylov = plan.krylov;
  result.storage = plan.storage;
  result.storage_note = plan.note;
  result.lower_storage = plan.storage == MatrixStorage::lower_blocks;
  const MemoryCheck memory = check_memory(plan.shape, plan.memory, limit, comm);
  result.estimated_peak_bytes = memory.estimate;
  result.memory_limit_bytes = memory.limit;

  const auto solve_double = [&] {
    // Assembly writes every stored entry.
    DistMatrix kmat = DistMatrix::uninitialized(
        grid, n, n, nb, nb, result.lower_storage ? Storage::lower_blocks : Storage::full);
    kernel::LocalSums sums;
    build_kernel(file, result.kernel, kmat, &timer, true, &sums);
    timer.start("center");
    const bool assembled = result.kernel.type != kernel::KernelType::precomputed;
    CenteringStats stats = assembled ? center_kernel(kmat, sums) : center_kernel(kmat);
    result.col_means = std::move(stats.col_means);
    result.grand_mean = stats.grand_mean;
    SpectralRequest request = kpca_request(settings);
    request.known_frobenius_norm = stats.frobenius_norm;
    request.rebuild = [&](DistMatrix& a) {
      build_kernel(file, result.kernel, a, nullptr, false);
      center_kernel(a);
    };
    return spectral_step(kmat, request, timer);
  };
  SpectralStep step = result.storage == MatrixStorage::none
                          ? solve_matrix_free(file, grid, settings, result, timer)
                      : settings.single_precision ? solve_single(file, grid, settings, result, timer)
                                                  : solve_double();
  record_solve(step, result);
  result.trace = step.trace;
  result.frobenius_norm = step.frobenius_norm;
  result.eigenvalues = step.values;
  for (double v : result.eigenvalues) result.explained_ratio.push_back(v / result.trace);

  // Row-major n x k on rank 0: z = sqrt(lambda) v and a = v / sqrt(lambda).
  result.embedding = row_major_on_root(step.vectors);
  result.coefficients = result.embedding;
  for (std::size_t t = 0; t < result.embedding.size(); ++t) {
    const double scale = std::sqrt(result.eigenvalues[t % k]);
    result.embedding[t] *= scale;
    result.coefficients[t] /= scale;
  }
  timer.stop();
  return result;
}

}  // namespace kembed::spectral
