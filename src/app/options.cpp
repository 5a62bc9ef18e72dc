#include "kembed/app/options.hpp"

#include <boost/program_options.hpp>
#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

#include "kembed/core/error.hpp"
#include "kembed/core/version.hpp"

namespace po = boost::program_options;

namespace kembed::app {

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

const char* const kUsage =
    "usage: kembed <command> [options]\n"
    "\n"
    "commands:\n"
    "  kpca     kernel PCA of a data matrix (or of a precomputed kernel)\n"
    "\n"
    "  kembed <command> --help   options of a command\n"
    "  kembed --version          version and built solvers\n";

po::options_description common_description() {
  po::options_description d("common options");
  d.add_options()
      ("help,h", "print this help and exit")
      ("config", po::value<std::string>(), "INI file with the same keys (command line wins)")
      ("input,i", po::value<std::string>(), "data file: .csv/.tsv/.txt text, .npy, or .bin")
      ("rows", po::value<std::int64_t>(), "number of rows of a .bin input")
      ("cols", po::value<std::int64_t>(), "number of columns of a .bin input")
      ("output-dir,o", po::value<std::string>(), "result directory (replaced atomically)")
      ("components,k", po::value<int>()->default_value(2), "number of components K")
      ("solver", po::value<std::string>()->default_value("evd"),
       "eigensolver: evd (pdsyevd, all eigenpairs) or evr (pdsyevr, top K only)")
      ("block-size", po::value<int>()->default_value(64), "ScaLAPACK block size NB")
      ("grid", po::value<std::string>(), "process grid PxQ (default: near-square)")
      ("quiet,q", po::bool_switch(), "print nothing on success");
  return d;
}

po::options_description kpca_description() {
  po::options_description d("kernel options");
  d.add_options()
      ("kernel", po::value<std::string>()->default_value("rbf"),
       "linear, poly, rbf, laplacian, sigmoid, cosine or precomputed")
      ("gamma", po::value<double>(), "kernel coefficient (default 1/d)")
      ("degree", po::value<int>()->default_value(3), "degree of the poly kernel")
      ("coef0", po::value<double>()->default_value(1.0), "constant term of poly and sigmoid");
  return d;
}

template <class T>
T get(const po::variables_map& vm, const char* key) {
  return vm[key].as<T>();
}

CommonOptions common_options(const po::variables_map& vm) {
  CommonOptions o;
  if (!vm.count("input")) throw Error("missing --input");
  o.input = get<std::string>(vm, "input");
  if (!vm.count("output-dir")) throw Error("missing --output-dir");
  o.output_dir = get<std::string>(vm, "output-dir");
  if (vm.count("rows")) o.rows = get<std::int64_t>(vm, "rows");
  if (vm.count("cols")) o.cols = get<std::int64_t>(vm, "cols");
  if (vm.count("rows") && o.rows < 1) throw Error("--rows must be at least 1");
  if (vm.count("cols") && o.cols < 1) throw Error("--cols must be at least 1");
  o.components = get<int>(vm, "components");
  if (o.components < 1) throw Error("--components must be at least 1");
  o.solver = parse_solver(get<std::string>(vm, "solver"));
  o.block_size = get<int>(vm, "block-size");
  if (o.block_size < 1) throw Error("--block-size must be at least 1");
  if (vm.count("grid")) o.grid = GridShape::parse(get<std::string>(vm, "grid"));
  o.quiet = get<bool>(vm, "quiet");
  return o;
}

KpcaOptions kpca_options(const po::variables_map& vm) {
  KpcaOptions o{common_options(vm), {}};
  o.kernel.type = Kernel::parse(get<std::string>(vm, "kernel"));
  if (vm.count("gamma")) {
    o.kernel.gamma = get<double>(vm, "gamma");
    if (!(o.kernel.gamma > 0) || !std::isfinite(o.kernel.gamma))
      throw Error("--gamma must be positive and finite");
  }
  o.kernel.degree = get<int>(vm, "degree");
  if (o.kernel.degree < 1) throw Error("--degree must be at least 1");
  o.kernel.coef0 = get<double>(vm, "coef0");
  if (!std::isfinite(o.kernel.coef0)) throw Error("--coef0 must be finite");
  return o;
}

std::string help_text(const std::string& command, const po::options_description& all) {
  std::ostringstream out;
  out << "usage: mpirun -np P kembed " << command << " --input FILE --output-dir DIR [options]\n\n"
      << all;
  return out.str();
}

}  // namespace

Parsed parse_command_line(int argc, const char* const* argv) {
  Parsed parsed;
  if (argc < 2) throw Error(std::string("no command given\n") + kUsage);
  const std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    parsed.text = kUsage;
    return parsed;
  }
  if (command == "--version") {
    parsed.text = version_text();
    return parsed;
  }
  if (command != "kpca")
    throw Error("unknown command '" + command + "'\n" + kUsage);

  po::options_description all;
  all.add(common_description()).add(kpca_description());
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc - 1, argv + 1).options(all).run(), vm);
    if (vm.count("config")) {
      const auto path = vm["config"].as<std::string>();
      std::ifstream in(path);
      if (!in) throw Error("cannot open config file '" + path + "'");
      po::store(po::parse_config_file(in, all, false), vm);
    }
    if (vm.count("help")) {
      parsed.text = help_text(command, all);
      return parsed;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw Error(std::string(e.what()) + " (see kembed " + command + " --help)");
  }
  parsed.kpca = kpca_options(vm);
  return parsed;
}

}  // namespace kembed::app
