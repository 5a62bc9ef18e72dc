// libFuzzer target: the INI reader behind --config (app::parse_config) on
// arbitrary bytes, with the real options of every kembed command, followed by
// what the CLI does next: po::notify and the validating option structs.
// kembed::Error is the documented rejection (the CLI also turns
// boost::program_options errors from notify into Error); any other exception,
// a crash or a sanitizer report is a bug.
#include <boost/program_options.hpp>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "kembed/app/command.hpp"
#include "kembed/app/config_file.hpp"
#include "kembed/app/options.hpp"
#include "kembed/core/error.hpp"

namespace po = boost::program_options;
namespace app = kembed::app;

namespace {

// The options cli.cpp gives the INI reader: the command's own plus --help
// and --config (kept in step with cli.cpp's parse()).
po::options_description all_options(const app::Command& command) {
  po::options_description all;
  po::options_description general("general");
  general.add_options()("help,h", "print this help and exit")(
      "config", po::value<std::string>(), "INI file with the same keys (command line wins)");
  all.add(command.options()).add(general);
  return all;
}

// Builds the shared option structs whose keys this command has, as the
// command's run() would (each reads its keys with vm[key].as<T>()).
void validate(const po::options_description& all, const po::variables_map& vm) {
  auto has = [&](const char* key) { return all.find_nothrow(key, false) != nullptr; };
  if (has("input") && has("generate") && has("rows") && has("cols") && has("seed"))
    app::InputOptions input(vm);
  if (has("output-dir") && has("quiet")) app::OutputOptions output(vm);
  if (has("block-size") && has("grid")) app::LayoutOptions layout(vm);
  if (has("components") && has("solver") && has("tol") && has("dry-run") && has("block-size"))
    app::SolveOptions solve(vm);
  if (has("kernel") && has("degree") && has("coef0")) app::KernelOptions kernel(vm);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto& commands = app::commands();
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const app::Command& command : commands) {
    const po::options_description all = all_options(command);
    po::variables_map vm;
    std::istringstream in(text);
    try {
      app::parse_config(in, all, "fuzz.ini", vm);
      po::notify(vm);
      validate(all, vm);
    } catch (const kembed::Error&) {
    } catch (const po::error&) {  // from notify; cli.cpp makes it an Error
    }
  }
  return 0;
}
