#pragma once
/// @file Command-line entry point: `kembed <subcommand> [options]`.

namespace kembed::app {

/// Parses the subcommand and its options, runs it, and returns the process
/// exit code (0 on success). Errors are agreed across ranks; rank 0 prints
/// "kembed: error: ..." and every rank returns non-zero. Requires MPI.
int run(int argc, char** argv);

}  // namespace kembed::app
