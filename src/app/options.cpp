#include "kembed/app/options.hpp"

#include <cmath>
#include <regex>
#include <tuple>

#include "kembed/core/error.hpp"
#include "kembed/io/format_double.hpp"
#include "kembed/io/hdf5.hpp"
#include "kembed/io/output_dir.hpp"
#include "kembed/spectral/memory_plan.hpp"
#include "kembed/io/synthetic.hpp"

namespace kembed::app {

// The app layer drives the methods and their kernels.
using namespace kembed::spectral;
using namespace kembed::kernel;

GridShape GridShape::parse(const std::string& text) {
  static const std::regex pattern(R"(\s*([0-9]{1,6})\s*[xX]\s*([0-9]{1,6})\s*)");
  std::smatch m;
  if (!std::regex_match(text, m, pattern))
    throw Error("--grid expects PxQ (for example 2x2), got '" + text + "'");
  GridShape g{std::stoi(m[1]), std::stoi(m[2])};
  if (g.nprow < 1 || g.npcol < 1) throw Error("--grid " + text + ": both sides must be >= 1");
  return g;
}

namespace {
template <class T>
T get(const po::variables_map& vm, const char* key) {
  return vm[key].as<T>();
}
}  // namespace

po::options_description InputOptions::description(const char* input_help) {
  po::options_description d("input");
  d.add_options()
      ("input,i", po::value<std::string>(), input_help)
      ("rows", po::value<std::int64_t>(), "number of rows of a .bin input or of --generate")
      ("cols", po::value<std::int64_t>(), "number of columns of a .bin input or of --generate")
      ("dataset", po::value<std::string>(), "HDF5 input: the dataset's path in the file, e.g. /X "
       "(also --input FILE.h5:/X; default: the file's only dataset)")
      ("generate", po::value<std::string>(), "instead of --input: generate blobs, circles, moons, "
       "swissroll or gaussian (--rows N [--cols D] [--seed S]) in memory; see kembed generate")
      ("seed", po::value<std::int64_t>()->default_value(0), "random seed of --generate and of the krylov start block")
      ("header", po::value<std::string>()->default_value("auto"), "text input: is the first line a header? "
       "auto (yes when a cell is not a number, or for pandas' labels 0,1,...), yes or no")
      ("index-col", po::value<int>()->default_value(0), "text input: number of leading columns that are "
       "row names, not data (0: one when the header's first cell is empty, as pandas and R write)")
      ("id-column", po::value<std::string>(), "text input: the column (header name or 1-based number) "
       "that holds row ids, not data");
  return d;
}

InputOptions::InputOptions(const po::variables_map& vm, const char* key) {
  if (vm.count("generate")) {
    if (vm.count(key)) throw Error(std::string("give either --") + key + " or --generate, not both");
    generate = get<std::string>(vm, "generate");
    io::parse_dataset(generate);  // throws on an unknown name
    if (!vm.count("rows")) throw Error("--generate needs --rows");
    if (vm.count("seed")) seed = get<std::int64_t>(vm, "seed");
    if (seed < 0) throw Error("--seed must be at least 0");
  } else {
    if (!vm.count(key)) throw Error(std::string("missing --") + key + " (or --generate DATASET --rows N)");
    // FILE.h5:/DATASET: the run reads FILE (the output checks must know it).
    std::tie(input, hints.dataset) = io::split_dataset(get<std::string>(vm, key));
  }
  if (vm.count("dataset")) {
    if (!generate.empty()) throw Error("--dataset applies to an HDF5 --" + std::string(key) + ", not to --generate");
    const std::string dataset = get<std::string>(vm, "dataset");
    if (dataset.empty()) throw Error("--dataset needs the path of a dataset, e.g. /X");
    if (!hints.dataset.empty() && hints.dataset != dataset)
      throw Error("--" + std::string(key) + " names dataset " + hints.dataset + ", but --dataset says " + dataset);
    hints.dataset = dataset;
  }
  if (vm.count("rows")) hints.rows = get<std::int64_t>(vm, "rows");
  if (vm.count("cols")) hints.cols = get<std::int64_t>(vm, "cols");
  if (vm.count("rows") && hints.rows < 1) throw Error("--rows must be at least 1");
  if (vm.count("cols") && hints.cols < 1) throw Error("--cols must be at least 1");

  // Text-file options; open_matrix_file() refuses them for .npy and .bin.
  const bool text_given = (vm.count("header") && !vm["header"].defaulted()) ||
                          (vm.count("index-col") && !vm["index-col"].defaulted()) || vm.count("id-column");
  if (!generate.empty() && text_given)
    throw Error("--header, --index-col and --id-column apply to a text --" + std::string(key) +
                ", not to --generate");
  if (vm.count("header")) {
    const std::string header = get<std::string>(vm, "header");
    if (header == "auto") hints.text.header = io::TextOptions::Header::automatic;
    else if (header == "yes") hints.text.header = io::TextOptions::Header::yes;
    else if (header == "no") hints.text.header = io::TextOptions::Header::no;
    else throw Error("--header expects auto, yes or no, got '" + header + "'");
  }
  if (vm.count("index-col")) hints.text.index_cols = get<int>(vm, "index-col");
  if (hints.text.index_cols < 0) throw Error("--index-col must be at least 0");
  if (vm.count("id-column")) {
    hints.text.id_column = get<std::string>(vm, "id-column");
    if (hints.text.id_column.empty()) throw Error("--id-column needs a column name or number");
  }
}

std::unique_ptr<io::MatrixFile> InputOptions::open(const Comm& comm) const {
  if (generate.empty()) return io::open_matrix_file(comm, input, hints);
  const io::Dataset dataset = io::parse_dataset(generate);
  const std::int64_t cols = hints.cols > 0 ? hints.cols : io::default_cols(dataset);
  return io::synthetic_matrix(comm, {dataset, hints.rows, cols, static_cast<std::uint64_t>(seed)});
}

po::options_description OutputOptions::description() {
  po::options_description d("output");
  d.add_options()
      ("output-dir,o", po::value<std::string>(), "result directory: new, empty, or an earlier "
       "kembed result (replaced atomically); anything else is refused")
      ("output-format", po::value<std::string>()->default_value("csv"), "format of the per-sample "
       "tables (embedding, pre-images): csv, npy (n x k float64, written with MPI-IO) or h5 (dataset "
       "/embedding or /preimages, parallel HDF5)")
      ("quiet,q", po::bool_switch(), "print nothing on success, no progress lines")
      ("verbose,v", po::bool_switch(), "more progress: per-phase times of every rank, solver steps");
  return d;
}

OutputOptions::OutputOptions(const po::variables_map& vm) {
  if (!vm.count("output-dir")) throw Error("missing --output-dir");
  output_dir = get<std::string>(vm, "output-dir");
  if (vm.count("output-format")) table_format = parse_table_format(get<std::string>(vm, "output-format"));
  quiet = get<bool>(vm, "quiet");
  verbose = get<bool>(vm, "verbose");
  if (quiet && verbose) throw Error("give either --quiet or --verbose, not both");
}

TableFormat parse_table_format(const std::string& name) {
  if (name == "csv") return TableFormat::csv;
  if (name == "npy") return TableFormat::npy;
  if (name == "h5") {
    if (io::hdf5_version().empty())
      throw Error("--output-format h5: this kembed was built without HDF5 (see kembed --version); use npy");
    return TableFormat::h5;
  }
  throw Error("--output-format expects csv, npy or h5, got '" + name + "'");
}

std::string extension(TableFormat format) {
  switch (format) {
    case TableFormat::npy:
      return ".npy";
    case TableFormat::h5:
      return ".h5";
    case TableFormat::csv:
      break;
  }
  return ".csv";
}

void OutputOptions::check_writable(const Comm& world, const std::vector<std::string>& reads) const {
  collectively(world, [&] {
    if (world.is_root()) io::check_output_path(output_dir, reads);
  });
}

po::options_description LayoutOptions::description() {
  po::options_description d("layout");
  d.add_options()
      ("block-size", po::value<int>()->default_value(64), "ScaLAPACK block size NB")
      ("grid", po::value<std::string>(), "process grid PxQ (default: near-square; pca and ca: P x 1 for tall data, 1 x P for wide)");
  return d;
}

LayoutOptions::LayoutOptions(const po::variables_map& vm) {
  block_size = get<int>(vm, "block-size");
  if (block_size < 1) throw Error("--block-size must be at least 1");
  if (vm.count("grid")) grid = GridShape::parse(get<std::string>(vm, "grid"));
}

po::options_description SolveOptions::description() {
  po::options_description d("decomposition");
  d.add_options()
      ("components,k", po::value<int>()->default_value(2), "number of components K")
      ("solver", po::value<std::string>()->default_value("auto"),
       "eigensolver: auto (krylov when its basis is at most n/2, else evd), evd (pdsyevd, all "
       "eigenpairs), evr (pdsyevr, top K only), krylov (block Krylov, top K only) or elpa "
       "(ELPA 2-stage, top K only, if built)")
      ("tol", po::value<double>()->default_value(1e-12),
       "krylov: relative residual ||Kv - lambda v|| / ||K|| every returned pair must reach")
      ("max-memory-per-rank", po::value<std::string>(),
       "memory one rank may use, e.g. 4G (default: the node's available memory / its ranks)")
      ("dry-run", po::bool_switch(), "print the memory estimate per rank and the grid; compute nothing");
  d.add(LayoutOptions::description());
  return d;
}

SolveOptions::SolveOptions(const po::variables_map& vm) : layout(vm) {
  components = get<int>(vm, "components");
  if (components < 1) throw Error("--components must be at least 1");
  solver = parse_solver(get<std::string>(vm, "solver"));
  krylov.tol = get<double>(vm, "tol");
  if (!(krylov.tol > 0 && krylov.tol < 1)) throw Error("--tol must be in (0, 1)");
  // --tol is the krylov solver's stopping test; the dense solvers never read it.
  if (!vm["tol"].defaulted() && solver != Solver::automatic && solver != Solver::krylov)
    throw Error("--tol applies to the krylov solver; --solver " + solver_name(solver) +
                " computes its eigenpairs to working precision (leave out --tol, or use "
                "--solver krylov)");
  if (vm.count("max-memory-per-rank"))
    max_memory_per_rank = parse_bytes(get<std::string>(vm, "max-memory-per-rank"));
  dry_run = get<bool>(vm, "dry-run");
  // --seed belongs to the input options (it also seeds --generate).
  // One rule for every command: generate and --generate check the same.
  if (vm.count("seed")) {
    const std::int64_t seed = get<std::int64_t>(vm, "seed");
    if (seed < 0) throw Error("--seed must be at least 0");
    krylov.seed = static_cast<std::uint64_t>(seed);
  }
}

std::pair<int, int> LayoutOptions::shape(int ranks, GridPreference preference) const {
  if (grid) return {grid->nprow, grid->npcol};
  switch (preference) {
    case GridPreference::cross_columns:
      return {ranks, 1};
    case GridPreference::cross_rows:
      return {1, ranks};
    case GridPreference::near_square:
      break;
  }
  return BlacsGrid::near_square(ranks);
}

BlacsGrid LayoutOptions::make_grid(const Comm& world, GridPreference preference) const {
  const auto [nprow, npcol] = shape(world.size(), preference);
  return BlacsGrid(world, nprow, npcol);
}

po::options_description PrecisionOptions::description() {
  po::options_description d("precision");
  d.add_options()("precision", po::value<std::string>()->default_value("double"),
                  "storage of the n x n matrix: double, or single (float32: half the memory and "
                  "bytes per product; krylov solver only, default --tol 1e-6)");
  return d;
}

PrecisionOptions::PrecisionOptions(const po::variables_map& vm, SolveOptions& solve) {
  const std::string precision = get<std::string>(vm, "precision");
  if (precision != "double" && precision != "single")
    throw Error("--precision expects double or single, got '" + precision + "'");
  single = precision == "single";
  if (!single) return;
  if (solve.solver != spectral::Solver::automatic && solve.solver != spectral::Solver::krylov)
    throw Error("--precision single needs --solver krylov (or auto): --solver " +
                spectral::solver_name(solve.solver) + " works on a double-precision matrix");
  solve.solver = spectral::Solver::krylov;
  if (vm["tol"].defaulted()) {
    solve.krylov.tol = spectral::kSingleDefaultTol;
  } else if (solve.krylov.tol < spectral::kSingleTolFloor) {
    throw Error("--tol " + io::format_double(solve.krylov.tol) +
                " is below what single-precision storage can reach; use --tol " +
                io::format_double(spectral::kSingleTolFloor) + " or more, or --precision double");
  }
}

po::options_description StorageOptions::description() {
  po::options_description d("storage");
  d.add_options()("storage", po::value<std::string>()->default_value("auto"),
                  "the n x n matrix held whole (full), only its blocks on and below the "
                  "diagonal (lower: half the memory and assembly; krylov solver), or not at all "
                  "(none: recomputed from the points in every product; krylov solver); auto: "
                  "lower where it applies, none where nothing stored fits the memory");
  return d;
}

StorageOptions::StorageOptions(const po::variables_map& vm, SolveOptions& solve) {
  const std::string storage = get<std::string>(vm, "storage");
  if (storage != "auto" && storage != "full" && storage != "lower" && storage != "none")
    throw Error("--storage expects auto, full, lower or none, got '" + storage + "'");
  full = storage == "full";
  lower = storage == "lower";
  none = storage == "none";
  if (!lower && !none) return;
  if (solve.solver != spectral::Solver::automatic && solve.solver != spectral::Solver::krylov)
    throw Error("--storage " + storage + " needs --solver krylov (or auto): --solver " +
                spectral::solver_name(solve.solver) +
                (none ? " works on a stored matrix" : " reads the whole matrix"));
  solve.solver = spectral::Solver::krylov;
}

spectral::StorageRequest StorageOptions::request() const {
  using spectral::StorageRequest;
  return full ? StorageRequest::full
              : lower ? StorageRequest::lower
                      : none ? StorageRequest::none : StorageRequest::automatic;
}

po::options_description KernelOptions::description() {
  po::options_description d("kernel");
  d.add_options()
      ("kernel", po::value<std::string>()->default_value("rbf"),
       "linear, poly, rbf, laplacian, sigmoid, cosine or precomputed")
      ("gamma", po::value<double>(), "kernel coefficient (default 1/d)")
      ("degree", po::value<int>()->default_value(3), "degree of the poly kernel")
      ("coef0", po::value<double>()->default_value(1.0), "constant term of poly and sigmoid");
  return d;
}

KernelOptions::KernelOptions(const po::variables_map& vm) {
  kernel.type = Kernel::parse(get<std::string>(vm, "kernel"));
  if (vm.count("gamma")) {
    kernel.gamma = get<double>(vm, "gamma");
    if (!(kernel.gamma > 0) || !std::isfinite(kernel.gamma))
      throw Error("--gamma must be positive and finite");
  }
  kernel.degree = get<int>(vm, "degree");
  if (kernel.degree < 1) throw Error("--degree must be at least 1");
  kernel.coef0 = get<double>(vm, "coef0");
  if (!std::isfinite(kernel.coef0)) throw Error("--coef0 must be finite");
  // A parameter the kernel does not read would be silently ignored. --degree
  // and --coef0 at their defaults change nothing (the Python estimators pass
  // them with every kernel, as scikit-learn's KernelPCA takes them).
  const std::string name = get<std::string>(vm, "kernel");
  if (vm.count("gamma") && !kernel.uses_gamma())
    throw Error("--gamma applies to the rbf, laplacian, poly and sigmoid kernels, not to --kernel " +
                name);
  if (kernel.degree != 3 && kernel.type != KernelType::poly)
    throw Error("--degree applies to the poly kernel, not to --kernel " + name);
  if (kernel.coef0 != 1.0 && kernel.type != KernelType::poly &&
      kernel.type != KernelType::sigmoid)
    throw Error("--coef0 applies to the poly and sigmoid kernels, not to --kernel " + name);
}

void refuse_seed_without_generate(const po::variables_map& vm, const std::string& command) {
  if (vm.count("seed") && !vm["seed"].defaulted() && !vm.count("generate"))
    throw Error("--seed seeds --generate, and kembed " + command +
                " has nothing else to seed (leave it out)");
}

void refuse_exact_only_options(const po::variables_map& vm, const std::string& approx) {
  // Options of the n x n decomposition that the approximate tier does not
  // read: each would be accepted and do nothing.
  const auto given = [&](const char* key) {
    if (!vm.count(key) || vm[key].defaulted()) return false;
    // --solver auto and --storage auto ask for nothing.
    const auto* text = boost::any_cast<std::string>(&vm[key].value());
    return !(text && *text == "auto");
  };
  const std::string why = " applies to the exact n x n decomposition; " + approx +
                          " solves a landmarks x landmarks problem with LAPACK on one rank "
                          "(leave it out)";
  for (const char* key : {"solver", "tol", "grid", "block-size"})
    if (given(key)) throw Error("--" + std::string(key) + why);
  if (given("storage")) throw Error("--storage" + why);
}

void refuse_table_format(const OutputOptions& output, const std::string& method,
                         const std::string& tables) {
  if (output.table_format == TableFormat::csv) return;
  throw Error("--output-format " + extension(output.table_format).substr(1) + ": " + method +
              " writes " + tables + " as labelled CSV only (leave out --output-format)");
}

}  // namespace kembed::app
