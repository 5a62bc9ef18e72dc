#include "kembed/spectral/laplacian_eigenmaps.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <memory>
#include <sstream>

#include "kembed/core/error.hpp"
#include "kembed/distribute/read_distributed.hpp"
#include "kembed/graph/neighbors.hpp"
#include "kembed/graph/sparse_rows.hpp"
#include "kembed/graph/sparse_rows_stats.hpp"
#include "kembed/kernel/assemble.hpp"
#include "kembed/kernel/kernel.hpp"
#include "kembed/spectral/isomap.hpp"
#include "kembed/spectral/normalized_affinity.hpp"
#include "kembed/spectral/residuals.hpp"
#include "kembed/spectral/spectral_step.hpp"

namespace kembed::spectral {

Affinity parse_affinity(const std::string& name) {
  if (name == "rbf") return Affinity::rbf;
  if (name == "knn" || name == "nearest_neighbors") return Affinity::knn;
  throw Error("unknown affinity '" + name + "' (expected rbf or knn)");
}

std::string affinity_name(Affinity affinity) { return affinity == Affinity::rbf ? "rbf" : "knn"; }

namespace {

// Separation of the leading eigenvalue 1 from the next below which the
// affinity graph counts as disconnected: the embedding directions are then
// any mix of the components' indicator vectors.
constexpr double kConnectedGap = 1e-12;

// W with a zero diagonal: rbf from the points, or the knn weights from g.
void assemble_affinity(double gamma, const std::vector<double>& row_panel,
                       const std::vector<double>& col_panel, int d, const graph::Graph* g,
                       DistMatrix& w) {
  if (g) {
    std::fill(w.data(), w.data() + std::size_t(w.ld()) * w.local_cols(), 0.0);
    for (int li = 0; li < w.local_rows(); ++li) {
      const std::int64_t i = w.row_dist().to_global(li);
      for (std::int64_t t = g->offsets[i]; t < g->offsets[i + 1]; ++t)
        if (w.col_dist().is_local(g->targets[t]))
          w.local(li, w.col_dist().to_local(g->targets[t])) = 0.5 * g->listed[t];
    }
    return;
  }
  kernel::Kernel rbf;
  rbf.type = kernel::KernelType::rbf;
  rbf.gamma = gamma;
  kernel::assemble_kernel(rbf, row_panel, col_panel, d, w);
  for (int li = 0; li < w.local_rows(); ++li) {
    const std::int64_t i = w.row_dist().to_global(li);
    if (w.col_dist().is_local(i)) w.local(li, w.col_dist().to_local(i)) = 0;
  }
}

// Degrees: distributed row sums of W (a length-n sum over the grid).
std::vector<double> row_sums(const DistMatrix& w) {
  std::vector<double> deg(static_cast<std::size_t>(w.rows()), 0.0);
  for (int lj = 0; lj < w.local_cols(); ++lj)
    for (int li = 0; li < w.local_rows(); ++li) deg[w.row_dist().to_global(li)] += w.local(li, lj);
  w.grid().comm().sum_in_place(deg);
  return deg;
}

// W <- D^(-1/2) W D^(-1/2).
void normalize(DistMatrix& w, const std::vector<double>& inv_sqrt_degree) {
  for (int lj = 0; lj < w.local_cols(); ++lj) {
    const double cj = inv_sqrt_degree[w.col_dist().to_global(lj)];
    for (int li = 0; li < w.local_rows(); ++li)
      w.local(li, lj) *= cj * inv_sqrt_degree[w.row_dist().to_global(li)];
  }
}

}  // namespace

int resolved_neighbors(std::int64_t n, const LaplacianEigenmapsSettings& settings) {
  return settings.neighbors > 0
             ? settings.neighbors
             : static_cast<int>(std::min<std::int64_t>(std::max<std::int64_t>(n / 10, 1), INT_MAX));
}

std::string spectral_embedding_request_error(std::int64_t n,
                                             const LaplacianEigenmapsSettings& settings,
                                             const std::string& source) {
  const int k = settings.components;
  if (k + 1 > n)
    return "--components " + std::to_string(k) + " needs at least " + std::to_string(k + 1) +
           " points (the trivial eigenvector is dropped), found " + std::to_string(n) + " in " +
           source;
  if (settings.affinity != Affinity::knn) return "";
  const int neighbors = resolved_neighbors(n, settings);
  if (neighbors < 2 || neighbors > n)
    return "--neighbors " + std::to_string(neighbors) +
           " (which counts the point itself, as scikit-learn) must be between 2 and the number "
           "of points (" + std::to_string(n) + ") in " + source;
  if (settings.solver != Solver::automatic && settings.solver != Solver::krylov)
    return "--solver " + solver_name(settings.solver) +
           " needs a dense matrix, and --affinity knn keeps the graph sparse: use --solver "
           "krylov (or auto), or --affinity rbf for the dense solvers";
  return "";
}

ProblemShape spectral_problem_shape(std::int64_t n, std::int64_t d, int nprow, int npcol,
                                    const LaplacianEigenmapsSettings& settings) {
  const int k = settings.components;
  ProblemShape shape{n, d, k + 1, nprow, npcol, settings.block_size, settings.solver};
  // rbf: the dense W from the points' panels (kept to rebuild it), no graph;
  // the degrees and their inverse square roots on every rank, rank 0's copy.
  if (settings.affinity == Affinity::rbf) shape.replicated_vectors = 3;
  if (settings.affinity == Affinity::knn) {
    shape.solver = Solver::krylov;
    shape.graph_neighbors = resolved_neighbors(n, settings);
    const int wanted = settings.knn_solve.deflate ? k : k + 1;  // the top vector deflated
    const AffinitySolve& how = settings.knn_solve;
    shape.graph_multigrid = how.method == AffinityMethod::multigrid && how.deflate;
    shape.graph_multigrid_settings = how.multigrid;
    shape.graph_filter_block = affinity_block_width(wanted, n, how);
    shape.graph_block = shape.graph_multigrid ? wanted + how.guard
                        : how.method == AffinityMethod::filter ? affinity_block_width(wanted, n, how)
                        : how.block > 0 ? how.block
                                        : krylov_block_width(wanted, settings.krylov);
  }
  return shape;
}

namespace {

// --affinity knn: the graph as sparse rows, M as an operator, the filtered
// Krylov solver; nothing of size n x n.
void fit_knn(io::MatrixFile& points, const BlacsGrid& grid,
             const LaplacianEigenmapsSettings& settings, PhaseTimer& timer,
             LaplacianEigenmapsResult& r) {
  const Comm& comm = grid.comm();
  const std::int64_t n = r.n;
  const int k = settings.components;
  const int nb = effective_block_size(settings.block_size, n);
  timer.start("graph");
  r.neighbors = resolved_neighbors(n, settings);
  graph::NeighborSettings ns;
  ns.neighbors = r.neighbors - 1;
  // The vertices numbered in the k-d tree's order when the tree searched
  // (the same numbering on any rank count): a product's reads of the block
  // then stay near each other in memory. `original` maps a number back.
  std::vector<std::int64_t> original;
  graph::SparseRows w = [&] {
    graph::NeighborLists lists = graph::nearest_neighbors(points, points, ns, true, comm);
    // Each row's last listed neighbour (index, distance), on rank 0.
    std::vector<double> last;
    for (std::size_t t = 0; t + 1 < lists.offsets.size(); ++t) {
      const graph::Neighbor& e = lists.lists[lists.offsets[t + 1] - 1];
      last.insert(last.end(), {double(lists.rows.begin + std::int64_t(t)), double(e.index),
                               e.distance});  // indices exact below 2^53
    }
    last = comm.gatherv(last);
    if (comm.is_root()) {
      r.neighbor_last.assign(std::size_t(n), -1);
      r.neighbor_radius.assign(std::size_t(n), 0.0);
      for (std::size_t t = 0; t < last.size(); t += 3) {
        r.neighbor_last[std::size_t(last[t])] = static_cast<std::int64_t>(last[t + 1]);
        r.neighbor_radius[std::size_t(last[t])] = last[t + 2];
      }
    }
    std::vector<std::int64_t> label;
    if (!lists.spatial_order.empty()) {
      original = std::move(lists.spatial_order);
      label.resize(original.size());
      for (std::size_t s = 0; s < original.size(); ++s) label[original[s]] = std::int64_t(s);
    }
    // With the vertices in spatial order, one block of rows per rank keeps
    // most neighbours on the same rank: a product fetches the rows along the
    // borders of the ranks' regions only, not most of the others' rows.
    const int rows_block = label.empty() ? nb : static_cast<int>(std::max<std::int64_t>(
                                                    nb, (n + comm.size() - 1) / comm.size()));
    return graph::symmetrized_rows(n, rows_block, lists, comm, label);
  }();
  r.graph = graph::graph_stats(w, comm);
  ns.neighbors = r.neighbors;
  agree(comm, disconnected_graph_message(*r.graph, ns, "the spectral embedding"));

  // Every point lists K - 1 >= 1 others, so every degree is at least 1/2.
  timer.start("assemble");
  // The multigrid hierarchy of the graph (a copy of its rows and the
  // coarser graphs), for the LOBPCG solve.
  std::unique_ptr<graph::GraphMultigrid> multigrid;
  if (settings.knn_solve.method == AffinityMethod::multigrid && settings.knn_solve.deflate)
    multigrid = std::make_unique<graph::GraphMultigrid>(w, comm, settings.knn_solve.multigrid);
  NormalizedAffinity m(std::move(w), grid);
  r.min_degree = m.min_degree();
  r.max_degree = m.max_degree();
  const double norm = m.frobenius_norm();

  timer.start("solve");
  // The graph is connected (agreed above), so sqrt(degree) / ||sqrt(degree)|| is
  // M's eigenvector of eigenvalue 1, known exactly: the solver deflates it.
  std::vector<double> top(m.degrees().size());
  double top_norm = 0;
  for (std::size_t i = 0; i < top.size(); ++i) top[i] = std::sqrt(m.degrees()[i]);
  for (double t : top) top_norm += t * t;
  top_norm = std::sqrt(comm.sum(top_norm));
  for (double& t : top) t /= top_norm;
  AffinityEigenpairs pairs =
      top_affinity_eigenpairs(m, k + 1, settings.krylov, settings.knn_solve, top, multigrid.get());
  r.solver_used = pairs.levels.empty() ? "krylov" : "lobpcg";
  r.solver_note = pairs.note;
  r.iterations = pairs.cycles;
  r.matvecs = static_cast<int>(pairs.products);
  agree(comm, pairs.converged ? "" : pairs.failure);
  r.affinity_eigenvalues = pairs.values;
  for (double mu : pairs.values) r.laplacian_eigenvalues.push_back(1 - mu);
  for (double res : pairs.residual_norms) r.residuals.push_back(res / norm);
  timer.start("residual");
  reject_inaccurate_pairs(comm, r.residuals, "krylov");
  if (1 - pairs.values[1] <= kConnectedGap) {
    std::ostringstream msg;
    msg.precision(17);
    msg << points.path() << ": the affinity graph is disconnected (or numerically so): the "
        << "eigenvalue 1 of D^(-1/2) W D^(-1/2) is repeated (second eigenvalue " << pairs.values[1]
        << "), so the embedding is not defined; increase --neighbors";
    agree(comm, msg.str());
  }

  // v / sqrt(degree) in M's row layout, then on rank 0 the sign rule.
  timer.start("project");
  // Each rank's rows as (global index, k values) records, gathered on rank 0.
  const int rows = m.rows().local_size(), ld = std::max(1, rows);
  // Records of (global index, degree, k values).
  std::vector<double> records;
  records.reserve(std::size_t(rows) * (k + 2));
  for (int li = 0; li < rows; ++li) {
    const std::int64_t g = m.rows().to_global(li);
    records.push_back(static_cast<double>(original.empty() ? g : original[g]));  // exact below 2^53
    records.push_back(m.degrees()[li]);
    for (int c = 0; c < k; ++c)
      records.push_back(pairs.vectors[std::size_t(c + 1) * ld + li] / std::sqrt(m.degrees()[li]));
  }
  const auto gathered = comm.gatherv(records);
  if (comm.is_root()) {
    std::vector<double> y(std::size_t(n) * k);
    r.degrees.assign(std::size_t(n), 0.0);
    for (std::size_t t = 0; t < gathered.size(); t += std::size_t(k) + 2) {
      const auto i = static_cast<std::size_t>(gathered[t]);
      r.degrees[i] = gathered[t + 1];
      std::copy_n(&gathered[t + 2], k, &y[i * k]);
    }
    r.embedding.assign(std::size_t(n) * k, 0.0);
    for (int c = 0; c < k; ++c) {
      std::int64_t arg = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const double e = y[std::size_t(i) * k + c];
        r.embedding[std::size_t(i) * k + c] = e;
        if (std::abs(e) > std::abs(r.embedding[std::size_t(arg) * k + c])) arg = i;
      }
      if (r.embedding[std::size_t(arg) * k + c] < 0)
        for (std::int64_t i = 0; i < n; ++i) r.embedding[std::size_t(i) * k + c] *= -1;
    }
  }
  timer.stop();
}

}  // namespace

LaplacianEigenmapsResult fit_laplacian_eigenmaps(io::MatrixFile& points, const BlacsGrid& grid,
                                                 const LaplacianEigenmapsSettings& settings,
                                                 PhaseTimer& timer) {
  const Comm& comm = grid.comm();
  LaplacianEigenmapsResult r;
  r.n = points.rows();
  r.d = points.cols();
  const std::int64_t n = r.n;
  const int k = settings.components, nb = settings.block_size;
  agree(comm, spectral_embedding_request_error(n, settings, points.path()));
  if (settings.affinity == Affinity::rbf) {
    r.gamma = settings.gamma > 0 ? settings.gamma : 1.0 / double(r.d);
    if (!(r.gamma > 0 && std::isfinite(r.gamma)))
      agree(comm, "--gamma must be positive and finite");
  }
  r.memory = check_memory(spectral_problem_shape(n, r.d, grid.nprow(), grid.npcol(), settings),
                          settings.max_memory_per_rank, comm);
  if (settings.affinity == Affinity::knn) {
    fit_knn(points, grid, settings, timer, r);
    return r;
  }

  std::optional<graph::Graph> g;
  if (settings.affinity == Affinity::knn) {
    timer.start("graph");
    r.neighbors = resolved_neighbors(n, settings);  // checked above
    graph::NeighborSettings ns;
    ns.neighbors = r.neighbors - 1;
    g = graph::neighborhood_graph(points, ns, comm);
    r.graph = graph::graph_stats(*g);
    ns.neighbors = r.neighbors;
    agree(comm, disconnected_graph_message(*r.graph, ns, "the spectral embedding"));
  }

  timer.start("distribute");
  DistMatrix w(grid, n, n, nb, nb);
  std::vector<double> row_panel, col_panel;
  const int d = static_cast<int>(r.d);
  if (!g) {
    row_panel = distribute::read_panel(points, w.row_dist());
    col_panel = distribute::read_panel(points, w.col_dist());
  }
  timer.start("assemble");
  const graph::Graph* gp = g ? &*g : nullptr;
  assemble_affinity(r.gamma, row_panel, col_panel, d, gp, w);
  const auto degree = row_sums(w);
  std::string error;
  std::int64_t isolated = 0, first = -1;
  for (std::int64_t i = 0; i < n; ++i)
    if (!(degree[i] > 0)) {
      ++isolated;
      if (first < 0) first = i;
    }
  if (isolated > 0)
    error = points.path() + ": " + std::to_string(isolated) +
            " points have no affinity to any other (degree 0), the first is row " +
            std::to_string(first + 1) + "; the spectral embedding needs a connected graph" +
            (g ? std::string(": increase --neighbors") : std::string(": decrease --gamma"));
  agree(comm, error);
  r.min_degree = *std::min_element(degree.begin(), degree.end());
  r.max_degree = *std::max_element(degree.begin(), degree.end());
  if (comm.is_root()) r.degrees = degree;
  std::vector<double> inv_sqrt(degree.size());
  for (std::size_t i = 0; i < degree.size(); ++i) inv_sqrt[i] = 1 / std::sqrt(degree[i]);
  normalize(w, inv_sqrt);

  SpectralRequest request{k + 1, settings.solver, settings.krylov};
  request.fix_signs = false;  // scikit-learn's rule applies to v / sqrt(degree), below
  request.rebuild = [&](DistMatrix& a) {
    assemble_affinity(r.gamma, row_panel, col_panel, d, gp, a);
    normalize(a, inv_sqrt);
  };
  SpectralStep step = spectral_step(w, request, timer);
  r.affinity_eigenvalues = step.values;
  for (double mu : step.values) r.laplacian_eigenvalues.push_back(1 - mu);
  r.residuals = step.residuals;
  r.solver_used = step.solver_used;
  r.solver_note = step.solver_note;
  r.iterations = step.krylov_cycles;
  r.matvecs = step.krylov_products;
  if (1 - step.values[1] <= kConnectedGap) {
    std::ostringstream m;
    m.precision(17);
    m << points.path() << ": the affinity graph is disconnected (or numerically so): the "
      << "eigenvalue 1 of D^(-1/2) W D^(-1/2) is repeated (second eigenvalue " << step.values[1]
      << "), so the embedding is not defined; "
      << (g ? "increase --neighbors" : "decrease --gamma");
    agree(comm, m.str());
  }

  // Row-major n x (k+1) on rank 0 -> drop column 0, divide by sqrt(degree),
  // sign: the largest |entry| of each column positive (numpy argmax: the first).
  const auto v = row_major_on_root(step.vectors);
  if (comm.is_root()) {
    const int q = k + 1;
    r.embedding.assign(std::size_t(n) * k, 0.0);
    for (int c = 0; c < k; ++c) {
      std::int64_t arg = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const double y = v[std::size_t(i) * q + c + 1] * inv_sqrt[i];
        r.embedding[std::size_t(i) * k + c] = y;
        if (std::abs(y) > std::abs(r.embedding[std::size_t(arg) * k + c])) arg = i;
      }
      if (r.embedding[std::size_t(arg) * k + c] < 0)
        for (std::int64_t i = 0; i < n; ++i) r.embedding[std::size_t(i) * k + c] *= -1;
    }
  }
  timer.stop();
  return r;
}

}  // namespace kembed::spectral
