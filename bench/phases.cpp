// Every phase of a kernel PCA fit measured against what the same ranks on the
// same machine can do, in one run:
//   - the local dgemm rate: local_gram, the product assembly itself does
//     (an m x n_local x d dgemm per rank, all ranks at once), and a square
//     2000^3 dgemm per rank (the rate BLAS reaches on its best shape);
//   - the streaming bandwidth: one read+write pass over an array as big as the
//     local kernel block, and one read-only pass (all ranks at once, so they
//     share the memory system as in the real phases);
//   - allocation of the n x n block zeroed (DistMatrix) and uninitialized
//     (DistMatrix::uninitialized, first touched by assembly);
//   - assemble_kernel: 2 n^2 d / p flops per rank (the Gram product), its
//     rate as a percentage of the dgemm rate; with and without its fused sums;
//   - center_kernel: one read pass (the means) and one read+write pass over the
//     local block, 24 bytes per entry, as a percentage of the bandwidth; and
//     from assembly's sums, one read+write pass (16 bytes per entry);
//   - the block product K X (X n x w) of the krylov solver, pdgemm (with the
//     solver's copies to and from the 2-D grid) and BlockProduct, for
//     each --widths w; its bound is the larger of the flops at the square
//     dgemm rate and one read pass over K;
//   - the krylov solve (top --k) with each product and each --krylov-blocks b:
//     time, block products, and the bound (products x the product's bound);
//   - the same kernel in lower-block storage (Storage::lower_blocks, kpca's
//     default for krylov): its first assembly (page faults included), later
//     ones, centering from the sums, the product and the solve; the bounds
//     are half the flops of assembly and half the bytes of each pass.
// Data: the library's generated standard normal set (seed 1), gamma = 1/d.
// Every time is the slowest rank's, best of --repeat runs; rates are per rank.
//
//   mpirun -np 2 kembed_bench_phases [--n 16000,32000] [--d 64,256] [--kernel rbf]
//       [--block-size 64] [--repeat 3] [--widths 24,48] [--k 10] [--krylov-blocks 24]
//       [--csv FILE]
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

#include "kembed/core/error.hpp"
#include "kembed/distribute/read_distributed.hpp"
#include "kembed/io/synthetic.hpp"
#include "kembed/kernel/assemble.hpp"
#include "kembed/kernel/local_blocks.hpp"
#include "kembed/kernel/vector_exp.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/linalg/block_product.hpp"
#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/linalg/lapack.hpp"
#include "kembed/linalg/library_versions.hpp"
#include "kembed/linalg/reductions.hpp"
#include "kembed/linalg/scalapack.hpp"
#include "kembed/mpi/comm.hpp"
#include "kembed/mpi/session.hpp"
#include "kembed/spectral/centering.hpp"
#include "kembed/spectral/krylov.hpp"

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
  std::vector<std::int64_t> widths;
  std::vector<std::int64_t> krylov_blocks;
  int k = 10;
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
      ("widths", po::value<std::string>()->default_value("24,48"), "block product widths")
      ("k", po::value<int>()->default_value(10), "eigenpairs of the krylov solve (0: no solve)")
      ("krylov-blocks", po::value<std::string>()->default_value("24"),
       "krylov block widths b to solve with (each >= k)")
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
  o.widths = parse_list(vm["widths"].as<std::string>(), "widths", 1);
  o.krylov_blocks = parse_list(vm["krylov-blocks"].as<std::string>(), "krylov-blocks", 1);
  o.k = vm["k"].as<int>();
  if (o.k < 0) throw Error("--k must be at least 0");
  for (auto b : o.krylov_blocks)
    if (b < o.k) throw Error("--krylov-blocks: each block width must be at least --k");
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

// A read-only pass; eight sums so the additions do not limit it.
double read_pass(const double* a, std::size_t count) {
  double s[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8)
    for (int t = 0; t < 8; ++t) s[t] += a[i + t];
  for (; i < count; ++i) s[0] += a[i];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

struct ProductRow {
  int width = 0;
  double pdgemm_s = 0, local_s = 0, bound_s = 0, gflops_local = 0, gflops_pdgemm = 0;
  // The same product on lower-block storage: the same flops, half the bytes.
  double lower_s = 0, lower_bound_s = 0, gflops_lower = 0;
};

struct SolveRow {
  int block = 0;
  std::string product;
  double seconds = 0, bound_s = 0, product_s = 0;
  int matvecs = 0, cycles = 0;
};

struct Row {
  std::int64_t n = 0, d = 0;
  int ranks = 0, nprow = 0, npcol = 0;
  double dgemm_s = 0, stream_s = 0, assemble_s = 0, center_s = 0;
  double dgemm_gflops = 0, stream_gbs = 0, assemble_gflops = 0, center_gbs = 0;
  double square_gflops = 0, read_gbs = 0, entries_per_rank = 0;
  double alloc_zero_s = 0, alloc_calloc_s = 0, alloc_uninit_s = 0;
  double assemble_fused_s = 0, center_fused_s = 0, norms_s = 0;
  double assemble_bound_s = 0, center_bound_s = 0, center_fused_bound_s = 0;
  // Lower-block storage: first assembly (with the page faults), the best
  // later one, and the one-pass centering from its sums.
  double assemble_lower_first_s = 0, assemble_lower_s = 0, center_lower_s = 0;
  std::vector<ProductRow> products;
  std::vector<SolveRow> solves;
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
  row.entries_per_rank = entries_per_rank;

  // The four measurements take turns, so that a change in the machine's load
  // during the run affects the references and the phases alike; the best of
  // the runs of each is kept. Centering a centered matrix moves the same bytes.
  // Assembly with its fused sums, and the one-pass centering from them, take
  // turns with the separate passes too (the block ends centered).
  const double inf = std::numeric_limits<double>::infinity();
  row.dgemm_s = row.stream_s = row.assemble_s = row.center_s = inf;
  row.assemble_fused_s = row.center_fused_s = row.norms_s = inf;
  LocalSums sums;
  for (int r = 0; r < o.repeat; ++r) {
    auto keep_best = [&](double& best, double t) { best = std::min(best, t); };
    keep_best(row.dgemm_s,
              time_on_slowest_rank(world, [&] { local_gram(row_panel, col_panel, dd, k); }));
    keep_best(row.stream_s, time_on_slowest_rank(world, [&] { stream_pass(k.data(), entries); }));
    keep_best(row.assemble_s, time_on_slowest_rank(world, [&] {
                assemble_kernel(kernel, row_panel, col_panel, dd, k);
              }));
    keep_best(row.center_s, time_on_slowest_rank(world, [&] { center_kernel(k); }));
    keep_best(row.assemble_fused_s, time_on_slowest_rank(world, [&] {
                assemble_kernel(kernel, row_panel, col_panel, dd, k, &sums);
              }));
    keep_best(row.center_fused_s, time_on_slowest_rank(world, [&] { center_kernel(k, sums); }));
    // The trace and Frobenius norm the spectral step takes before the solve
    // (run.json counts them in "center").
    keep_best(row.norms_s, time_on_slowest_rank(world, [&] {
                volatile double t = trace(k) + frobenius_norm(k);
                (void)t;
              }));
  }

  row.dgemm_gflops = flops_per_rank / row.dgemm_s * 1e-9;
  row.assemble_gflops = flops_per_rank / row.assemble_s * 1e-9;
  row.stream_gbs = 16 * entries_per_rank / row.stream_s * 1e-9;
  row.center_gbs = 24 * entries_per_rank / row.center_s * 1e-9;

  // References for the bounds: the square dgemm rate and the read-only rate.
  {
    const int s = 2000;
    std::vector<double> a(std::size_t(s) * s, 0.5), b(a.size(), 0.25), c(a.size());
    double best = inf, best_read = inf;
    volatile double sink = 0;
    for (int r = 0; r < o.repeat; ++r) {
      best = std::min(best, time_on_slowest_rank(world, [&] {
        lapack::gemm('N', 'N', s, s, s, 1.0, a.data(), s, b.data(), s, 0.0, c.data(), s);
      }));
      best_read = std::min(best_read, time_on_slowest_rank(world, [&] {
        sink = sink + read_pass(k.data(), entries);
      }));
    }
    row.square_gflops = 2.0 * s * s * s / best * 1e-9;
    row.read_gbs = 8 * entries_per_rank / best_read * 1e-9;
  }
  const double square_rate = row.square_gflops * 1e9, read_rate = row.read_gbs * 1e9,
               stream_rate = row.stream_gbs * 1e9;
  row.assemble_bound_s = flops_per_rank / square_rate;
  row.center_bound_s = 24 * entries_per_rank / stream_rate;  // a read pass and a read+write pass
  row.center_fused_bound_s = 16 * entries_per_rank / stream_rate;

  // Allocation, timed with the first assembly that follows (which pays for
  // the page faults), minus the assembly of a block already touched: the
  // zeroing pass DistMatrix made before (a value-initialized vector), the
  // calloc it makes now, and the uninitialized block assembly gets.
  row.alloc_zero_s = row.alloc_calloc_s = row.alloc_uninit_s = inf;
  for (int r = 0; r < o.repeat; ++r)
    for (int way = 0; way < 3; ++way) {
      std::unique_ptr<DistMatrix> fresh;
      const double t = time_on_slowest_rank(world, [&] {
        if (way == 1) {
          fresh = std::make_unique<DistMatrix>(grid, n, n, o.block_size, o.block_size);
          return;
        }
        fresh = std::make_unique<DistMatrix>(
            DistMatrix::uninitialized(grid, n, n, o.block_size, o.block_size));
        if (way == 0) std::fill_n(fresh->data(), entries, 0.0);
      });
      const double first = time_on_slowest_rank(
          world, [&] { assemble_kernel(kernel, row_panel, col_panel, dd, *fresh); });
      double& best = way == 0 ? row.alloc_zero_s : way == 1 ? row.alloc_calloc_s : row.alloc_uninit_s;
      best = std::min(best, t + first);
    }
  for (double* a : {&row.alloc_zero_s, &row.alloc_calloc_s, &row.alloc_uninit_s})
    *a = std::max(0.0, *a - row.assemble_s);

  // The kernel in lower-block storage: assembly computes and touches half.
  DistMatrix kl =
      DistMatrix::uninitialized(grid, n, n, o.block_size, o.block_size, Storage::lower_blocks);
  row.assemble_lower_first_s = time_on_slowest_rank(world, [&] {
    assemble_kernel(kernel, row_panel, col_panel, dd, kl, &sums);
  });
  row.assemble_lower_s = row.center_lower_s = inf;
  for (int r = 0; r < o.repeat; ++r) {
    row.assemble_lower_s = std::min(row.assemble_lower_s, time_on_slowest_rank(world, [&] {
      assemble_kernel(kernel, row_panel, col_panel, dd, kl, &sums);
    }));
    row.center_lower_s = std::min(row.center_lower_s,
                                  time_on_slowest_rank(world, [&] { center_kernel(kl, sums); }));
  }

  // Block products K X in the solver's layout (rows dealt over all ranks).
  BlacsGrid line(grid.comm(), grid.comm().size(), 1);
  BlockProduct product(k), lower_product(kl);
  const double read_bound = 8 * entries_per_rank / read_rate;
  for (std::int64_t w64 : o.widths) {
    const int w = static_cast<int>(w64);
    ProductRow pr;
    pr.width = w;
    DistMatrix xl(line, n, w, o.block_size, w), yl(line, n, w, o.block_size, w);
    DistMatrix x2(grid, n, w, o.block_size, o.block_size), y2(grid, n, w, o.block_size, o.block_size);
    xl.fill([](std::int64_t i, std::int64_t j) { return 1.0 / double(1 + (i + 3 * j) % 17); });
    pr.pdgemm_s = pr.local_s = pr.lower_s = inf;
    for (int r = 0; r < o.repeat; ++r) {
      pr.pdgemm_s = std::min(pr.pdgemm_s, time_on_slowest_rank(world, [&] {
        copy(xl, 0, 0, n, w, x2, 0, 0);
        scalapack::gemm('N', 'N', 1.0, k, x2, 0.0, y2);
        copy(y2, 0, 0, n, w, yl, 0, 0);
      }));
      pr.local_s = std::min(pr.local_s, time_on_slowest_rank(world, [&] {
        product.apply(xl.data(), xl.ld(), w, yl.data(), yl.ld());
      }));
      pr.lower_s = std::min(pr.lower_s, time_on_slowest_rank(world, [&] {
        lower_product.apply(xl.data(), xl.ld(), w, yl.data(), yl.ld());
      }));
    }
    const double product_flops = 2.0 * double(n) * double(n) * w / p;
    pr.bound_s = std::max(product_flops / square_rate, read_bound);
    pr.gflops_local = product_flops / pr.local_s * 1e-9;
    pr.gflops_pdgemm = product_flops / pr.pdgemm_s * 1e-9;
    pr.gflops_lower = product_flops / pr.lower_s * 1e-9;
    pr.lower_bound_s = std::max(product_flops / square_rate, read_bound / 2);
    row.products.push_back(pr);
  }

  // The krylov solve on the centered kernel, with each product and block width.
  if (o.k > 0 && o.k < n)
    for (std::int64_t b : o.krylov_blocks)
      for (int way = 0; way < 3; ++way) {
        // local, pdgemm, and local on lower-block storage
        KrylovSettings settings;
        settings.block = static_cast<int>(b);
        settings.product = way == 1 ? KrylovProduct::pdgemm : KrylovProduct::local;
        KrylovResult result{{}, DistMatrix(grid, 0, 0, 1, 1), {}, 0, 0, 0, false, {}};
        SolveRow sr;
        sr.block = static_cast<int>(b);
        sr.product = way == 0 ? "local" : way == 1 ? "pdgemm" : "lower blocks";
        sr.seconds = time_on_slowest_rank(world, [&] {
          result = krylov_top_eigenpairs(way == 2 ? kl : k, o.k, settings);
        });
        sr.matvecs = result.matvecs;
        sr.cycles = result.cycles;
        const double product_flops = 2.0 * double(n) * double(n) * double(b) / p;
        sr.product_s = std::max(product_flops / square_rate, way == 2 ? read_bound / 2 : read_bound);
        sr.bound_s = sr.matvecs * sr.product_s;
        row.solves.push_back(sr);
      }
  return row;
}

std::string grid_name(const Row& r) {
  return std::to_string(r.nprow) + "x" + std::to_string(r.npcol);
}

void print_header(const BenchOptions& o) {
  std::printf(
      "kernel %s, gamma = 1/d, block size %d, exp lanes: %s, OpenBLAS core: %s, best of "
      "%d runs; rates per rank\n",
      o.kernel.c_str(), o.block_size, simd_level_name(best_simd_level()).c_str(),
      linalg::blas_core().c_str(), o.repeat);
  const std::string note = linalg::blas_core_note(linalg::blas_core(), best_simd_level());
  if (!note.empty()) std::printf("note: %s\n", note.c_str());
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

// Every phase beside its bound: the time this machine needs at least, from
// the rates measured in the same run (flops at the square dgemm rate, bytes at
// the streaming rate).
void print_bounds(const Row& r) {
  std::printf("\n  n = %lld, d = %lld, %d ranks (%s): square dgemm %.1f GFlop/s, read %.1f GB/s, "
              "read+write %.1f GB/s per rank\n",
              static_cast<long long>(r.n), static_cast<long long>(r.d), r.ranks,
              grid_name(r).c_str(), r.square_gflops, r.read_gbs, r.stream_gbs);
  std::printf("  %-36s %9s %9s %7s\n", "phase", "time s", "bound s", "bound%");
  auto line = [](const std::string& name, double t, double bound) {
    if (bound > 0)
      std::printf("  %-36s %9.3f %9.3f %6.0f%%\n", name.c_str(), t, bound, 100 * bound / t);
    else
      std::printf("  %-36s %9.3f %9s %7s\n", name.c_str(), t, "0", "-");
  };
  line("allocate + zero pass (before)", r.alloc_zero_s, 0);
  line("allocate, calloc (DistMatrix)", r.alloc_calloc_s, 0);
  line("allocate, uninitialized", r.alloc_uninit_s, 0);
  line("assemble", r.assemble_s, r.assemble_bound_s);
  line("assemble with fused sums", r.assemble_fused_s, r.assemble_bound_s);
  line("center, two passes", r.center_s, r.center_bound_s);
  line("center from assembly's sums", r.center_fused_s, r.center_fused_bound_s);
  line("assemble, lower blocks, first", r.assemble_lower_first_s, r.assemble_bound_s / 2);
  line("assemble, lower blocks", r.assemble_lower_s, r.assemble_bound_s / 2);
  line("center from sums, lower blocks", r.center_lower_s, r.center_fused_bound_s / 2);
  line("trace + Frobenius norm (2 read passes)", r.norms_s, 2 * 8 * r.entries_per_rank / (r.read_gbs * 1e9));
  for (const ProductRow& p : r.products) {
    char name[96];
    std::snprintf(name, sizeof name, "K X, w = %d, pdgemm (%.1f GF/s)", p.width, p.gflops_pdgemm);
    line(name, p.pdgemm_s, p.bound_s);
    std::snprintf(name, sizeof name, "K X, w = %d, local (%.1f GF/s)", p.width, p.gflops_local);
    line(name, p.local_s, p.bound_s);
    std::snprintf(name, sizeof name, "K X, w = %d, lower blocks (%.1f GF/s)", p.width,
                  p.gflops_lower);
    line(name, p.lower_s, p.lower_bound_s);
  }
  for (const SolveRow& s : r.solves) {
    char name[96];
    std::snprintf(name, sizeof name, "solve b = %d, %s (%d products)", s.block, s.product.c_str(),
                  s.matvecs);
    line(name, s.seconds, s.bound_s);
  }
  std::fflush(stdout);
}

void write_csv(const std::string& path, const std::vector<Row>& rows, const BenchOptions& o) {
  std::ofstream out(path);
  out << "n,d,ranks,grid,kernel,block_size,dgemm_s,dgemm_gflops_per_rank,stream_s,"
         "stream_gbs_per_rank,assemble_s,assemble_gflops_per_rank,assemble_pct_of_dgemm,"
         "center_s,center_gbs_per_rank,center_pct_of_stream,square_gflops_per_rank,"
         "read_gbs_per_rank,alloc_zero_pass_s,alloc_calloc_s,alloc_uninitialized_s,assemble_fused_s,"
         "center_fused_s,assemble_bound_s,center_bound_s,center_fused_bound_s,assemble_lower_first_s,"
         "assemble_lower_s,center_lower_s,products,solves\n";
  char line[512];
  for (const Row& r : rows) {
    std::snprintf(line, sizeof line,
                  "%lld,%lld,%d,%s,%s,%d,%.4f,%.2f,%.4f,%.2f,%.4f,%.2f,%.1f,%.4f,%.2f,%.1f\n",
                  static_cast<long long>(r.n), static_cast<long long>(r.d), r.ranks,
                  grid_name(r).c_str(), o.kernel.c_str(), o.block_size, r.dgemm_s,
                  r.dgemm_gflops, r.stream_s, r.stream_gbs, r.assemble_s, r.assemble_gflops,
                  100 * r.assemble_gflops / r.dgemm_gflops, r.center_s, r.center_gbs,
                  100 * r.center_gbs / r.stream_gbs);
    std::string text = line;
    text.pop_back();  // the newline
    std::snprintf(line, sizeof line,
                  ",%.2f,%.2f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,",
                  r.square_gflops, r.read_gbs, r.alloc_zero_s, r.alloc_calloc_s, r.alloc_uninit_s,
                  r.assemble_fused_s, r.center_fused_s, r.assemble_bound_s, r.center_bound_s,
                  r.center_fused_bound_s, r.assemble_lower_first_s, r.assemble_lower_s,
                  r.center_lower_s);
    text += line;
    // Products and solves as "w:pdgemm_s:local_s:bound_s:lower_s:lower_bound_s" and
    // "b:product:seconds:matvecs:bound_s", separated by spaces.
    std::string list;
    for (const ProductRow& p : r.products) {
      std::snprintf(line, sizeof line, "%s%d:%.4f:%.4f:%.4f:%.4f:%.4f", list.empty() ? "" : " ",
                    p.width, p.pdgemm_s, p.local_s, p.bound_s, p.lower_s, p.lower_bound_s);
      list += line;
    }
    text += list + ",";
    list.clear();
    for (const SolveRow& s : r.solves) {
      std::snprintf(line, sizeof line, "%s%d:%s:%.4f:%d:%.4f", list.empty() ? "" : " ", s.block,
                    s.product.c_str(), s.seconds, s.matvecs, s.bound_s);
      list += line;
    }
    out << text << list << "\n";
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
      if (world.is_root()) print_bounds(rows.back());
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
