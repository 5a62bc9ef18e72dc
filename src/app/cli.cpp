#include "kembed/app/cli.hpp"

#include <cstdio>
#include <sstream>

#include "kembed/app/command.hpp"
#include "kembed/app/config_file.hpp"
#include "kembed/core/error.hpp"
#include "kembed/app/version.hpp"
#include "kembed/mpi/comm.hpp"

namespace po = boost::program_options;

namespace kembed::app {

namespace {

std::string usage() {
  std::ostringstream out;
  out << "usage: mpirun -np P kembed <command> [options]\n\ncommands:\n";
  for (const auto& c : commands()) out << "  " << c.name << std::string(12 - std::string(c.name).size(), ' ') << c.summary << "\n";
  out << "\n  kembed <command> --help   options of a command\n"
      << "  kembed --version          version and built solvers\n";
  return out.str();
}

const Command& find_command(const std::string& name) {
  for (const auto& c : commands())
    if (name == c.name) return c;
  throw Error("unknown command '" + name + "'\n" + usage());
}

// What the command line asks for: a command to run, or text to print.
struct Request {
  const Command* command = nullptr;
  po::variables_map vm;
  std::string text;
};

// Parses `kembed <command> [options] [--config FILE]`; the command line wins
// over the INI file. Deterministic: every rank gets the same result.
Request parse(int argc, char** argv) {
  Request request;
  if (argc < 2) throw Error("no command given\n" + usage());
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    request.text = usage();
    return request;
  }
  if (name == "--version") {
    request.text = version_report();
    return request;
  }
  const Command& command = find_command(name);
  po::options_description all;
  po::options_description general("general");
  general.add_options()("help,h", "print this help and exit")(
      "config", po::value<std::string>(), "INI file with the same keys (command line wins)");
  all.add(command.options()).add(general);
  try {
    for (int i = 2; i < argc; ++i) reject_option_placeholders(argv[i], "command line");
    po::positional_options_description positional;
    if (command.positional) positional.add(command.positional, 1);
    po::store(
        po::command_line_parser(argc - 1, argv + 1).options(all).positional(positional).run(),
        request.vm);
    if (request.vm.count("help")) {
      std::ostringstream out;
      out << "usage: mpirun -np P kembed " << name << " [options]\n" << command.summary << "\n"
          << all;
      request.text = out.str();
      return request;
    }
    if (request.vm.count("config")) {
      parse_config_file(request.vm["config"].as<std::string>(), all, request.vm);
    }
    po::notify(request.vm);
  } catch (const po::error& e) {
    throw Error(std::string(e.what()) + " (see kembed " + name + " --help)");
  }
  request.command = &command;
  return request;
}

}  // namespace

int run(int argc, char** argv) {
  const Comm world = Comm::world();
  try {
    Request request;
    collectively(world, [&] { request = parse(argc, argv); });
    if (request.command) {
      request.command->run(request.vm, world);
    } else if (world.is_root()) {
      std::fputs(request.text.c_str(), stdout);
    }
    return 0;
  } catch (const Error& e) {
    // Every rank holds the same agreed error. Rank 0 reports it and flushes
    // before anyone exits, so mpirun cannot cut the message off.
    if (world.is_root()) {
      std::fprintf(stderr, "kembed: error: %s\n", e.what());
      std::fflush(stderr);
    }
    world.barrier();
    return 1;
  } catch (const std::exception& e) {
    // Not agreed: other ranks may be waiting in a collective. End the job.
    std::fprintf(stderr, "kembed: internal error on rank %d: %s\n", world.rank(), e.what());
    std::fflush(stderr);
    Comm::abort_world(2);
  }
}

}  // namespace kembed::app
