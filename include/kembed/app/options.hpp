#pragma once
/// @file Command-line and INI options, parsed once into validated structs.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kembed/kernel/kernel.hpp"
#include "kembed/spectral/eigensolver.hpp"

namespace kembed::app {

/// A process grid asked for with --grid PxQ.
struct GridShape {
  int nprow = 0, npcol = 0;
  /// Parses "PxQ"; throws Error on anything else.
  static GridShape parse(const std::string& text);
};

/// Options every method shares.
struct CommonOptions {
  std::string input;
  std::int64_t rows = -1, cols = -1;  ///< shape of a .bin input
  std::string output_dir;
  int components = 2;
  Solver solver = Solver::evd;
  int block_size = 64;
  std::optional<GridShape> grid;
  bool quiet = false;
};

struct KpcaOptions {
  CommonOptions common;
  Kernel kernel;
};

/// The outcome of parsing: options to run, or text to print (help, version).
struct Parsed {
  std::optional<KpcaOptions> kpca;
  std::string text;  ///< printed by rank 0 when no method runs
};

/// Parses `kembed <subcommand> [options]` (argv[0] is the program). Options may
/// also come from `--config FILE` (INI, same keys without dashes); the command
/// line wins. Throws Error for unknown subcommands or options, bad values and
/// inconsistent combinations. Serial and deterministic (every rank gets the
/// same result).
Parsed parse_command_line(int argc, const char* const* argv);

}  // namespace kembed::app
