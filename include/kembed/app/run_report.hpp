#pragma once
/// @file The parts of run.json every method shares.
#include <nlohmann/json.hpp>
#include <string>

#include "kembed/app/options.hpp"
#include "kembed/core/phase_timer.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/linalg/blacs_grid.hpp"

namespace kembed::app {

using Json = nlohmann::ordered_json;

/// Collective: method, version, input, grid, block size, phase times (max
/// over ranks, with their total) and peak memory per rank.
Json common_report(const std::string& method, int block_size, const io::MatrixFile& input,
                   const BlacsGrid& grid, const PhaseTimer& timer);

/// Collective: prints `message` on rank 0 of `comm` (unless quiet).
void say(const Comm& comm, bool quiet, const std::string& message);

}  // namespace kembed::app
