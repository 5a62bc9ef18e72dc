#pragma once
/// @file The skeleton every command that writes a result directory shares:
/// options checked -> output path checked -> input opened -> grid -> dry run
/// or work -> staged files -> run.json -> atomic commit -> one-line summary.
/// A command supplies its options (a Job) and its work (a function of Run).
#include <boost/program_options.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kembed/app/options.hpp"
#include "kembed/app/run_report.hpp"
#include "kembed/core/error.hpp"
#include "kembed/core/phase_timer.hpp"
#include "kembed/io/text_sink.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/io/output_dir.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/linalg/dist_matrix.hpp"

namespace kembed::app {

/// How a solver run went, in the words every method's run.json uses.
struct SolverOutcome {
  std::string used;   ///< solver that produced the result
  std::string note;   ///< why it differs from the one asked for (empty: it does not)
  int cycles = 0;     ///< krylov restart cycles
  int products = 0;   ///< krylov block products
  double memory_estimate = 0;  ///< bytes per rank, from the memory plan
  double memory_limit = 0;     ///< bytes per rank the guard allowed
};

struct Job;

/// A running command between opening its input and committing its result.
class Run {
 public:
  Run(const Comm& world, const BlacsGrid& grid, int block_size, PhaseTimer& timer,
      io::MatrixFile& input, const OutputOptions& output, std::vector<std::string> reads);

  const Comm& world() const { return world_; }
  const BlacsGrid& grid() const { return grid_; }
  int block_size() const { return block_size_; }
  /// The block size the decomposition uses: --block-size, but never more
  /// than the `order` of the matrix it lays out (as the memory plan assumes);
  /// run.json reports this one.
  int use_block_size_for(std::int64_t order);
  PhaseTimer& timer() { return timer_; }
  io::MatrixFile& input() { return input_; }
  const OutputOptions& output() const { return output_; }

  /// Collective: writes a file into the staging directory (created on first
  /// use); `contents` runs on rank 0 only.
  void write(const std::string& name, const std::function<std::string()>& contents);
  /// Collective: the same with the contents handed to the file in pieces
  /// (large tables are never held as one string); `produce` runs on rank 0.
  void write_streamed(const std::string& name,
                      const std::function<void(const io::TextSink&)>& produce);
  /// Collective: a table of one row per input row (row-major `values` on
  /// rank 0) in --output-format: `name` as CSV led by the input's row ids
  /// when it has them (--id-column); or its stem + ".npy" (n x k float64) or
  /// + ".h5" (dataset "/stem"), written through MPI-IO, with the ids, if any,
  /// in stem + "_ids.csv".
  void write_rows(const std::string& name, const std::vector<std::string>& headers,
                  const std::vector<double>& values);
  /// Collective: the same from a distributed table; .npy and .h5 are written
  /// by all ranks, each its own consecutive rows (no rank holds the table),
  /// CSV from rank 0 after a gather.
  void write_rows(const std::string& name, const std::vector<std::string>& headers,
                  const DistMatrix& table);
  /// Collective: the path of `name` inside the staging directory, on every rank.
  std::string staged_path(const std::string& name);
  /// Collective: runs `body` on rank 0 and agrees on its errors.
  template <class F>
  void on_root(F&& body) {
    collectively(world_, [&] {
      if (world_.is_root()) body();
    });
  }

  /// The krylov settings of `asked`, reporting each restart cycle as progress.
  spectral::KrylovSettings krylov(const SolveOptions& asked);
  /// A solver's progress report as a progress line "`step` N: C of W pairs
  /// converged, largest residual R" (KrylovSettings::progress' arguments).
  std::function<void(int, int, int, double)> progress(const std::string& step);
  /// The fields every model manifest starts with (method, kembed version).
  Json manifest_header() const;
  /// Records the solver fields of run.json and prints a fallback note.
  void solver(const SolveOptions& asked, const SolverOutcome& outcome);

  /// The method's own run.json fields; they follow the common ones.
  Json report = Json::object();
  /// What the final line says before "; results in DIR/ (...)".
  std::string summary;
  /// What it says after the file list (e.g. a warning about the data).
  std::string summary_tail;

 private:
  friend void drive(const boost::program_options::variables_map&, const Comm&, const Job&,
                    const std::function<void(Run&)>&);
  void stage();
  /// Collective: STEM_ids.csv beside a binary table when the input has row ids.
  void write_row_ids(const std::string& stem);
  const Comm& world_;
  const BlacsGrid& grid_;
  int block_size_;
  PhaseTimer& timer_;
  io::MatrixFile& input_;
  const OutputOptions& output_;
  std::vector<std::string> reads_;
  std::unique_ptr<io::OutputDir> out_;
  std::vector<std::string> written_;  ///< top-level names, in order
  std::string method_;
  std::string id_header_ = "id";  ///< first column of row tables when the input has ids
};

/// What the driver needs from a command before its work begins.
struct Job {
  using Opener = std::function<std::unique_ptr<io::MatrixFile>(const Comm&)>;
  using Shape = std::function<spectral::ProblemShape(const io::MatrixFile&, const BlacsGrid&)>;

  /// `reads`: files and directories the run reads besides --config (never
  /// replaced; the driver adds the files HDF5 inputs among them link to); `open` (collective) opens the input (--input, --generate, ...).
  Job(std::string method, const OutputOptions& output, const LayoutOptions& layout,
      std::vector<std::string> reads, Opener open)
      : method(std::move(method)), output(&output), layout(&layout), reads(std::move(reads)),
        open(std::move(open)) {}
  /// For commands with --dry-run: the options and the n x n problem's shape.
  Job& with_dry_run(const SolveOptions& options, Shape problem_shape) {
    solve = &options;
    shape = std::move(problem_shape);
    return *this;
  }

  /// For commands whose matrices want a grid other than the near-square one
  /// (given the input's shape) when --grid is not given.
  Job& with_grid(std::function<GridPreference(const io::MatrixFile&)> preference) {
    grid_preference = std::move(preference);
    return *this;
  }

  std::string method;  ///< run.json "method" and message prefix
  const OutputOptions* output;
  const LayoutOptions* layout;
  std::vector<std::string> reads;
  Opener open;
  const SolveOptions* solve = nullptr;
  Shape shape;
  std::function<GridPreference(const io::MatrixFile&)> grid_preference;
};

/// Collective: runs `work` inside the skeleton above. Throws agreed Errors;
/// on any error nothing is committed and no earlier result is touched.
void drive(const boost::program_options::variables_map& vm, const Comm& world, const Job& job,
           const std::function<void(Run&)>& work);

}  // namespace kembed::app
