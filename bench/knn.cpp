// The two halves of `kembed spectral --affinity knn`, timed apart (bench/knn.sh):
//   search FILE...: the K-nearest-neighbour lists by the k-d tree and by the
//     scan (nearest_neighbors, the slowest rank's time, best of --repeat),
//     whether both agree, then the symmetrized rows and their statistics;
//   solve FILE: the top k+1 eigenpairs of D^(-1/2) W D^(-1/2) of the kNN
//     graph by top_affinity_eigenpairs, for each --variant
//     (deflate,rough_cycles,degree,block,rough_tol,depth; 0 keeps the default), with its
//     products of M, cycles and time;
//   product FILE: the time of one product of M with a block;
//   multigrid FILE: the k pairs below the top one by LOBPCG with the graph's
//     multigrid (the default solver), its levels, iterations and time.
//
//   mpirun -np 2 kembed_bench_knn search FILE... [--neighbors 9] [--repeat 1] [--no-scan]
//   mpirun -np 2 kembed_bench_knn product FILE [--width 12] [--repeat 50] [--no-relabel]
//   mpirun -np 2 kembed_bench_knn solve FILE [--neighbors 9] [-k 2] [--no-relabel]
//       [--variant 1,2,0,0]...   (the Chebyshev filter's variants)
//   mpirun -np 2 kembed_bench_knn multigrid FILE [--neighbors 9] [-k 2] [--guard 2]
//       [--alpha 1.5] [--smoothing 1] [--omega 0.667] [--coarsest 1500] [--gather 20000]
//       [--tol 1e-12] [--seed 42] [--progress]
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kembed/core/error.hpp"
#include "kembed/graph/neighbors.hpp"
#include "kembed/graph/sparse_rows.hpp"
#include "kembed/graph/sparse_rows_stats.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/mpi/comm.hpp"
#include "kembed/mpi/session.hpp"
#include "kembed/spectral/affinity_eigenpairs.hpp"
#include "kembed/graph/graph_multigrid.hpp"
#include "kembed/spectral/laplacian_preconditioner.hpp"
#include "kembed/spectral/lobpcg.hpp"
#include "kembed/spectral/normalized_affinity.hpp"

using namespace kembed;

namespace {

template <class F>
double timed(const Comm& comm, F&& body) {
  comm.barrier();
  const double t0 = Comm::wtime();
  body();
  return comm.max(Comm::wtime() - t0);
}

bool same(const graph::NeighborLists& a, const graph::NeighborLists& b) {
  if (a.offsets != b.offsets || a.lists.size() != b.lists.size()) return false;
  for (std::size_t t = 0; t < a.lists.size(); ++t)
    if (a.lists[t].index != b.lists[t].index || a.lists[t].distance != b.lists[t].distance)
      return false;
  return true;
}

// As fit_knn lays the rows out: one block per rank when the vertices are in
// spatial order, else blocks of 64.
int rows_block(std::int64_t n, const std::vector<std::int64_t>& label, const Comm& comm) {
  return label.empty() ? 64 : static_cast<int>(std::max<std::int64_t>(64, (n + comm.size() - 1) / comm.size()));
}

// The kNN lists of the points in `path` (K - 1 = `neighbors` others) and,
// with `relabel` and the tree, the vertices' numbers in its order.
struct Listed {
  std::unique_ptr<io::MatrixFile> file;
  graph::NeighborLists lists;
  std::vector<std::int64_t> label;
  std::int64_t n() const { return file->rows(); }
};

Listed listed(const std::string& path, int neighbors, bool relabel, const Comm& comm) {
  Listed g;
  g.file = io::open_matrix_file(comm, path);
  graph::NeighborSettings s;
  s.neighbors = neighbors;
  g.lists = graph::nearest_neighbors(*g.file, *g.file, s, true, comm);
  if (relabel && !g.lists.spatial_order.empty()) {
    g.label.resize(g.lists.spatial_order.size());
    for (std::size_t t = 0; t < g.label.size(); ++t) g.label[g.lists.spatial_order[t]] = std::int64_t(t);
  }
  return g;
}

// sqrt(degree) / ||sqrt(degree)||: M's eigenvector of eigenvalue 1 (this rank's rows).
std::vector<double> top_vector(const spectral::NormalizedAffinity& m, const Comm& comm) {
  std::vector<double> top;
  for (double d : m.degrees()) top.push_back(std::sqrt(d));
  double norm = 0;
  for (double t : top) norm += t * t;
  norm = std::sqrt(comm.sum(norm));
  for (double& t : top) t /= norm;
  return top;
}

}  // namespace

int main(int argc, char** argv) {
  MpiSession mpi(argc, argv);
  const Comm comm = Comm::world();
  std::vector<std::string> files, variants;
  std::string mode = argc > 1 ? argv[1] : "";
  int neighbors = 9, repeat = 1, k = 2, width = 12;
  bool scan = true, relabel = true;
  graph::MultigridSettings mgs;
  spectral::LobpcgSettings ls;
  for (int a = 2; a < argc; ++a) {
    const std::string s = argv[a];
    if (s == "--neighbors") neighbors = std::stoi(argv[++a]);
    else if (s == "--repeat") repeat = std::stoi(argv[++a]);
    else if (s == "-k") k = std::stoi(argv[++a]);
    else if (s == "--width") width = std::stoi(argv[++a]);
    else if (s == "--no-scan") scan = false;
    else if (s == "--no-relabel") relabel = false;
    else if (s == "--variant") variants.push_back(argv[++a]);
    else if (s == "--coarsest") mgs.coarsest = std::stoll(argv[++a]);
    else if (s == "--progress")
      ls.progress = [](int it, int c, int k, double r) { if (Comm::world().is_root()) std::printf("it %d conv %d/%d worst %.2e\n", it, c, k, r); };
    else if (s == "--seed") ls.seed = std::stoull(argv[++a]);
    else if (s == "--gather") mgs.gather = std::stoll(argv[++a]);
    else if (s == "--smoothing") mgs.smoothing = std::stoi(argv[++a]);
    else if (s == "--omega") mgs.jacobi_weight = std::stod(argv[++a]);
    else if (s == "--alpha") mgs.correction_weight = std::stod(argv[++a]);
    else if (s == "--guard") ls.guard = std::stoi(argv[++a]);
    else if (s == "--tol") ls.tol = std::stod(argv[++a]);
    else files.push_back(s);
  }
  try {
    if (mode == "search") {
      if (comm.is_root()) std::printf("| file | n | d | K | tree s | scan s | equal | symmetrize s | stats s |\n|---|---|---|---|---|---|---|---|---|\n");
      for (const auto& path : files) {
        auto file = io::open_matrix_file(comm, path);
        graph::NeighborSettings s;
        s.neighbors = neighbors;
        s.search = graph::NeighborSearch::tree;
        graph::NeighborLists tree, brute;
        double t_tree = 1e300, t_scan = -1, t_sym = 0, t_stats = 0;
        for (int r = 0; r < repeat; ++r)
          t_tree = std::min(t_tree, timed(comm, [&] {
                              tree = graph::nearest_neighbors(*file, *file, s, true, comm);
                            }));
        std::string equal = "-";
        if (scan) {
          s.search = graph::NeighborSearch::brute;
          t_scan = timed(comm, [&] { brute = graph::nearest_neighbors(*file, *file, s, true, comm); });
          equal = comm.min(same(tree, brute) ? 1.0 : 0.0) > 0 ? "yes" : "NO";
        }
        std::optional<graph::SparseRows> w;
        t_sym = timed(comm, [&] { w = graph::symmetrized_rows(file->rows(), 64, tree, comm); });
        t_stats = timed(comm, [&] { graph::graph_stats(*w, comm); });
        if (comm.is_root())
          std::printf("| %s | %lld | %lld | %d | %.3f | %s | %s | %.3f | %.3f |\n", path.c_str(),
                      (long long)file->rows(), (long long)file->cols(), neighbors, t_tree,
                      t_scan < 0 ? "-" : std::to_string(t_scan).c_str(), equal.c_str(), t_sym,
                      t_stats);
      }
    } else if (mode == "product") {
      // Time per product of M with a block of --width columns, vertices in the
      // tree's order or (--no-relabel) in the file's.
      const Listed g = listed(files.at(0), neighbors, relabel, comm);
      BlacsGrid grid(comm);
      spectral::NormalizedAffinity m(
          graph::symmetrized_rows(g.n(), rows_block(g.n(), g.label, comm), g.lists, comm, g.label), grid);
      const int rows = std::max(1, m.rows().local_size());
      std::vector<double> x(std::size_t(rows) * width, 1.0), y(x.size());
      const double t = timed(comm, [&] {
        for (int r = 0; r < repeat; ++r) m.apply(x.data(), rows, width, y.data(), rows);
      });
      if (comm.is_root())
        std::printf("n %lld width %d relabelled %d: %.2f ms per product\n",
                    (long long)g.n(), width, relabel ? 1 : 0, 1e3 * t / repeat);
    } else if (mode == "solve") {
      const Listed g = listed(files.at(0), neighbors, relabel, comm);  // numbered as fit_knn does
      BlacsGrid grid(comm);
      if (variants.empty()) variants.push_back("1,0,0,0");
      if (comm.is_root())
        std::printf("| variant (deflate,rough cycles,degree,block,rough tol,depth) | products | cycles | solve s | eigenvalues 1 - mu | note |\n|---|---|---|---|---|---|\n");
      for (const auto& v : variants) {
        spectral::AffinitySolve how;
        int f[4] = {0, 0, 0, 0};
        double rough_tol = 0;
        int depth = 0;
        std::sscanf(v.c_str(), "%d,%d,%d,%d,%lf,%d", &f[0], &f[1], &f[2], &f[3], &rough_tol, &depth);
        how.depth = depth;
        if (rough_tol > 0) how.rough_tol = rough_tol;
        how.method = spectral::AffinityMethod::filter;  // the variants are the filter's
        how.deflate = f[0] != 0;
        if (f[1] > 0) how.rough_cycles = f[1];
        how.degree = f[2];
        how.block = f[3];
        spectral::NormalizedAffinity m(
            graph::symmetrized_rows(g.n(), rows_block(g.n(), g.label, comm), g.lists, comm, g.label), grid);
        const std::vector<double> top = top_vector(m, comm);
        spectral::KrylovSettings ks;
        spectral::AffinityEigenpairs pairs;
        const double t = timed(comm, [&] {
          pairs = spectral::top_affinity_eigenpairs(m, k + 1, ks, how,
                                                    how.deflate ? top : std::vector<double>{});
        });
        if (comm.is_root()) {
          std::string ev;
          for (double mu : pairs.values) ev += (ev.empty() ? "" : ", ") + std::to_string(1 - mu);
          std::printf("| %s | %lld | %d | %.2f | %s | %s%s |\n", v.c_str(), pairs.products,
                      pairs.cycles, t, ev.c_str(), pairs.note.c_str(),
                      pairs.converged ? "" : " NOT CONVERGED");
          std::fflush(stdout);
        }
      }
    } else if (mode == "multigrid") {
      // LOBPCG with the graph multigrid (--coarsest, --smoothing, --omega,
      // --alpha, --guard, --tol).
      const Listed g = listed(files.at(0), neighbors, relabel, comm);
      BlacsGrid grid(comm);
      graph::SparseRows w =
          graph::symmetrized_rows(g.n(), rows_block(g.n(), g.label, comm), g.lists, comm, g.label);
      std::optional<graph::GraphMultigrid> mg;
      const double t_setup = timed(comm, [&] { mg.emplace(w, comm, mgs); });
      spectral::NormalizedAffinity m(std::move(w), grid);
      const std::vector<double> top = top_vector(m, comm);
      spectral::NormalizedLaplacianPreconditioner pre(*mg);
      spectral::LobpcgResult r;
      const double t = timed(comm, [&] { r = spectral::lobpcg_top_eigenpairs(m, k, pre, ls, top); });
      if (comm.is_root()) {
        std::string sizes, ev, res;
        for (auto z : mg->level_sizes()) sizes += (sizes.empty() ? "" : " ") + std::to_string(z);
        for (double mu : r.values) ev += (ev.empty() ? "" : ", ") + std::to_string(1 - mu);
        char buf[64];
        for (double e : r.residuals) std::snprintf(buf, sizeof buf, "%s%.1e", res.empty() ? "" : " ", e), res += buf;
        std::printf("levels [%s] setup %.2f s; lobpcg %d iterations, %lld products, %.2f s; 1 - mu: %s; residuals %s%s\n",
                    sizes.c_str(), t_setup, r.iterations, r.products, t, ev.c_str(), res.c_str(),
                    r.converged ? "" : " NOT CONVERGED");
      }
    } else {
      throw Error("usage: kembed_bench_knn search|solve FILE... (see bench/knn.cpp)");
    }
  } catch (const Error& e) {
    if (comm.is_root()) std::fprintf(stderr, "kembed_bench_knn: %s\n", e.what());
    return 1;
  }
  return 0;
}
