#include "kembed/app/plan_command.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kembed/app/ca_command.hpp"
#include "kembed/app/options.hpp"
#include "kembed/app/kpca_command.hpp"
#include "kembed/app/landmark_isomap_command.hpp"
#include "kembed/app/pca_command.hpp"
#include "kembed/app/run_report.hpp"
#include "kembed/approx/landmark_isomap.hpp"
#include "kembed/approx/landmark_mds.hpp"
#include "kembed/approx/nystrom.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/sparse_file_shape.hpp"
#include "kembed/io/sparse_matrix_file.hpp"
#include "kembed/spectral/isomap.hpp"
#include "kembed/spectral/kpca.hpp"
#include "kembed/spectral/laplacian_eigenmaps.hpp"
#include "kembed/spectral/mds.hpp"
#include "kembed/spectral/memory_plan.hpp"
#include "kembed/spectral/pca.hpp"

namespace kembed::app {

// The app layer drives the methods and their kernels.
using namespace kembed::spectral;
using namespace kembed::kernel;

namespace {

// The last line of every plan: "available per rank: X (fits)", or the
// shortfall (how much is needed, and what would fit).
std::string verdict(double available, const std::string& shortfall) {
  return "available per rank: " + human_bytes(available) +
         (shortfall.empty() ? " (fits)" : "\n" + shortfall);
}

// kpca --approx nystrom: O(m^2 + panel) per rank instead of the n x n matrix,
// checked by the run's own code (nystrom_options, check_nystrom_request,
// nystrom_memory) before anything is printed.
void plan_nystrom(const po::variables_map& vm, const Comm& world, std::int64_t n, std::int64_t d,
                  int k, int ranks, double available) {
  if (vm["method"].as<std::string>() != "kpca" || vm["approx"].as<std::string>() != "nystrom")
    throw Error("--approx: kembed plan kpca --approx nystrom or kembed plan mds --approx landmark");
  refuse_exact_only_options(vm, "--approx nystrom");
  approx::NystromSettings settings = nystrom_options(vm);
  settings.components = k;
  settings.kernel.type = kernel::Kernel::parse(vm["kernel"].as<std::string>());
  approx::check_nystrom_request(n, d, settings, "the planned input");
  const std::int64_t m = settings.landmarks;
  std::string text = "kembed plan kpca --approx nystrom: n = " + std::to_string(n) + ", d = " +
                     std::to_string(d) + ", M = " + std::to_string(m) + ", k = " +
                     std::to_string(k) + ", " + std::to_string(ranks) +
                     " ranks\nestimated memory of the busiest rank:\n";
  for (const auto& [what, bytes] :
       approx::nystrom_memory(n, d, m, k, ranks, settings.panel_rows, settings.selection))
    text += "  " + human_bytes(bytes) + "  " + what + "\n";
  const auto bytes_for = [&](int p) {
    return approx::nystrom_memory_total(n, d, m, k, p, settings.panel_rows, settings.selection);
  };
  text += "  total " + human_bytes(bytes_for(ranks)) + "\n" +
          verdict(available, streamed_shortfall(bytes_for, ranks, available));
  say(world, false, text);
}

// mds --approx landmark: O(M^2 + panel) per rank, no n x n matrix; checked by
// the run's own code (check_landmark_request, landmark_mds_memory).
void plan_landmark_mds(const po::variables_map& vm, const Comm& world, std::int64_t n,
                       std::int64_t d, int ranks, double available) {
  const std::string approx = vm["approx"].as<std::string>();
  if (approx != "landmark")
    throw Error("unknown --approx '" + approx + "' for mds (expected landmark)");
  refuse_exact_only_options(vm, "--approx landmark");
  if (!vm.count("landmarks")) throw Error("--approx landmark needs --landmarks M (the number of landmarks)");
  const std::int64_t m = vm["landmarks"].as<std::int64_t>();
  const int k = vm["components"].as<int>();
  if (k < 1) throw Error("--components must be at least 1");
  approx::check_landmark_request(n, m, k);
  const auto bytes_for = [&](int p) { return approx::landmark_mds_memory(n, d, m, k, p); };
  const double bytes = bytes_for(ranks);
  say(world, false,
      "kembed plan mds --approx landmark: n = " + std::to_string(n) + ", d = " +
          std::to_string(d) + (d == 0 ? " (distances to the landmarks)" : "") + ", M = " +
          std::to_string(m) + ", k = " + std::to_string(k) + ", " + std::to_string(ranks) +
          " ranks\nestimated memory of the busiest rank: " + human_bytes(bytes) + " (landmarks M x d, "
          "B and its eigenvectors 3 M^2, a panel of " +
          std::to_string(std::min<std::int64_t>(approx::kLandmarkPanelRows, (n + ranks - 1) / ranks)) +
          " rows x (d + 2M), the gathered n x k embedding twice); the n x n matrix is never formed\n" +
          verdict(available, streamed_shortfall(bytes_for, ranks, available)));
}

// isomap --approx landmark: the graph on every rank (its edges counted as
// n K, the most K-nearest-neighbour lists give) and the geodesics, stored
// when that fits, else recomputed, as the run decides
// (approx::landmark_isomap_memory); checked by the run's own code.
void plan_landmark_isomap(const po::variables_map& vm, const Comm& world, std::int64_t n,
                          std::int64_t d, int ranks, double available) {
  const std::string approx = vm["approx"].as<std::string>();
  if (approx != "landmark")
    throw Error("unknown --approx '" + approx + "' for isomap (expected landmark)");
  refuse_exact_only_options(vm, "--approx landmark");
  if (!vm.count("landmarks"))
    throw Error("--approx landmark needs --landmarks M (the number of landmarks)");
  if (d < 1) throw Error("isomap needs --cols D (or an --input file of points)");
  const std::int64_t m = vm["landmarks"].as<std::int64_t>();
  const int k = vm["components"].as<int>();
  if (k < 1) throw Error("--components must be at least 1");
  IsomapSettings exact;
  exact.graph.neighbors = vm.count("neighbors") ? vm["neighbors"].as<int>() : 5;
  if (exact.graph.neighbors < 1) throw Error("--neighbors must be at least 1");
  exact.components = k;
  const std::string request = isomap_request_error(n, exact, "the planned input");
  if (!request.empty()) throw Error(request);
  approx::check_landmark_request(n, m, k);
  // The run's own plan (landmark_isomap_memory_plan), which its guard checks.
  const LandmarkIsomapPlan plan =
      landmark_isomap_memory_plan(n, d, exact.graph.neighbors, m, k, ranks, available);
  const double stored = plan.stored, recomputed = plan.recomputed;
  say(world, false,
      "kembed plan isomap --approx landmark: n = " + std::to_string(n) + ", d = " +
          std::to_string(d) + ", K = " + std::to_string(exact.graph.neighbors) + ", M = " +
          std::to_string(m) + ", k = " + std::to_string(k) + ", " + std::to_string(ranks) +
          " ranks\nestimated memory of the busiest rank: " + human_bytes(stored) +
          " with the geodesics stored (" + std::to_string(static_cast<std::int64_t>(stored)) +
          " bytes: the rows x M geodesic distances and the exchange's rounds), " +
          human_bytes(recomputed) + " with them recomputed (" +
          std::to_string(static_cast<std::int64_t>(recomputed)) +
          " bytes: twice the shortest-path searches); the run stores them when "
          "that fits. Both count the neighbourhood graph on every rank with n K edges, the most "
          "it can have; the n x n matrix is never formed\n" +
          verdict(available, streamed_shortfall(plan.bytes_for, ranks, available)));
}

// The memory each of `ranks` ranks may use: --max-memory-per-rank, or this
// node's share.
double planned_available(const po::variables_map& vm, const Comm& world, int ranks) {
  return vm.count("max-memory-per-rank")
             ? parse_bytes(vm["max-memory-per-rank"].as<std::string>())
             : available_memory_per_rank(world) * world.size() / ranks;
}

// Collective: whether --input names a sparse matrix file (.h5ad, .npz, .mtx),
// as rank 0 sees it.
bool sparse_input(const po::variables_map& vm, const Comm& world) {
  int sparse = 0;
  if (world.is_root() && vm.count("input"))
    sparse = io::is_sparse_file(vm["input"].as<std::string>()) ? 1 : 0;
  world.broadcast(&sparse, 1);
  return sparse != 0;
}

// pca and ca of sparse rows (.h5ad, .npz, .mtx): the shape and the stored
// entries from --rows, --cols and --nnz (or --density), or from the header
// of a sparse --input (io::read_sparse_shape, nothing of the entries read),
// priced by the fits' own plan (sparse_problem_shape), which their memory
// guard and --dry-run price too.
void plan_sparse(const po::variables_map& vm, const Comm& world, const std::string& method,
                 int ranks, const LayoutOptions& layout, double available) {
  const bool nnz = vm.count("nnz") > 0, density = vm.count("density") > 0;
  if (nnz && density)
    throw Error("--nnz and --density both give the stored entries: give one of them");
  std::int64_t n = 0, d = 0, entries = 0;
  std::string extra;
  if (vm.count("input")) {
    const std::string path = vm["input"].as<std::string>();
    if (nnz || density)
      throw Error(std::string(nnz ? "--nnz" : "--density") + ": the stored entries of --input " +
                  path + " come from its header");
    if (!sparse_input(vm, world))
      throw Error("kembed plan ca --input: " + path +
                  " is not a sparse matrix file (.h5ad, .npz, .mtx); kembed plan ca plans the "
                  "sparse fit only (a dense table's plan: kembed ca --dry-run)");
    if (vm.count("rows") || vm.count("cols"))
      throw Error(std::string(vm.count("rows") ? "--rows" : "--cols") + ": the shape of --input " +
                  path + " comes from its header");
    const io::SparseFileShape file = io::read_sparse_shape(path, "", world);
    n = file.rows;
    d = file.cols;
    entries = file.entries;
    if (file.one_triangle) {
      // Each entry off the diagonal stands for itself and its mirror.
      entries = std::min(2 * entries, n * d);
      extra = "note: " + path + " stores one triangle of a symmetric matrix: its " +
              std::to_string(file.entries) + " entries are counted twice, " +
              std::to_string(entries) + " (the diagonal's count once in the run)\n";
    }
  } else {
    if (!nnz && !density)
      throw Error("kembed plan " + method + " plans the sparse fit: give --rows N --cols D with " +
                  "--nnz Z or --density F, or a sparse --input (.h5ad, .npz, .mtx)");
    const char* option = nnz ? "--nnz" : "--density";
    if (!vm.count("rows") || !vm.count("cols"))
      throw Error(std::string(option) + " needs --rows N and --cols D");
    n = vm["rows"].as<std::int64_t>();
    d = vm["cols"].as<std::int64_t>();
    if (n < 1 || d < 1)
      throw Error("--rows and --cols must be at least 1, found " + std::to_string(n) + " x " +
                  std::to_string(d));
    if (n > (std::int64_t{1} << 62) || d > std::numeric_limits<std::int32_t>::max())
      throw Error("the shape " + std::to_string(n) + " x " + std::to_string(d) +
                  " exceeds what the sparse readers take (2^62 rows, 2^31 - 1 columns)");
    if (nnz) {
      entries = vm["nnz"].as<std::int64_t>();
      if (entries < 0) throw Error("--nnz must be at least 0, found " + std::to_string(entries));
      // entries > n d without forming n d (which may overflow).
      if (entries > 0 && (entries - 1) / d >= n)
        throw Error("--nnz " + std::to_string(entries) + " exceeds rows x cols = " +
                    std::to_string(n) + " x " + std::to_string(d));
    } else {
      const double f = vm["density"].as<double>();
      if (!(f > 0 && f <= 1))
        throw Error("--density must be above 0 and at most 1, found " + std::to_string(f));
      const long double stored = std::ceil(static_cast<long double>(f) * n * d);
      if (stored > static_cast<long double>(std::int64_t{1} << 62))
        throw Error("--density " + std::to_string(f) + " of " + std::to_string(n) + " x " +
                    std::to_string(d) + " is more than 2^62 stored entries");
      entries = static_cast<std::int64_t>(stored);
    }
  }
  const int k = vm["components"].as<int>();
  const std::int64_t most = method == "ca" ? std::min(n, d) - 1 : std::min(n, d);
  if (k < 1 || k > most)
    throw Error("--components " + std::to_string(k) + " must be between 1 and " +
                (method == "ca" ? "min(rows, cols) - 1 = " : "min(n, d) = ") +
                std::to_string(most) + " for the " + std::to_string(n) + " x " +
                std::to_string(d) + " sparse " + (method == "ca" ? "table" : "data"));
  // The fits' own refusals of sparse input.
  const Solver solver = parse_solver(vm["solver"].as<std::string>());
  if (solver != Solver::automatic && solver != Solver::krylov)
    throw Error("sparse input needs --solver krylov (or auto): --solver " + solver_name(solver) +
                " works on a stored matrix");
  GridPreference preference = ca_grid(CaRoute::automatic, n, d);
  if (method == "pca") {
    const PcaRoute route = parse_pca_route(vm["route"].as<std::string>());
    if (route == PcaRoute::gram)
      throw Error("--route gram: sparse input runs on the d x d covariance applied as an operator "
                  "(--route auto or covariance)");
    if (vm["variance"].as<double>() > 0)
      throw Error("--variance needs the whole spectrum (--solver evd), which sparse input does "
                  "not compute: give --components");
    preference = pca_grid(route, n, d);
  }
  const std::pair<int, int> grid = layout.shape(ranks, preference);
  const ProblemShape shape =
      sparse_problem_shape(n, d, entries, k, grid.first, grid.second, layout.block_size,
                           method == "pca" ? SparseMethod::pca : SparseMethod::ca);
  say(world, false, describe_plan("kembed plan " + method, shape, ranks, available, extra));
}

// Options that only some methods read: given to another, they would be
// accepted and ignored.
void refuse_foreign_options(const po::variables_map& vm, const std::string& method) {
  const auto given = [&](const char* key) { return vm.count(key) && !vm[key].defaulted(); };
  const auto only = [&](const char* key, bool applies, const char* where) {
    if (given(key) && !applies)
      throw Error("--" + std::string(key) + " applies to " + where + ", not to kembed plan " +
                  method);
  };
  const bool approx = vm.count("approx") > 0;
  only("kernel", method == "kpca", "kpca");
  only("route", method == "pca", "pca");
  only("variance", method == "pca", "pca");
  only("nnz", method == "pca" || method == "ca", "pca and ca (their sparse fits)");
  only("density", method == "pca" || method == "ca", "pca and ca (their sparse fits)");
  only("affinity", method == "spectral", "spectral");
  only("distances", method == "mds", "mds");
  only("approx", method == "kpca" || method == "mds" || method == "isomap",
       "kpca (nystrom), mds and isomap (landmark)");
  only("precision", (method == "kpca" || method == "mds") && !approx, "exact kpca and mds");
  only("landmarks", approx, "--approx nystrom (kpca) and --approx landmark (mds, isomap)");
  only("landmark-selection", approx && method == "kpca", "kpca --approx nystrom");
  only("panel-rows", approx && method == "kpca", "kpca --approx nystrom");
}

}  // namespace

po::options_description plan_options() {
  po::options_description d("plan");
  d.add_options()
      ("method", po::value<std::string>(),
       "kpca, pca, ca, mds, isomap or spectral (or the word after 'plan')")
      ("rows", po::value<std::int64_t>(), "samples n")
      ("cols", po::value<std::int64_t>(),
       "features d; leave out for an n x n input (precomputed kernel, distance matrix)")
      ("input,i", po::value<std::string>(),
       "instead of --rows/--cols: the shape of this file (.npy header, .bin with --rows/--cols, "
       "text scanned; pca, ca: the header of a sparse .h5ad, .npz or .mtx and its stored entries)")
      ("nnz", po::value<std::int64_t>(),
       "pca, ca: plan the sparse fit of --rows x --cols data storing this many entries")
      ("density", po::value<double>(),
       "pca, ca: instead of --nnz, the share of stored entries (0 < F <= 1)")
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
      ("approx", po::value<std::string>(), "kpca: nystrom; mds, isomap: landmark (the approximate tier)")
      ("precision", po::value<std::string>()->default_value("double"),
       "kpca, mds: double, or single (float32 storage of the n x n matrix, krylov)")
      ("storage", po::value<std::string>()->default_value("auto"),
       "kpca, mds: auto, full, lower (the matrix's blocks on and below the diagonal, krylov) or "
       "none (matrix-free: recomputed from the points in every product, krylov)")
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
    throw Error("missing the method: kembed plan kpca|pca|ca|mds|isomap|spectral ...");
  const std::string method = vm["method"].as<std::string>();
  if (method != "kpca" && method != "pca" && method != "ca" && method != "mds" &&
      method != "isomap" && method != "spectral")
    throw Error("kembed plan: unknown method '" + method +
                "' (expected kpca, pca, ca, mds, isomap or spectral)");
  const std::string affinity = vm["affinity"].as<std::string>();
  if (method == "spectral" && affinity != "rbf" && affinity != "knn")
    throw Error("--affinity must be rbf or knn, found '" + affinity + "'");
  if (vm.count("neighbors") && method != "isomap" && !(method == "spectral" && affinity == "knn"))
    throw Error("--neighbors applies to isomap and spectral --affinity knn");
  refuse_foreign_options(vm, method);
  const int ranks = vm.count("ranks") ? vm["ranks"].as<int>() : world.size();
  if (ranks < 1) throw Error("--ranks must be at least 1");
  const LayoutOptions layout(vm);
  if (layout.block_size < 1) throw Error("--block-size must be at least 1");
  if (layout.grid && std::int64_t{layout.grid->nprow} * layout.grid->npcol != ranks)
    throw Error("--grid " + std::to_string(layout.grid->nprow) + "x" +
                std::to_string(layout.grid->npcol) + " does not match " + std::to_string(ranks) +
                " ranks");

  // pca and ca of sparse rows: --nnz, --density or a sparse file's header.
  if (method == "ca" || vm.count("nnz") || vm.count("density") ||
      (method == "pca" && sparse_input(vm, world))) {
    plan_sparse(vm, world, method, ranks, layout, planned_available(vm, world, ranks));
    return;
  }

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
  // The memory each rank may use: given, or this node's share for `ranks`.
  const double available = planned_available(vm, world, ranks);
  if (method == "mds" && vm.count("approx")) {
    plan_landmark_mds(vm, world, n, d, ranks, available);
    return;
  }
  if (method == "isomap" && vm.count("approx")) {
    plan_landmark_isomap(vm, world, n, d, ranks, available);
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

  const int requested = vm["components"].as<int>();
  if (requested < 1) throw Error("--components must be at least 1");
  // The spectral embedding solves for the trivial eigenvector too.
  const int k = method == "spectral" ? requested + 1 : requested;
  const std::int64_t most = method == "pca" ? std::min(n, d) : n;
  // (pca --variance chooses k itself; pca without --cols is an error below;
  // isomap and spectral check with their fits' own code below.)
  const bool graph_method = method == "isomap" || method == "spectral";
  if (!graph_method && k > most &&
      !(method == "pca" && (d < 1 || vm["variance"].as<double>() > 0)))
    throw Error("--components " + std::to_string(k) + " exceeds " +
                (method == "pca" ? "min(n, d) = " : "the number of points n = ") +
                std::to_string(most));
  if (vm.count("approx")) {
    plan_nystrom(vm, world, n, d, k, ranks, available);
    return;
  }
  // ScaLAPACK indexes with 32-bit integers: no matrix of the run may have
  // more rows or columns, so a larger shape is refused here (as the real run
  // would be) instead of overflowing the plan's arithmetic.
  constexpr std::int64_t kLargest = std::numeric_limits<int>::max();
  if (n > kLargest || d > kLargest)
    throw Error("the shape " + std::to_string(n) + " x " + std::to_string(d) +
                " exceeds ScaLAPACK's 32-bit limit of " + std::to_string(kLargest) +
                " rows or columns");
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
  if (storage != "auto" && storage != "full" && storage != "lower" && storage != "none")
    throw Error("--storage expects auto, full, lower or none, got '" + storage + "'");
  const bool storable = (method == "kpca" || method == "mds") && d >= 1;
  if ((storage == "lower" || storage == "none") &&
      (!storable || (solver != Solver::automatic && solver != Solver::krylov)))
    throw Error("--storage " + storage +
                " applies to kpca and mds of points (--cols D) with --solver krylov (or auto)");
  if (storable) {
    // As the methods decide; --storage lower (and single precision) make auto krylov.
    const StorageRequest request = storage == "full"    ? StorageRequest::full
                                   : storage == "lower" ? StorageRequest::lower
                                   : storage == "none"  ? StorageRequest::none
                                                        : StorageRequest::automatic;
    const Solver used = storage == "lower" || storage == "none" || shape.single_precision
                            ? Solver::krylov
                            : solver;
    if (method == "kpca") {
      KpcaSettings settings;
      settings.kernel.type = kernel::Kernel::parse(vm["kernel"].as<std::string>());
      settings.components = k;
      settings.solver = used;
      settings.storage = request;
      shape = shown_shape(kpca_fit_plan(settings, shape, 0, ranks), used);
    } else {
      MdsSettings settings;  // points under the default metric, euclidean
      settings.metric = kernel::Metric::euclidean;
      settings.components = k;
      settings.solver = used;
      settings.storage = request;
      shape = shown_shape(mds_fit_plan(settings, shape, 0, ranks), used);
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
  // Isomap's graph is held whole on every rank beside the n x n matrix; its
  // shape is the fit's own (isomap_problem_shape), and the request is checked
  // by the fit's own code before anything is printed.
  std::string extra;
  if (method == "isomap") {
    IsomapSettings settings;
    settings.components = k;
    settings.solver = solver;
    settings.block_size = layout.block_size;
    settings.graph.neighbors = vm.count("neighbors") ? vm["neighbors"].as<int>() : 5;
    if (settings.graph.neighbors < 1)
      throw Error("--neighbors must be at least 1, found " +
                  std::to_string(settings.graph.neighbors));
    const std::string error = isomap_request_error(n, settings, "the planned input");
    if (!error.empty()) throw Error(error);
    if (d < 1) throw Error("isomap needs --cols D (or an --input file of points)");
    shape = isomap_problem_shape(n, d, grid.first, grid.second, settings);
  } else if (method == "spectral") {
    LaplacianEigenmapsSettings settings;
    settings.components = requested;
    settings.affinity = affinity == "knn" ? Affinity::knn : Affinity::rbf;
    if (vm.count("neighbors")) settings.neighbors = vm["neighbors"].as<int>();
    settings.solver = solver;
    settings.block_size = layout.block_size;
    const std::string error =
        spectral_embedding_request_error(n, settings, "the planned input");
    if (!error.empty()) throw Error(error);
    // The fit's own shape: knn the sparse graph's plan (no n x n matrix, no
    // replicated graph), rbf the dense matrix and the degree vectors.
    shape = spectral_problem_shape(n, d, grid.first, grid.second, settings);
  }
  // A grid with more process rows or columns than the matrix has blocks
  // leaves ranks without work (and without memory use).
  const std::int64_t nb = effective_block_size(shape.block_size, shape.n);
  const std::int64_t blocks = (shape.n - 1) / nb + 1;
  const std::int64_t busy = std::min<std::int64_t>(blocks, grid.first) *
                            std::min<std::int64_t>(blocks, grid.second);
  if (busy < ranks && shape.graph_neighbors == 0)
    extra += "note: with block size " + std::to_string(nb) + " the " + std::to_string(shape.n) +
             " x " + std::to_string(shape.n) + " matrix is " + std::to_string(blocks) + " x " +
             std::to_string(blocks) + " blocks; only " + std::to_string(busy) + " of the " +
             std::to_string(ranks) + " ranks would own part of it\n";
  if (storable) extra += describe_fit_time(shape);
  say(world, false, describe_plan("kembed plan " + method, shape, ranks, available, extra));
}

}  // namespace kembed::app
