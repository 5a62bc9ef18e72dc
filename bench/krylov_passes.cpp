// Passes over K that each top-k eigensolver needs for the same residual, on
// the same centered kernel matrices, in one run:
//   - krylov: the library's block Krylov solver, for each --krylov b x q
//     (block width b, blocks per cycle q; 0 for the library's default);
//   - lobpcg: block LOBPCG without preconditioner (bench/lobpcg.cpp), for
//     each --lobpcg guard (block k + guard);
//   - chebyshev: Chebyshev-filtered subspace iteration (bench/cheb_fsi.cpp),
//     for each --chebyshev guard:first:max (block k + guard, first filter
//     degree, degree cap).
// One pass = one block product K X (K read once, whatever the width of X);
// matvecs = the columns of X summed over the products. Residuals are
// recomputed here (||K v - theta v|| / ||K||_2 with ||K||_2 = lambda_1 of
// the reference, K being positive semidefinite), eigenvalue errors are against
// pdsyevd on the same matrix (max_i |theta_i - lambda_i| / lambda_i); above
// --evd-max the reference is a tighter krylov solve, named in the output.
// Data: the library's generated sets (seed 1), rbf with gamma = 1/d,
// assembled and centered as `kembed kpca` does.
//
//   mpirun -np 2 kembed_bench_krylov_passes [--n 4000,8000] [--sets gaussian:64,swissroll:3]
//       [--k 10] [--tols 1e-12,1e-8,1e-6] [--krylov 0x0,16x8,...]
//       [--chebyshev 6:10:36,...] [--lobpcg 6,14] [--block-size 64] [--evd-max 4000]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "cheb_fsi.hpp"
#include "kembed/core/error.hpp"
#include "kembed/distribute/read_distributed.hpp"
#include "kembed/io/synthetic.hpp"
#include "kembed/kernel/assemble.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/linalg/scalapack.hpp"
#include "kembed/mpi/comm.hpp"
#include "kembed/mpi/session.hpp"
#include "kembed/spectral/centering.hpp"
#include "kembed/spectral/krylov.hpp"
#include "kembed/spectral/residuals.hpp"
#include "lobpcg.hpp"

namespace po = boost::program_options;
using namespace kembed;
using namespace kembed::spectral;

namespace {

struct DataSet {
  io::Dataset dataset;
  std::int64_t d;
};

struct BenchOptions {
  std::vector<std::int64_t> sizes;
  std::vector<DataSet> sets;
  std::vector<double> tols;
  std::vector<std::pair<int, int>> krylov;  // (b, q), 0 = library default
  std::vector<bench::ChebSettings> chebyshev;
  std::vector<int> lobpcg;                   // guard vectors per run
  int k = 10;
  int block_size = 64;
  std::int64_t evd_max = 4000;
  bool help = false;
  std::string usage;
};

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, sep))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

long long to_int(const std::string& word, const std::string& option, long long min) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(word, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != word.size() || v < min)
    throw Error("--" + option + ": '" + word + "' is not an integer >= " + std::to_string(min));
  return v;
}

// Every rank parses the same command line, so every rank throws the same Error.
BenchOptions parse_options(int argc, char** argv) {
  po::options_description desc("kembed_bench_krylov_passes options");
  desc.add_options()("help,h", "this help")
      ("n", po::value<std::string>()->default_value("4000,8000"), "matrix sizes, comma separated")
      ("sets", po::value<std::string>()->default_value("gaussian:64,swissroll:3"),
       "data sets as name:d, comma separated")
      ("k", po::value<int>()->default_value(10), "wanted eigenpairs")
      ("tols", po::value<std::string>()->default_value("1e-12,1e-8,1e-6"), "tolerances")
      ("krylov", po::value<std::string>()->default_value("0x0,16x8,24x8,32x8,48x6"),
       "krylov runs as b x q (0: the library's default)")
      ("chebyshev", po::value<std::string>()->default_value("14:10:36,30:10:36"),
       "chebyshev runs as guard:first-degree:max-degree")
      ("lobpcg", po::value<std::string>()->default_value("14,22"),
       "lobpcg runs as guard vectors, comma separated ('' for none)")
      ("evd-max", po::value<long long>()->default_value(4000),
       "largest n whose reference is pdsyevd (above: krylov at tol 1e-13, b = 32, q = 12)")
      ("block-size", po::value<int>()->default_value(64), "block-cyclic block size");
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
  o.k = vm["k"].as<int>();
  o.block_size = vm["block-size"].as<int>();
  o.evd_max = vm["evd-max"].as<long long>();
  if (o.k < 1) throw Error("--k must be at least 1");
  if (o.block_size < 1) throw Error("--block-size must be at least 1");
  for (const auto& w : split(vm["n"].as<std::string>(), ',')) o.sizes.push_back(to_int(w, "n", 2));
  for (const auto& w : split(vm["sets"].as<std::string>(), ',')) {
    const auto parts = split(w, ':');
    if (parts.size() != 2) throw Error("--sets: '" + w + "' is not name:d");
    o.sets.push_back({io::parse_dataset(parts[0]), to_int(parts[1], "sets", 1)});
  }
  for (const auto& w : split(vm["tols"].as<std::string>(), ',')) {
    double t = 0;
    try {
      t = std::stod(w);
    } catch (const std::exception&) {
      t = 0;
    }
    if (!(t > 0 && t < 1)) throw Error("--tols: '" + w + "' is not in (0, 1)");
    o.tols.push_back(t);
  }
  for (const auto& w : split(vm["krylov"].as<std::string>(), ',')) {
    const auto parts = split(w, 'x');
    if (parts.size() != 2) throw Error("--krylov: '" + w + "' is not b x q");
    o.krylov.emplace_back(to_int(parts[0], "krylov", 0), to_int(parts[1], "krylov", 0));
  }
  for (const auto& w : split(vm["lobpcg"].as<std::string>(), ','))
    o.lobpcg.push_back(static_cast<int>(to_int(w, "lobpcg", 0)));
  for (const auto& w : split(vm["chebyshev"].as<std::string>(), ',')) {
    const auto parts = split(w, ':');
    if (parts.size() != 3) throw Error("--chebyshev: '" + w + "' is not guard:first:max");
    bench::ChebSettings c;
    c.guard = static_cast<int>(to_int(parts[0], "chebyshev", 0));
    c.first_degree = static_cast<int>(to_int(parts[1], "chebyshev", 1));
    c.max_degree = static_cast<int>(to_int(parts[2], "chebyshev", 1));
    o.chebyshev.push_back(c);
  }
  return o;
}

template <class F>
double time_on_slowest_rank(const Comm& comm, F&& body) {
  comm.barrier();
  const auto start = std::chrono::steady_clock::now();
  body();
  const std::chrono::duration<double> local = std::chrono::steady_clock::now() - start;
  return comm.max(local.count());
}

// The centered rbf kernel of a generated set, as `kembed kpca` builds it.
DistMatrix centered_kernel(const BlacsGrid& grid, const DataSet& set, std::int64_t n, int nb) {
  auto file = io::synthetic_matrix(grid.comm(), {set.dataset, n, set.d, 1});
  DistMatrix k = DistMatrix::uninitialized(grid, n, n, nb, nb);
  const auto row_panel = distribute::read_panel(*file, k.row_dist());
  const auto col_panel = distribute::read_panel(*file, k.col_dist());
  const kernel::Kernel rbf = kernel::Kernel{kernel::KernelType::rbf}.with_default_gamma(set.d);
  kernel::LocalSums sums;
  kernel::assemble_kernel(rbf, row_panel, col_panel, static_cast<int>(set.d), k, &sums);
  center_kernel(k, sums);
  return k;
}

struct Row {
  std::string method, setting;
  double tol = 0;
  int passes = 0, iterations = 0;
  long long matvecs = 0;
  double seconds = 0, residual = 0, eig_error = 0;
  bool converged = false;
};

struct Reference {
  std::vector<double> top;  // k + 1 largest eigenvalues of pdsyevd, descending
  double seconds = 0;
  std::string solver;
};

// pdsyevd's eigenvalues up to --evd-max (an O(n^3) solve); above it the
// library's krylov solver at tol 1e-13 with a larger basis than any run
// measured (its eigenvalues agree with pdsyevd's to about 1e-15 where both
// ran), so a sweep stays within minutes.
Reference reference(const DistMatrix& k_in, int k, std::int64_t evd_max) {
  const std::int64_t n = k_in.rows();
  const int nb = k_in.row_dist().block_size();
  Reference r;
  if (n > evd_max) {
    KrylovSettings s;
    s.tol = 1e-13;
    s.block = 32;
    s.depth = 12;
    KrylovResult kr{{}, DistMatrix(k_in.grid(), 0, 0, 1, 1), {}, 0, 0, 0, false, {}};
    r.seconds = time_on_slowest_rank(k_in.grid().comm(), [&] { kr = krylov_top_eigenpairs(k_in, k + 1, s); });
    r.top = kr.values;
    r.solver = kr.converged ? "krylov tol 1e-13 b=32 q=12" : "krylov (NOT converged to 1e-13)";
    return r;
  }
  DistMatrix a(k_in.grid(), n, n, nb, nb), z(k_in.grid(), n, n, nb, nb);
  copy(k_in, 0, 0, n, n, a, 0, 0);
  std::vector<double> ascending;
  r.seconds = time_on_slowest_rank(k_in.grid().comm(), [&] { ascending = scalapack::syevd(a, z); });
  for (int j = 0; j <= k && j < n; ++j) r.top.push_back(ascending[n - 1 - j]);
  r.solver = "pdsyevd";
  return r;
}

void evaluate(const DistMatrix& kmat, const Reference& ref, const std::vector<double>& values,
              const DistMatrix& vectors, Row& row) {
  const std::vector<double> res = residual_norms(kmat, vectors, values);
  row.residual = row.eig_error = 0;
  for (std::size_t j = 0; j < values.size(); ++j) {
    row.residual = std::max(row.residual, res[j] / ref.top[0]);
    row.eig_error = std::max(row.eig_error, std::abs(values[j] - ref.top[j]) / std::abs(ref.top[j]));
  }
}

std::string matrix_name(const DataSet& set, std::int64_t n) {
  return io::dataset_name(set.dataset) + " d=" + std::to_string(set.d) + " n=" + std::to_string(n);
}

void print_header() {
  std::printf("| matrix | tol | method | setting | passes | matvecs | time s | max res/‖K‖₂ | "
              "max eig err | iters |\n|---|---|---|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
}

void print_row(const std::string& matrix, const Row& r) {
  std::printf("| %s | %.0e | %s | %s | %d | %lld | %.2f | %.1e | %.1e | %d%s |\n", matrix.c_str(),
              r.tol, r.method.c_str(), r.setting.c_str(), r.passes, r.matvecs, r.seconds,
              r.residual, r.eig_error, r.iterations, r.converged ? "" : " (not converged)");
  std::fflush(stdout);
}

void measure(const Comm& world, const BenchOptions& o, const DataSet& set, std::int64_t n) {
  BlacsGrid grid(world);
  DistMatrix kmat = centered_kernel(grid, set, n, o.block_size);
  const Reference ref = reference(kmat, o.k, o.evd_max);
  const std::string name = matrix_name(set, n);
  if (world.is_root()) {
    std::printf("\n%s: reference %s %.1f s, lambda_1 = %.6g, lambda_%d / lambda_1 = %.4g, "
                "lambda_%d / lambda_%d = %.4g\n\n",
                name.c_str(), ref.solver.c_str(), ref.seconds, ref.top[0], o.k, ref.top[o.k - 1] / ref.top[0], o.k + 1,
                o.k, ref.top[o.k] / ref.top[o.k - 1]);
    print_header();
  }
  for (double tol : o.tols) {
    auto run_krylov = [&](int b, int q) {
      KrylovSettings s;
      s.tol = tol;
      s.block = b;
      s.depth = q;
      KrylovResult r{{}, DistMatrix(grid, 0, 0, 1, 1), {}, 0, 0, 0, false, {}};
      Row row;
      row.tol = tol;
      row.method = "krylov";
      const int bw = krylov_block_width(o.k, s), qd = krylov_depth(bw, s, kmat.rows());
      row.setting = "b=" + std::to_string(bw) + " q=" + std::to_string(qd) +
                    (b == 0 && q == 0 ? " (default)" : "");
      row.seconds = time_on_slowest_rank(world, [&] {
        r = krylov_top_eigenpairs(kmat, o.k, s);
      });
      row.passes = r.matvecs;
      row.matvecs = static_cast<long long>(r.matvecs) * std::max(o.k, bw);
      row.iterations = r.cycles;
      row.converged = r.converged;
      evaluate(kmat, ref, r.values, r.vectors, row);
      if (world.is_root()) print_row(name, row);
    };
    for (const auto& [b, q] : o.krylov) run_krylov(b, q);
    for (bench::ChebSettings c : o.chebyshev) {
      c.tol = tol;
      bench::ChebResult r{{}, DistMatrix(grid, 0, 0, 1, 1), 0, 0, 0, false};
      Row row;
      row.tol = tol;
      row.method = "chebyshev";
      row.setting = "s=" + std::to_string(o.k + c.guard) + " m0=" + std::to_string(c.first_degree) +
                    " mmax=" + std::to_string(c.max_degree);
      row.seconds = time_on_slowest_rank(world, [&] { r = bench::chebyshev_top_eigenpairs(kmat, o.k, c); });
      row.passes = r.passes;
      row.matvecs = r.matvecs;
      row.iterations = r.iterations;
      row.converged = r.converged;
      evaluate(kmat, ref, r.values, r.vectors, row);
      if (world.is_root()) print_row(name, row);
    }
    for (int guard : o.lobpcg) {
      bench::LobpcgSettings l;
      l.tol = tol;
      l.guard = guard;
      bench::LobpcgResult r{{}, DistMatrix(grid, 0, 0, 1, 1), 0, 0, 0, false};
      Row row;
      row.tol = tol;
      row.method = "lobpcg";
      row.setting = "s=" + std::to_string(o.k + guard);
      row.seconds = time_on_slowest_rank(world, [&] { r = bench::lobpcg_top_eigenpairs(kmat, o.k, l); });
      row.passes = r.passes;
      row.matvecs = r.matvecs;
      row.iterations = r.iterations;
      row.converged = r.converged;
      evaluate(kmat, ref, r.values, r.vectors, row);
      if (world.is_root()) print_row(name, row);
    }
  }
}

int run(int argc, char** argv) {
  const Comm world = Comm::world();
  BenchOptions o;
  collectively(world, [&] { o = parse_options(argc, argv); });
  if (o.help) {
    if (world.is_root()) std::cout << o.usage;
    return 0;
  }
  if (world.is_root())
    std::printf("top %d of the centered rbf kernel (gamma = 1/d), %d ranks, block size %d; "
                "passes = block products K X, matvecs = columns multiplied\n",
                o.k, world.size(), o.block_size);
  for (const DataSet& set : o.sets)
    for (std::int64_t n : o.sizes) measure(world, o, set, n);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  kembed::MpiSession mpi(argc, argv);
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    if (Comm::world().is_root()) std::cerr << "kembed_bench_krylov_passes: error: " << e.what() << "\n";
    return 1;
  }
}
