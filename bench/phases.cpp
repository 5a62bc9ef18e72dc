// Kernel assembly and centering measured against what the same ranks on the
// same machine can do, in one run:
//   - the local dgemm rate: local_gram, the product assembly itself does
//     (an m x n_local x d dgemm per rank, all ranks at once);
//   - the streaming bandwidth: one read+write pass over an array as big as the
//     local kernel block (all ranks at once, so they share the memory system
//     as in the real phases);
//   - assemble_kernel: 2 n^2 d / p flops per rank (the Gram product), its
//     rate as a percentage of the dgemm rate;
//   - center_kernel: one read pass (the means) and one read+write pass over the
//     local block, 24 bytes per entry, as a percentage of the bandwidth.
// Data: the library's generated standard normal set (seed 1), gamma = 1/d.
// Every time is the slowest rank's, best of --repeat runs; rates are per rank.
//
//   mpirun -np 2 kembed_bench_phases [--n 16000,32000] [--d 64,256] [--kernel rbf]
//       [--block-size 64] [--repeat 3] [--csv FILE]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "kembed/distribute/read_distributed.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/synthetic.hpp"
#include "kembed/kernel/assemble.hpp"
#include "kembed/kernel/local_blocks.hpp"
#include "kembed/kernel/vector_exp.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/mpi/comm.hpp"
#include "kembed/mpi/session.hpp"
#include "kembed/spectral/centering.hpp"

namespace po = boost::program_options;
using namespace kembed;
using namespace kembed::spectral;
using namespace kembed::kernel;
using namespace kembed::distribute;

namespace {

struct BenchOptions {
  std::vector<std::int64_t> sizes;
  std::vector<std::int64_t> dims;
  std::string kernel;
  int block_size = 64;
  int repeat = 3;
  std::string csv;
  bool help = false;
  std::string usage;
};

// "16000,32000" or "16000 32000" -> {16000, 32000}, each at least `min`.
std::vector<std::int64_t> parse_list(const std::string& text, const std::string& option,
                                     std::int64_t min) {
  std::string spaced = text;
  for (char& c : spaced) c = c == ',' ? ' ' : c;
  std::istringstream in(spaced);
  std::vector<std::int64_t> values;
  std::string word;
  while (in >> word) {
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(word, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != word.size() || v < min)
      throw Error("--" + option + ": '" + word + "' is not an integer >= " + std::to_string(min));
    values.push_back(v);
  }
  if (values.empty()) throw Error("--" + option + " needs at least one value");
  return values;
}

// Every rank parses the same command line, so every rank throws the same Error.
BenchOptions parse_options(int argc, char** argv) {
  po::options_description desc("kembed_bench_phases options");
  desc.add_options()("help,h", "this help")
      ("n", po::value<std::string>()->default_value("16000"), "matrix sizes, comma separated")
      ("d", po::value<std::string>()->default_value("64"), "data dimensions, comma separated")
      ("kernel", po::value<std::string>()->default_value("rbf"), "kernel (gamma = 1/d)")
      ("block-size", po::value<int>()->default_value(64), "block-cyclic block size")
      ("repeat", po::value<int>()->default_value(3), "runs per measurement (best is kept)")
      ("csv", po::value<std::string>(), "also write the table to this CSV file");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw Error(e.what());
  }
  BenchOptions o;
  std::ostringstream usage;
  usage << desc;
  o.usage = usage.str();
  o.help = vm.count("help") > 0;
  o.sizes = parse_list(vm["n"].as<std::string>(), "n", 2);
  o.dims = parse_list(vm["d"].as<std::string>(), "d", 1);
  o.kernel = vm["kernel"].as<std::string>();
  if (Kernel::parse(o.kernel) == KernelType::precomputed)
    throw Error("--kernel precomputed has no assembly to measure");
  o.block_size = vm["block-size"].as<int>();
  o.repeat = vm["repeat"].as<int>();
  if (o.block_size < 1) throw Error("--block-size must be at least 1");
  if (o.repeat < 1) throw Error("--repeat must be at least 1");
  if (vm.count("csv")) o.csv = vm["csv"].as<std::string>();
  return o;
}

// Collective: seconds `body` takes on the slowest rank.
template <class F>
double time_on_slowest_rank(const Comm& comm, F&& body) {
  comm.barrier();
  const auto start = std::chrono::steady_clock::now();
  body();
  const std::chrono::duration<double> local = std::chrono::steady_clock::now() - start;
  return comm.max(local.count());
}

// One read+write pass, the access pattern of centering's update; the values
// stay bounded (they converge to 2) however often it runs.
void stream_pass(double* a, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) a[i] = 0.5 * a[i] + 1.0;
}

struct Row {
  std::int64_t n = 0, d = 0;
  int ranks = 0, nprow = 0, npcol = 0;
  double dgemm_s = 0, stream_s = 0, assemble_s = 0, center_s = 0;
  double dgemm_gflops = 0, stream_gbs = 0, assemble_gflops = 0, center_gbs = 0;
};

Row measure(const Comm& world, const BenchOptions& o, std::int64_t n, std::int64_t d) {
  BlacsGrid grid(world);
  // The local block is n^2 / p doubles: an allocation that fails is agreed.
  std::unique_ptr<DistMatrix> block;
  collectively(world, [&] {
    block = std::make_unique<DistMatrix>(grid, n, n, o.block_size, o.block_size);
  });
  DistMatrix& k = *block;
  const Kernel kernel = Kernel{Kernel::parse(o.kernel)}.with_default_gamma(d);
  auto file = io::synthetic_matrix(world, {io::Dataset::gaussian, n, d, 1});
  const auto row_panel = read_panel(*file, k.row_dist());
  const auto col_panel = read_panel(*file, k.col_dist());
  const int dd = static_cast<int>(d);

  Row row;
  row.n = n;
  row.d = d;
  row.ranks = world.size();
  row.nprow = grid.nprow();
  row.npcol = grid.npcol();
  const double p = world.size();
  const double flops_per_rank = 2.0 * double(n) * double(n) * double(d) / p;
  // Bytes: the block as allocated (ld x local columns), which is what a pass touches.
  const std::size_t entries = std::size_t(k.ld()) * std::size_t(k.local_cols());
  const double entries_per_rank = world.sum(static_cast<double>(entries)) / p;

  // The four measurements take turns, so that a change in the machine's load
  // during the run affects the references and the phases alike; the best of
  // the runs of each is kept. Centering a centered matrix moves the same bytes.
  const double inf = std::numeric_limits<double>::infinity();
  row.dgemm_s = row.stream_s = row.assemble_s = row.center_s = inf;
  for (int r = 0; r < o.repeat; ++r) {
    auto keep_best = [&](double& best, double t) { best = std::min(best, t); };
    keep_best(row.dgemm_s,
              time_on_slowest_rank(world, [&] { local_gram(row_panel, col_panel, dd, k); }));
    keep_best(row.stream_s, time_on_slowest_rank(world, [&] { stream_pass(k.data(), entries); }));
    keep_best(row.assemble_s, time_on_slowest_rank(world, [&] {
                assemble_kernel(kernel, row_panel, col_panel, dd, k);
              }));
    keep_best(row.center_s, time_on_slowest_rank(world, [&] { center_kernel(k); }));
  }

  row.dgemm_gflops = flops_per_rank / row.dgemm_s * 1e-9;
  row.assemble_gflops = flops_per_rank / row.assemble_s * 1e-9;
  row.stream_gbs = 16 * entries_per_rank / row.stream_s * 1e-9;
  row.center_gbs = 24 * entries_per_rank / row.center_s * 1e-9;
  return row;
}

std::string grid_name(const Row& r) {
  return std::to_string(r.nprow) + "x" + std::to_string(r.npcol);
}

void print_header(const BenchOptions& o) {
  std::printf("kernel %s, gamma = 1/d, block size %d, exp lanes: %s, best of %d runs; rates per "
              "rank\n",
              o.kernel.c_str(), o.block_size, simd_level_name(best_simd_level()).c_str(), o.repeat);
  std::printf("%7s %4s %5s %4s | %7s %7s | %7s %7s %6s %7s | %7s | %7s %7s %6s\n", "n", "d",
              "ranks", "grid", "dgemm s", "GFlop/s", "assem s", "GFlop/s", "dgemm", "map s",
              "GB/s", "center", "GB/s", "stream");
  std::fflush(stdout);
}

// map s: assembly minus the dgemm, i.e. the elementwise pass (and row norms).
void print_row(const Row& r) {
  std::printf("%7lld %4lld %5d %4s | %7.3f %7.1f | %7.3f %7.1f %5.0f%% %7.3f | %7.1f | %7.3f %7.1f "
              "%5.0f%%\n",
              static_cast<long long>(r.n), static_cast<long long>(r.d), r.ranks,
              grid_name(r).c_str(), r.dgemm_s, r.dgemm_gflops, r.assemble_s, r.assemble_gflops,
              100 * r.assemble_gflops / r.dgemm_gflops, r.assemble_s - r.dgemm_s, r.stream_gbs,
              r.center_s, r.center_gbs, 100 * r.center_gbs / r.stream_gbs);
  std::fflush(stdout);
}

void write_csv(const std::string& path, const std::vector<Row>& rows, const BenchOptions& o) {
  std::ofstream out(path);
  out << "n,d,ranks,grid,kernel,block_size,dgemm_s,dgemm_gflops_per_rank,stream_s,"
         "stream_gbs_per_rank,assemble_s,assemble_gflops_per_rank,assemble_pct_of_dgemm,"
         "center_s,center_gbs_per_rank,center_pct_of_stream\n";
  char line[512];
  for (const Row& r : rows) {
    std::snprintf(line, sizeof line,
                  "%lld,%lld,%d,%s,%s,%d,%.4f,%.2f,%.4f,%.2f,%.4f,%.2f,%.1f,%.4f,%.2f,%.1f\n",
                  static_cast<long long>(r.n), static_cast<long long>(r.d), r.ranks,
                  grid_name(r).c_str(), o.kernel.c_str(), o.block_size, r.dgemm_s,
                  r.dgemm_gflops, r.stream_s, r.stream_gbs, r.assemble_s, r.assemble_gflops,
                  100 * r.assemble_gflops / r.dgemm_gflops, r.center_s, r.center_gbs,
                  100 * r.center_gbs / r.stream_gbs);
    out << line;
  }
  if (!out) throw Error("cannot write " + path);
}

int run(int argc, char** argv) {
  const Comm world = Comm::world();
  BenchOptions o;
  collectively(world, [&] { o = parse_options(argc, argv); });
  if (o.help) {
    if (world.is_root()) std::cout << o.usage;
    return 0;
  }
  if (world.is_root()) print_header(o);
  std::vector<Row> rows;
  for (std::int64_t n : o.sizes)
    for (std::int64_t d : o.dims) {
      rows.push_back(measure(world, o, n, d));
      if (world.is_root()) print_row(rows.back());
    }
  if (!o.csv.empty())
    collectively(world, [&] {
      if (world.is_root()) write_csv(o.csv, rows, o);
    });
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  kembed::MpiSession mpi(argc, argv);
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    // Errors are agreed (collectively), so every rank gets here with the same one.
    if (Comm::world().is_root()) std::cerr << "kembed_bench_phases: error: " << e.what() << "\n";
    return 1;
  }
}
