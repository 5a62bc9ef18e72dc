#pragma once
/// @file The subcommands of kembed and how the CLI finds them.
#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "kembed/mpi/comm.hpp"

namespace kembed::app {

/// One subcommand: its options and what it does with them.
struct Command {
  const char* name;
  const char* summary;
  /// The command's options (without --help and --config, which every command has).
  boost::program_options::options_description (*options)();
  /// Collective: runs the command. Throws agreed Errors.
  void (*run)(const boost::program_options::variables_map& vm, const Comm& world);
  /// The option that a bare word after the command sets (`kembed plan kpca`), or null.
  const char* positional = nullptr;
};

/// Every command, in the order `kembed --help` lists them.
const std::vector<Command>& commands();

}  // namespace kembed::app
