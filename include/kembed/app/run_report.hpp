#pragma once
/// @file The parts of run.json every method shares.
#include <nlohmann/json.hpp>
#include <string>

#include "kembed/app/options.hpp"
#include "kembed/core/phase_timer.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/spectral/matrix_storage.hpp"
#include "kembed/spectral/memory_plan.hpp"

namespace kembed::app {

using Json = nlohmann::ordered_json;

/// Collective: method, version, input, grid, block size, phase times (max
/// over ranks, with their total) and peak memory per rank.
Json common_report(const std::string& method, int block_size, const io::MatrixFile& input,
                   const BlacsGrid& grid, const PhaseTimer& timer);

/// How the n x n matrix (named `matrix` in formulas, e.g. "K~" or "B") was
/// stored: report[key] = "full", "lower_blocks" or "none", for the last two
/// report[key + "_definition"], and when --storage auto chose it, `note`
/// (why) in report[key + "_note"] and on rank 0's stderr; matrix-free, the
/// recomputing passes in report[key + "_passes"].
void report_storage(Json& report, const Comm& comm, const std::string& method,
                    const std::string& key, spectral::MatrixStorage storage,
                    const std::string& matrix, const std::string& note, long long passes);

/// The memory plan of `shape` with `ranks` ranks in human units, the grid,
/// the solver (auto resolved) and whether it fits in `available` bytes per
/// rank (if not: how many ranks or which solver would). `extra` (lines
/// ending in a newline) goes before the available memory, so the verdict is
/// always the last line.
std::string describe_plan(const std::string& title, const spectral::ProblemShape& shape, int ranks,
                          double available, const std::string& extra = "");
/// The shape a plan or --dry-run describes for a fit planned as `plan`: its
/// solver named as asked (`asked`: "auto (krylov)"), except matrix-free,
/// which is krylov whatever was asked.
spectral::ProblemShape shown_shape(const spectral::FitPlan& plan, spectral::Solver asked);

/// The estimated time of a kernel PCA or MDS fit of points (shape.d >= 1),
/// stored and matrix-free, with rates measured on this rank first (about
/// 0.2 s, no communication): spectral::describe_time_estimate's lines.
std::string describe_fit_time(const spectral::ProblemShape& shape);

/// Collective: prints the memory plan of an n x n decomposition and the grid
/// (what --dry-run shows) on rank 0; for kpca and mds of points also the
/// estimated time (describe_fit_time).
void print_dry_run(const Comm& world, const std::string& method, const spectral::ProblemShape& shape,
                   double max_memory_per_rank);

/// Collective: prints `message` on rank 0 of `comm` (unless quiet).
void say(const Comm& comm, bool quiet, const std::string& message);

}  // namespace kembed::app
