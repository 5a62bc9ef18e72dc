#include "kembed/app/generate_command.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

#include "kembed/app/run_report.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/hdf5.hpp"
#include "kembed/io/npy_writer.hpp"
#include "kembed/io/synthetic.hpp"

namespace kembed::app {

namespace po = boost::program_options;

namespace {

/// Values generated and written per collective call, to bound memory (32 MiB).
constexpr std::int64_t chunk_values = std::int64_t{1} << 22;

/// --dataset, --rows, --cols, --seed, --output, --quiet parsed and validated.
struct GenerateOptions {
  io::SyntheticSpec spec;
  std::string output;
  bool quiet = false;

  explicit GenerateOptions(const po::variables_map& vm) {
    if (!vm.count("dataset")) throw Error("missing --dataset (blobs, circles, moons, swissroll or gaussian)");
    if (!vm.count("rows")) throw Error("missing --rows");
    if (!vm.count("output")) throw Error("missing --output FILE.npy (or FILE.h5)");
    spec.dataset = io::parse_dataset(vm["dataset"].as<std::string>());
    spec.rows = vm["rows"].as<std::int64_t>();
    spec.cols = vm.count("cols") ? vm["cols"].as<std::int64_t>() : io::default_cols(spec.dataset);
    const std::int64_t seed = vm["seed"].as<std::int64_t>();
    if (seed < 0) throw Error("--seed must be at least 0");
    spec.seed = static_cast<std::uint64_t>(seed);
    spec.validate();
    output = vm["output"].as<std::string>();
    quiet = vm["quiet"].as<bool>();
  }
};

}  // namespace

po::options_description generate_options() {
  po::options_description d("data set");
  d.add_options()
      ("dataset", po::value<std::string>(), "blobs, circles, moons, swissroll or gaussian")
      ("rows", po::value<std::int64_t>(), "number of rows N")
      ("cols", po::value<std::int64_t>(),
       "number of columns D (default 2, swissroll 3); circles, moons and swissroll get "
       "noise columns N(0, 0.05^2) beyond their 2 or 3")
      ("seed", po::value<std::int64_t>()->default_value(0), "random seed (>= 0); same seed, same file "
       "whatever the number of ranks")
      ("output,o", po::value<std::string>(), "output file FILE.npy (float64, C order), or FILE.h5 "
       "(dataset /X; FILE.h5:/PATH for another) when built with HDF5")
      ("quiet,q", po::bool_switch(), "print nothing on success");
  return d;
}

void run_generate(const po::variables_map& vm, const Comm& world) {
  std::unique_ptr<GenerateOptions> options;
  collectively(world, [&] { options = std::make_unique<GenerateOptions>(vm); });
  const io::SyntheticSpec& spec = options->spec;
  const double start = Comm::wtime();

  const IndexRange mine = io::block_of_rows(spec.rows, world.rank(), world.size());
  const std::int64_t chunk_rows = std::max<std::int64_t>(1, chunk_values / spec.cols);
  // Every rank makes as many write calls as the rank with the most chunks.
  const long long my_chunks = (mine.size() + chunk_rows - 1) / chunk_rows;
  const long long chunks = world.max(my_chunks);
  const auto write_all = [&](auto& writer) {
    for (long long c = 0; c < chunks; ++c) {
      const std::int64_t begin = std::min<std::int64_t>(mine.end, mine.begin + c * chunk_rows);
      const std::int64_t end = std::min(mine.end, begin + chunk_rows);
      std::vector<double> values;
      collectively(world, [&] { values = io::synthetic_rows(spec, {begin, end}); });
      writer.write_rows(begin, values);
    }
    writer.commit();
  };
  // FILE.h5 or FILE.h5:/DATASET (default /X); anything else is .npy.
  const std::string& out = options->output;
  const std::size_t colon = out.rfind(":/");
  const std::string file = colon == std::string::npos ? out : out.substr(0, colon);
  const std::string ext = std::filesystem::path(file).extension().string();
  if (ext == ".h5" || ext == ".hdf5") {
    io::Hdf5Writer writer(world, file, colon == std::string::npos ? "/X" : out.substr(colon + 1), spec.rows, spec.cols);
    write_all(writer);
  } else {
    io::NpyWriter writer(world, out, spec.rows, spec.cols);
    write_all(writer);
  }
  const double seconds = world.max(Comm::wtime() - start);

  char timing[64];
  std::snprintf(timing, sizeof timing, "%.3f", seconds);
  say(world, options->quiet,
      "kembed generate: " + io::dataset_name(spec.dataset) + " " + std::to_string(spec.rows) + " x " +
          std::to_string(spec.cols) + " (seed " + std::to_string(spec.seed) + ") written to " +
          options->output + " by " + std::to_string(world.size()) + " ranks in " + timing + " s");
}

}  // namespace kembed::app
