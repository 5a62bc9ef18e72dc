#pragma once
/// @file Option groups shared by the commands, parsed into validated structs.
/// Each command (src/app/*_command.cpp) assembles the groups it needs; the
/// rest of the program never touches a variables_map.
#include <boost/program_options.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "kembed/io/matrix_file.hpp"
#include "kembed/kernel/kernel.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/spectral/eigensolver.hpp"
#include "kembed/spectral/matrix_storage.hpp"

namespace kembed::app {

namespace po = boost::program_options;

/// A process grid asked for with --grid PxQ.
struct GridShape {
  int nprow = 0, npcol = 0;
  /// Parses "PxQ"; throws Error on anything else.
  static GridShape parse(const std::string& text);
};

/// --input, --rows, --cols (or --generate DATASET --rows N --cols D --seed S
/// instead of --input): where the data come from.
struct InputOptions {
  std::string input;
  io::FileHints hints;     ///< shape of a .bin input, or of the generated data
  std::string generate;    ///< data set of --generate; empty when reading --input
  std::int64_t seed = 0;   ///< --seed of --generate
  static po::options_description description(const char* input_help);
  explicit InputOptions(const po::variables_map& vm, const char* key = "input");
  /// Collective: the matrix of --input, or the one --generate computes in memory.
  std::unique_ptr<io::MatrixFile> open(const Comm& comm) const;
};

/// How per-sample tables (embedding, pre-images) are written.
enum class TableFormat { csv, npy, h5 };
/// Parses --output-format; h5 is refused when built without HDF5.
TableFormat parse_table_format(const std::string& name);
/// The file extension of `format`, with its dot (".csv", ".npy", ".h5").
std::string extension(TableFormat format);

/// --output-dir, --output-format, --quiet, --verbose.
struct OutputOptions {
  std::string output_dir;
  TableFormat table_format = TableFormat::csv;
  bool quiet = false;
  bool verbose = false;
  static po::options_description description();
  explicit OutputOptions(const po::variables_map& vm);
  /// Collective: fails (agreed) before any work if output_dir may not become
  /// this run's result directory, given the paths the run `reads` (see
  /// io::check_output_path).
  void check_writable(const Comm& world, const std::vector<std::string>& reads = {}) const;
};

/// The default grid a command's matrices want when --grid is not given.
enum class GridPreference {
  near_square,  ///< n x n problems: P x Q as square as the rank count allows
  /// A data matrix whose cross-product is the problem (pca, ca): P x 1 when
  /// its columns' product AᵀA is formed, so each rank holds whole rows and
  /// contributes one local product to a reduction; 1 x P for AAᵀ.
  cross_columns,
  cross_rows,
};

/// --block-size, --grid: how matrices are laid out over the ranks.
struct LayoutOptions {
  int block_size = 64;
  std::optional<GridShape> grid;
  static po::options_description description();
  explicit LayoutOptions(const po::variables_map& vm);
  /// The grid shape over `ranks`: --grid when given, else the preferred one.
  /// `kembed plan` and the run share it, so a plan describes the run's grid.
  std::pair<int, int> shape(int ranks, GridPreference preference) const;
  /// Collective: a BLACS grid of shape(world.size(), preference).
  BlacsGrid make_grid(const Comm& world,
                      GridPreference preference = GridPreference::near_square) const;
};

/// --components, --solver (and the layout): how to decompose.
struct SolveOptions {
  int components = 2;
  spectral::Solver solver = spectral::Solver::automatic;
  spectral::KrylovSettings krylov;  ///< --tol, --seed
  double max_memory_per_rank = 0;  ///< --max-memory-per-rank (0: node's available / its ranks)
  bool dry_run = false;            ///< --dry-run: print the memory plan and grid, compute nothing
  LayoutOptions layout;
  /// The solver options and the layout options.
  static po::options_description description();
  explicit SolveOptions(const po::variables_map& vm);
};

/// --precision double|single: how the n x n matrix is stored (kpca, mds).
/// Single precision needs the krylov solver (auto becomes krylov; evd, evr
/// and elpa are refused) and sets --tol to spectral::kSingleDefaultTol unless
/// given, refusing one below spectral::kSingleTolFloor. The methods refuse
/// the inputs they read in double themselves.
struct PrecisionOptions {
  bool single = false;
  static po::options_description description();
  PrecisionOptions(const po::variables_map& vm, SolveOptions& solve);
};

/// --storage auto|full|lower|none: whether kpca and mds hold the whole n x n
/// matrix, only its blocks on and below the diagonal
/// (spectral::lower_storage_applies), or nothing (matrix-free: recomputed
/// from the points in every product). `lower` and `none` need the krylov
/// solver (auto becomes krylov); auto is decided by the fit
/// (spectral::plan_fit).
struct StorageOptions {
  bool full = false, lower = false, none = false;  ///< none of them: auto
  static po::options_description description();
  StorageOptions(const po::variables_map& vm, SolveOptions& solve);
  /// The request the fits take.
  spectral::StorageRequest request() const;
};

/// Throws when --seed is given without --generate to a `command` that has
/// nothing else to seed (transform, preimage).
void refuse_seed_without_generate(const po::variables_map& vm, const std::string& command);

/// Throws when an option of the exact n x n decomposition (--solver, --tol,
/// --grid, --block-size, --storage) is given with `approx` (e.g.
/// "--approx nystrom"), which would not read it.
void refuse_exact_only_options(const po::variables_map& vm, const std::string& approx);

/// Throws when --output-format asks for a binary table from a `method` whose
/// `tables` (e.g. "rows.csv and columns.csv") have labels and are CSV only.
void refuse_table_format(const OutputOptions& output, const std::string& method,
                         const std::string& tables);

/// --kernel, --gamma, --degree, --coef0. A parameter the kernel does not use
/// is refused: --gamma of linear, cosine or precomputed; a --degree other than
/// the default 3 of anything but poly; a --coef0 other than 1 of anything but
/// poly and sigmoid.
struct KernelOptions {
  kernel::Kernel kernel;
  static po::options_description description();
  explicit KernelOptions(const po::variables_map& vm);
};

}  // namespace kembed::app
