#include "kembed/app/plan_command.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "kembed/app/options.hpp"
#include "kembed/app/pca_command.hpp"
#include "kembed/app/run_report.hpp"
#include "kembed/approx/landmark_mds.hpp"
#include "kembed/approx/nystrom.hpp"
#include "kembed/core/error.hpp"
#include "kembed/spectral/kpca.hpp"
#include "kembed/spectral/mds.hpp"
#include "kembed/spectral/memory_plan.hpp"
#include "kembed/spectral/pca.hpp"

namespace kembed::app {

// The app layer drives the methods and their kernels.
using namespace kembed::spectral;
using namespace kembed::kernel;

namespace {

// kpca --approx nystrom: O(m^2 + panel) per rank instead of the n x n matrix.
void plan_nystrom(const po::variables_map& vm, const Comm& world, std::int64_t n, std::int64_t d,
                  int k, int ranks) {
  if (vm["method"].as<std::string>() != "kpca" || vm["approx"].as<std::string>() != "nystrom")
    throw Error("--approx: kembed plan kpca --approx nystrom or kembed plan mds --approx landmark");
  if (!vm.count("landmarks")) throw Error("--approx nystrom needs --landmarks M");
  if (d < 1) throw Error("--approx nystrom needs the samples: give --cols D (not a precomputed kernel)");
  const std::int64_t m = vm["landmarks"].as<std::int64_t>();
  if (m < k || m > n)
    throw Error("--landmarks " + std::to_string(m) + " must be between --components " +
                std::to_string(k) + " and n = " + std::to_string(n));
  const std::int64_t panel = vm.count("panel-rows") ? vm["panel-rows"].as<std::int64_t>() : 0;
  const auto selection =
      approx::parse_landmark_selection(vm["landmark-selection"].as<std::string>());
  double total = 0;
  std::string text = "kembed plan kpca --approx nystrom: n = " + std::to_string(n) + ", d = " +
                     std::to_string(d) + ", M = " + std::to_string(m) + ", k = " +
                     std::to_string(k) + ", " + std::to_string(ranks) +
                     " ranks\nestimated memory of the busiest rank:\n";
  for (const auto& [what, bytes] :
       approx::nystrom_memory(n, d, m, k, ranks, panel, selection)) {
    text += "  " + human_bytes(bytes) + "  " + what + "\n";
    total += bytes;
  }
  text += "  total " + human_bytes(total);
  const double available = vm.count("max-memory-per-rank")
                               ? parse_bytes(vm["max-memory-per-rank"].as<std::string>())
                               : available_memory_per_rank(world) * world.size() / ranks;
  text += " of " + human_bytes(available) + " per rank" +
          (total > available ? ": does NOT fit" : ": fits");
  say(world, false, text);
}

// mds --approx landmark: O(M^2 + panel) per rank, no n x n matrix.
void plan_landmark_mds(const po::variables_map& vm, const Comm& world, std::int64_t n,
                       std::int64_t d, int ranks) {
  const std::string approx = vm["approx"].as<std::string>();
  if (approx != "landmark")
    throw Error("unknown --approx '" + approx + "' for mds (expected landmark)");
  if (!vm.count("landmarks")) throw Error("--approx landmark needs --landmarks M");
  const std::int64_t m = vm["landmarks"].as<std::int64_t>();
  const int k = vm["components"].as<int>();
  if (m < k + 1 || m > n)
    throw Error("--landmarks " + std::to_string(m) + " must be at least --components + 1 = " +
                std::to_string(k + 1) + " and at most the number of points (" +
                std::to_string(n) + ")");
  const double bytes = approx::landmark_mds_memory(n, d, m, k, ranks);
  say(world, false,
      "kembed plan mds --approx landmark: n = " + std::to_string(n) + ", d = " +
          std::to_string(d) + (d == 0 ? " (distances to the landmarks)" : "") + ", M = " +
          std::to_string(m) + ", k = " + std::to_string(k) + ", " + std::to_string(ranks) +
          " ranks\nestimated memory of the busiest rank: " + human_bytes(bytes) + " (" +
          std::to_string(static_cast<std::int64_t>(bytes)) +
          " bytes: landmarks M x d, B and its eigenvectors 3 M^2, a panel of " +
          std::to_string(std::min<std::int64_t>(approx::kLandmarkPanelRows, (n + ranks - 1) / ranks)) +
          " rows x (d + 2M), the gathered n x k embedding twice); the n x n matrix is never formed");
}

}  // namespace

po::options_description plan_options() {
  po::options_description d("plan");
  d.add_options()
      ("method", po::value<std::string>(),
       "kpca, pca, mds, isomap or spectral (or the word after 'plan')")
      ("rows", po::value<std::int64_t>(), "samples n")
      ("cols", po::value<std::int64_t>(),
       "features d; leave out for an n x n input (precomputed kernel, distance matrix)")
      ("input,i", po::value<std::string>(),
       "instead of --rows/--cols: the shape of this file (.npy header, .bin with --rows/--cols, "
       "text scanned)")
      ("distances", po::value<std::string>(), "mds: the shape of this distance matrix file")
      ("kernel", po::value<std::string>()->default_value("rbf"),
       "kpca: precomputed means the input is the n x n kernel")
      ("components,k", po::value<int>()->default_value(2), "number of components K")
      ("neighbors", po::value<int>(),
       "isomap: K of the neighbourhood graph (default 5); spectral --affinity knn: K "
       "(default max(n/10, 1))")
      ("affinity", po::value<std::string>()->default_value("rbf"), "spectral: rbf or knn")
      ("solver", po::value<std::string>()->default_value("auto"), "auto, evd, evr, krylov or elpa")
      ("route", po::value<std::string>()->default_value("auto"), "pca: auto, covariance or gram")
      ("variance", po::value<double>()->default_value(0.0), "pca: --variance F (plans for evd)")
      ("approx", po::value<std::string>(), "kpca: nystrom; mds: landmark (the approximate tier)")
      ("precision", po::value<std::string>()->default_value("double"),
       "kpca, mds: double, or single (float32 storage of the n x n matrix, krylov)")
      ("storage", po::value<std::string>()->default_value("auto"),
       "kpca, mds: auto, full or lower (the matrix's blocks on and below the diagonal, krylov)")
      ("landmarks", po::value<std::int64_t>(), "with --approx: the number of landmarks M")
      ("landmark-selection", po::value<std::string>()->default_value("uniform"),
       "kpca --approx nystrom: uniform or kmeans++ (which holds each rank's rows)")
      ("panel-rows", po::value<std::int64_t>(), "kpca --approx nystrom: rows per panel")
      ("ranks", po::value<int>(), "plan for this many ranks (default: the ranks of this run)")
      ("max-memory-per-rank", po::value<std::string>(),
       "memory one rank may use (default: this node's available memory / --ranks)");
  d.add(LayoutOptions::description());
  return d;
}

void run_plan(const po::variables_map& vm, const Comm& world) {
  if (!vm.count("method"))
    throw Error("missing the method: kembed plan kpca|pca|mds|isomap|spectral ...");
  const std::string method = vm["method"].as<std::string>();
  if (method != "kpca" && method != "pca" && method != "mds" && method != "isomap" &&
      method != "spectral")
    throw Error("kembed plan: unknown method '" + method +
                "' (expected kpca, pca, mds, isomap or spectral)");
  const std::string affinity = vm["affinity"].as<std::string>();
  if (method == "spectral" && affinity != "rbf" && affinity != "knn")
    throw Error("--affinity must be rbf or knn, found '" + affinity + "'");
  if (vm.count("neighbors") && method != "isomap" && !(method == "spectral" && affinity == "knn"))
    throw Error("--neighbors applies to isomap and spectral --affinity knn");
  const int ranks = vm.count("ranks") ? vm["ranks"].as<int>() : world.size();
  if (ranks < 1) throw Error("--ranks must be at least 1");
  const LayoutOptions layout(vm);
  if (layout.block_size < 1) throw Error("--block-size must be at least 1");
  if (layout.grid && std::int64_t{layout.grid->nprow} * layout.grid->npcol != ranks)
    throw Error("--grid " + std::to_string(layout.grid->nprow) + "x" +
                std::to_string(layout.grid->npcol) + " does not match " + std::to_string(ranks) +
                " ranks");

  // The shape: from a file's header, or as given.
  std::int64_t n = 0, d = 0;
  const std::string path = vm.count("input")       ? vm["input"].as<std::string>()
                           : vm.count("distances") ? vm["distances"].as<std::string>()
                                                   : std::string();
  io::FileHints hints;
  if (vm.count("rows")) hints.rows = vm["rows"].as<std::int64_t>();
  if (vm.count("cols")) hints.cols = vm["cols"].as<std::int64_t>();
  if (!path.empty()) {
    const auto file = io::open_matrix_file(world, path, hints);
    n = file->rows();
    d = file->cols();
  } else {
    if (hints.rows < 1) throw Error("give --rows N (and --cols D) or --input FILE");
    n = hints.rows;
    d = std::max<std::int64_t>(0, hints.cols);
  }
  if (method == "mds" && vm.count("approx")) {
    plan_landmark_mds(vm, world, n, d, ranks);
    return;
  }
  const bool square = vm.count("distances") || vm["kernel"].as<std::string>() == "precomputed" ||
                      (path.empty() && !vm.count("cols"));
  if (square && method != "pca") {
    if (!path.empty() && n != d)
      throw Error(path + ": an n x n input must be square, found " + std::to_string(n) + " x " +
                  std::to_string(d));
    d = 0;
  }

  // ScaLAPACK indexes with 32-bit integers: no matrix of the run may have
  // more rows or columns, so a larger shape is refused here (as the real run
  // would be) instead of overflowing the plan's arithmetic.
  constexpr std::int64_t kLargest = std::numeric_limits<int>::max();
  if (n > kLargest || d > kLargest)
    throw Error("the shape " + std::to_string(n) + " x " + std::to_string(d) +
                " exceeds ScaLAPACK's 32-bit limit of " + std::to_string(kLargest) +
                " rows or columns");
  const int requested = vm["components"].as<int>();
  if (requested < 1) throw Error("--components must be at least 1");
  // The spectral embedding solves for the trivial eigenvector too.
  const int k = method == "spectral" ? requested + 1 : requested;
  const std::int64_t most = method == "pca" ? std::min(n, d) : n;
  // (pca --variance chooses k itself; pca without --cols is an error below.)
  if (k > most && !(method == "pca" && (d < 1 || vm["variance"].as<double>() > 0)))
    throw Error("--components " + std::to_string(k) + " exceeds " +
                (method == "pca" ? "min(n, d) = " : "the number of points n = ") +
                std::to_string(most));
  if (vm.count("approx")) {
    plan_nystrom(vm, world, n, d, k, ranks);
    return;
  }
  const Solver solver = parse_solver(vm["solver"].as<std::string>());
  const PcaRoute route = parse_pca_route(vm["route"].as<std::string>());
  // The grid the run would take (pca's depends on the data's shape).
  const std::pair<int, int> grid =
      layout.shape(ranks, method == "pca" && d >= 1 ? pca_grid(route, n, d)
                                                    : GridPreference::near_square);
  ProblemShape shape{n, d, k, grid.first, grid.second, layout.block_size, solver};
  const std::string precision = vm["precision"].as<std::string>();
  if (precision != "double" && precision != "single")
    throw Error("--precision expects double or single, got '" + precision + "'");
  shape.single_precision_available = (method == "kpca" || method == "mds") && d >= 1;
  if (precision == "single") {
    if (!shape.single_precision_available)
      throw Error("--precision single applies to kpca and mds of points (--cols D)");
    if (solver != Solver::automatic && solver != Solver::krylov)
      throw Error("--precision single needs --solver krylov (or auto)");
    shape.single_precision = true;
  }
  const std::string storage = vm["storage"].as<std::string>();
  if (storage != "auto" && storage != "full" && storage != "lower")
    throw Error("--storage expects auto, full or lower, got '" + storage + "'");
  const bool storable = (method == "kpca" || method == "mds") && d >= 1;
  if (storage == "lower" &&
      (!storable || (solver != Solver::automatic && solver != Solver::krylov)))
    throw Error("--storage lower applies to kpca and mds of points (--cols D) with --solver "
                "krylov (or auto)");
  if (storable) {
    // As the methods decide; --storage lower (and single precision) make auto krylov.
    const StorageRequest request = storage == "full"    ? StorageRequest::full
                                   : storage == "lower" ? StorageRequest::lower
                                                        : StorageRequest::automatic;
    const Solver used = storage == "lower" || shape.single_precision ? Solver::krylov : solver;
    if (method == "kpca") {
      KpcaSettings settings;
      settings.kernel.type = kernel::Kernel::parse(vm["kernel"].as<std::string>());
      settings.components = k;
      settings.solver = used;
      settings.storage = request;
      shape.lower_storage = kpca_lower_storage(settings, n);
    } else {
      MdsSettings settings;  // points under the default metric, euclidean
      settings.metric = kernel::Metric::euclidean;
      settings.components = k;
      settings.solver = used;
      settings.storage = request;
      shape.lower_storage = mds_lower_storage(settings, n);
    }
    if (storage == "lower") shape.solver = Solver::krylov;
  }
  if (method == "pca") {
    if (d < 1) throw Error("pca needs --cols D (or an --input file)");
    PcaSettings settings;
    settings.components = k;
    settings.variance = vm["variance"].as<double>();
    settings.route = route;
    settings.solver = solver;
    settings.block_size = layout.block_size;
    shape = pca_problem_shape(n, d, settings, grid.first, grid.second);
  }
  const double available = vm.count("max-memory-per-rank")
                               ? parse_bytes(vm["max-memory-per-rank"].as<std::string>())
                               : available_memory_per_rank(world) * world.size() / ranks;
  say(world, false, describe_plan("kembed plan " + method, shape, ranks, available));
  // Isomap's and the knn affinity's graph is held whole on every rank beside
  // the n x n matrix: 2 n K stored directions of target (8 bytes), length (8)
  // and a listed flag (1).
  const bool graph = method == "isomap" || (method == "spectral" && affinity == "knn");
  if (graph) {
    const std::int64_t neighbors =
        vm.count("neighbors")   ? vm["neighbors"].as<int>()
        : method == "isomap" ? 5
                             : std::max<std::int64_t>(n / 10, 1);
    if (neighbors < 1 || neighbors >= n)
      throw Error("--neighbors " + std::to_string(neighbors) +
                  " must be at least 1 and below the number of points (" + std::to_string(n) + ")");
    const double bytes = 2.0 * double(n) * double(neighbors) * 17;
    say(world, false,
        "plus the neighbourhood graph, replicated on every rank: 2 n K x 17 bytes = " +
            human_bytes(bytes) + " (" + std::to_string(static_cast<std::int64_t>(bytes)) +
            " bytes, K = " + std::to_string(neighbors) + "); busiest rank with it: " +
            human_bytes(plan_memory(shape).total() + bytes));
  }
  // A grid with more process rows or columns than the matrix has blocks
  // leaves ranks without work (and without memory use).
  const std::int64_t nb = effective_block_size(shape.block_size, shape.n);
  const std::int64_t blocks = (shape.n - 1) / nb + 1;
  const std::int64_t busy = std::min<std::int64_t>(blocks, grid.first) *
                            std::min<std::int64_t>(blocks, grid.second);
  if (busy < ranks)
    say(world, false,
        "note: with block size " + std::to_string(nb) + " the " + std::to_string(shape.n) +
            " x " + std::to_string(shape.n) + " matrix is " + std::to_string(blocks) + " x " +
            std::to_string(blocks) + " blocks; only " + std::to_string(busy) + " of the " +
            std::to_string(ranks) + " ranks would own part of it");
}

}  // namespace kembed::app
