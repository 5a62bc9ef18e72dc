#include "kembed/app/pca_command.hpp"

#include <cmath>
#include <cstdio>
#include <optional>

#include "kembed/app/driver.hpp"
#include "kembed/core/data_fingerprint.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/csv_writer.hpp"
#include "kembed/io/model.hpp"
#include "kembed/io/sparse_matrix_input.hpp"
#include "kembed/spectral/pca.hpp"
#include "kembed/spectral/pca_inverse.hpp"
#include "kembed/spectral/pca_likelihood.hpp"
#include "kembed/spectral/sparse_pca.hpp"

namespace kembed::app {

// The app layer drives the methods and their kernels.
using namespace kembed::spectral;
using namespace kembed::kernel;

namespace {

/// --variance, --standardize, --whiten, --route: what only PCA asks.
struct PcaOptions {
  double variance = 0;  ///< 0: not given
  bool standardize = false;
  bool whiten = false;
  bool center = true;
  PcaRoute route = PcaRoute::automatic;

  static po::options_description description() {
    po::options_description d("pca");
    // clang-format off
    d.add_options()
        ("variance", po::value<double>(), "instead of --components: keep the smallest K whose "
         "cumulative explained-variance ratio is > F (0 < F < 1; needs --solver evd)")
        ("standardize", po::bool_switch(), "divide each centered column by its sample standard "
         "deviation (n-1), i.e. PCA of the correlation matrix")
        ("whiten", po::bool_switch(), "scale every component to unit sample variance")
        ("no-center", po::bool_switch(), "truncated SVD (LSA): keep the column means in "
         "(sparse input: .h5ad, .npz, .mtx)")
        ("route", po::value<std::string>()->default_value("auto"),
         "auto (covariance when n >= d, else gram), covariance (d x d) or gram (n x n)");
    // clang-format on
    return d;
  }

  explicit PcaOptions(const po::variables_map& vm) {
    if (vm.count("variance")) {
      variance = vm["variance"].as<double>();
      if (!(variance > 0 && variance < 1))
        throw Error("--variance must be strictly between 0 and 1");
      if (!vm["components"].defaulted())
        throw Error("give either --components or --variance, not both");
    }
    standardize = vm["standardize"].as<bool>();
    whiten = vm["whiten"].as<bool>();
    center = !vm["no-center"].as<bool>();
    route = parse_pca_route(vm["route"].as<std::string>());
    if (!center && whiten)
      throw Error("--whiten needs centered data: not with --no-center");
  }
};

std::string eigenvalues_csv(const PcaResult& r) {
  std::vector<double> table;
  for (int j = 0; j < r.k; ++j) {
    table.push_back(r.explained_variance[j]);
    table.push_back(r.explained_ratio[j]);
  }
  return io::format_csv({"eigenvalue", "explained_variance_ratio"}, table);
}

// The d x k row-major axes of a fit as k x d: one row per component,
// scikit-learn's components_.
std::vector<double> axes_as_rows(const PcaResult& r) {
  std::vector<double> rows(r.components.size());
  for (std::int64_t t = 0; t < r.d && !rows.empty(); ++t)
    for (int j = 0; j < r.k; ++j) rows[std::size_t(j) * r.d + t] = r.components[t * r.k + j];
  return rows;
}

// The input's header names on rank 0 when there is one name per feature,
// else empty (no header, binary input, other ranks).
std::vector<std::string> feature_names(Run& run) {
  auto names = run.input().column_names();
  if (static_cast<std::int64_t>(names.size()) != run.input().cols()) names.clear();
  return names;
}

PpcaParameters ppca_of(const PcaResult& r) { return {r.d, r.explained_variance, r.noise_variance}; }

// Collective: writes model/ into the staging directory; with d <= 4096 it
// holds the d x d covariance and (when C is regular) precision of the
// probabilistic PCA, formed on rank 0 one at a time.
void save_model(Run& run, const PcaResult& r, const PcaSettings& settings, bool centered) {
  const std::string dir = run.staged_path("model");
  Json manifest = run.manifest_header();
  manifest["format_version"] = io::kPcaModelFormatVersion;
  manifest["n"] = r.n;
  manifest["d"] = r.d;
  manifest["k"] = r.k;
  manifest["standardize"] = settings.standardize;
  manifest["center"] = centered;
  manifest["whiten"] = settings.whiten;
  manifest["route"] = pca_route_name(r.route);
  manifest["components_orientation"] = "k x d";
  manifest["eigenvalues"] = "explained variance lambda_j / (n-1) of each kept component";
  manifest["projection"] =
      "Z = ((Y - mean) / scale) components^T, then column j / sqrt(eigenvalue_j) when whiten";
  manifest["data_fingerprint_mix64sum"] = r.data_fingerprint;
  manifest["noise_variance"] = r.noise_variance;
  run.on_root([&] {
    const auto names = feature_names(run);
    if (!names.empty()) manifest["feature_names"] = names;
    io::ModelWriter writer(dir);
    writer.add_vector("mean", r.mean);
    writer.add_vector("scale", r.scale);
    const std::vector<double> axes = axes_as_rows(r);
    writer.add("components", {r.k, r.d, axes});
    writer.add_vector("eigenvalues", r.explained_variance);
    if (centered && r.d <= kPcaCovarianceMaxFeatures) {
      const PpcaParameters ppca = ppca_of(r);
      writer.add("covariance", {r.d, r.d, ppca_covariance(ppca, axes)});
      if (ppca_undefined_reason(ppca).empty())
        writer.add("precision", {r.d, r.d, ppca_precision(ppca, axes)});
    }
    writer.finish(manifest);
  });
}

// A fit of sparse input in the dense fit's terms: the model, the tables and
// run.json are written by the same code; the scores come gathered on rank 0.
struct SparseFit {
  PcaResult result;
  std::vector<double> embedding;        ///< rank 0: n x k row-major
  std::vector<double> singular_values;  ///< of Xc S^{-1} (or X S^{-1} without centering)
  std::int64_t stored_entries = 0;
};

// The fingerprint of the stored entries alone: the dense fingerprint's terms
// (core/data_fingerprint.hpp) at their row-major positions, summed over the
// ranks; the zeros are left out, so the pass is O(stored entries).
std::string stored_entries_fingerprint(const io::CsrRows& x, const Comm& comm) {
  std::uint64_t sum = 0;
  for (std::int64_t i = 0; i < x.local_rows(); ++i)
    for (std::int64_t e = x.offsets[i]; e < x.offsets[i + 1]; ++e)
      sum += fingerprint_term(x.values[e],
                              static_cast<std::uint64_t>((x.first_row + i) * x.cols + x.columns[e]));
  return fingerprint_hex(comm.sum_modular(sum));
}

// Collective: the memory plan's shape of a sparse fit of `input`.
ProblemShape sparse_shape(const io::SparseMatrixInput& input, int k, const BlacsGrid& grid,
                          int block_size) {
  return sparse_problem_shape(input.rows(), input.cols(), input.stored_entries(), k,
                              grid.nprow(), grid.npcol(), block_size, SparseMethod::pca,
                              input.busiest_entries());
}

SparseFit fit_sparse(Run& run, io::SparseMatrixInput& input, const PcaSettings& settings,
                     bool center) {
  const std::string& path = input.path();
  if (settings.variance > 0)
    throw Error("--variance needs the whole spectrum (--solver evd), which sparse input (" + path +
                ") does not compute: give --components");
  if (settings.route == PcaRoute::gram)
    throw Error("--route gram: sparse input (" + path +
                ") runs on the d x d covariance applied as an operator (--route auto or covariance)");
  if (settings.solver != Solver::automatic && settings.solver != Solver::krylov)
    throw Error("sparse input (" + path + ") needs --solver krylov (or auto): --solver " +
                solver_name(settings.solver) + " works on a stored matrix");
  SparsePcaSettings s;
  s.components = settings.components;
  s.center = center;
  s.standardize = settings.standardize;
  s.whiten = settings.whiten;
  s.block_size = settings.block_size;
  s.krylov = settings.krylov;
  // The CSR rows are read; the guard counts them with what the solve adds.
  const MemoryCheck memory =
      check_memory(sparse_shape(input, settings.components, run.grid(), settings.block_size),
                   settings.max_memory_per_rank, run.world());
  SparseFit fit;
  PcaResult& r = fit.result;
  r.data_fingerprint = stored_entries_fingerprint(input.csr(), run.world());
  fit.stored_entries = run.world().sum(static_cast<long long>(input.csr().nonzeros()));
  SparsePcaResult f = fit_sparse_pca(input.csr(), run.grid(), s, path, run.timer());
  // The rows are no longer needed: freed before the scores are gathered on
  // rank 0, so that rank never holds both (the memory plan counts the larger).
  input.release_rows();
  run.timer().start("project");
  fit.embedding = run.world().gatherv(f.scores);
  f.scores = {};
  run.timer().stop();
  r.estimated_peak_bytes = memory.estimate;
  r.memory_limit_bytes = memory.limit;
  r.n = f.n;
  r.d = f.d;
  r.k = f.k;
  r.route = PcaRoute::covariance;
  // The model projects (Y - mean) / scale: without centering the mean is 0.
  r.mean = center ? f.mean : std::vector<double>(f.mean.size(), 0.0);
  r.scale = std::move(f.scale);
  r.explained_variance = std::move(f.explained_variance);
  r.explained_ratio = std::move(f.explained_ratio);
  r.total_variance = f.total_variance;
  r.noise_variance = f.noise_variance;
  r.residuals = std::move(f.residuals);
  r.solver_used = std::move(f.solver_used);
  r.solver_note = std::move(f.solver_note);
  r.iterations = f.iterations;
  r.matvecs = f.matvecs;
  r.components = std::move(f.components);
  fit.singular_values = std::move(f.singular_values);
  return fit;
}

}  // namespace

po::options_description pca_options() {
  po::options_description all;
  all.add(InputOptions::description(
              "data file, n samples x d features (.csv/.tsv/.txt, .npy, .bin)"))
      .add(OutputOptions::description())
      .add(SolveOptions::description())
      .add(PcaOptions::description());
  return all;
}

void run_pca(const po::variables_map& vm, const Comm& world) {
  const InputOptions in(vm);
  const OutputOptions output(vm);
  const SolveOptions solve(vm);
  const PcaOptions pca(vm);
  PcaSettings settings;
  settings.components = solve.components;
  settings.variance = pca.variance;
  settings.standardize = pca.standardize;
  settings.whiten = pca.whiten;
  settings.route = pca.route;
  settings.solver = solve.solver;
  settings.block_size = solve.layout.block_size;
  settings.krylov = solve.krylov;
  settings.max_memory_per_rank = solve.max_memory_per_rank;
  Job job("pca", output, solve.layout, {in.input}, [&](const Comm& c) { return in.open(c); });
  job.with_grid([&](const io::MatrixFile& file) {
    return pca_grid(settings.route, file.rows(), file.cols());
  });
  job.with_dry_run(solve, [&](const io::MatrixFile& file, const BlacsGrid& grid) {
    if (const auto* sparse = dynamic_cast<const io::SparseMatrixInput*>(&file))
      return sparse_shape(*sparse, settings.components, grid, settings.block_size);
    return pca_problem_shape(file.rows(), file.cols(), settings, grid.nprow(), grid.npcol());
  });
  drive(vm, world, job, [&](Run& run) {
    PcaSettings with_progress = settings;
    with_progress.krylov = run.krylov(solve);
    const std::int64_t n = run.input().rows(), d = run.input().cols();
    // Decided here, once: sparse input takes the operator path, dense input
    // the stored covariance or Gram matrix.
    auto* sparse = dynamic_cast<io::SparseMatrixInput*>(&run.input());
    if (!sparse && !pca.center)
      throw Error("--no-center (truncated SVD) is for sparse input (.h5ad, .npz, .mtx): " +
                  run.input().path() + " is dense");
    with_progress.block_size = run.use_block_size_for(
        !sparse && resolve_route(settings.route, n, d) == PcaRoute::gram ? n : d);
    SparseFit fit;
    if (sparse)
      fit = fit_sparse(run, *sparse, with_progress, pca.center);
    else
      fit.result = fit_pca(run.input(), run.grid(), with_progress, run.timer());
    const PcaResult& result = fit.result;
    const int k = result.k;
    run.solver(solve, {result.solver_used, result.solver_note, result.iterations, result.matvecs,
                       result.estimated_peak_bytes, result.memory_limit_bytes});

    run.timer().start("write");
    const auto columns = io::numbered_columns("c", k);
    if (sparse)
      run.write_rows("embedding.csv", columns, fit.embedding);
    else
      run.write_rows("embedding.csv", columns, *result.embedding);
    run.write("eigenvalues.csv", [&] { return eigenvalues_csv(result); });
    run.write("components.csv", [&] {
      auto names = feature_names(run);
      if (names.empty()) names = io::numbered_columns("x", static_cast<int>(d));
      return io::format_csv(names, axes_as_rows(result), "component", columns);
    });
    run.timer().start("model");
    save_model(run, result, settings, pca.center);

    Json& report = run.report;
    report["route"] = pca_route_name(result.route);
    report["route_requested"] = pca_route_name(pca.route);
    report["n"] = result.n;
    report["d"] = result.d;
    report["components"] = k;
    if (pca.variance > 0) {
      report["components_selected_by"] = "variance";
      report["variance_threshold"] = pca.variance;
    } else {
      report["components_selected_by"] = "components";
    }
    report["standardize"] = pca.standardize;
    report["whiten"] = pca.whiten;
    report["center"] = pca.center;
    const std::string scaled = pca.standardize ? ", columns divided by their sample std (n-1)" : "";
    if (sparse) {
      report["input_storage"] = "sparse (" + sparse->format() +
                                "): CSR rows, centering and scaling applied implicitly in every "
                                "product; the dense matrix is never formed";
      report["stored_entries"] = fit.stored_entries;
    }
    report["centering"] = pca.center ? "column means removed" + scaled
                                     : "none (truncated SVD)" + scaled;
    report["eigenvalues"] = result.explained_variance;
    report["eigenvalue_definition"] =
        pca.center ? "explained variance lambda_j / (n-1), lambda_j eigenvalue of Xc^T Xc (= of "
                     "Xc Xc^T)"
                   : "variance (n denominator) of score column j, scikit-learn's TruncatedSVD "
                     "explained_variance_ (the data are not centered)";
    report["explained_variance_ratio"] = result.explained_ratio;
    std::vector<double> cumulative;
    double sum = 0;
    for (double r : result.explained_ratio) cumulative.push_back(sum += r);
    report["cumulative_explained_variance_ratio"] = cumulative;
    std::vector<double> singular = fit.singular_values;
    if (!sparse)
      for (double v : result.explained_variance)
        singular.push_back(std::sqrt(v * static_cast<double>(result.n - 1)));
    report["singular_values"] = singular;
    report["total_variance"] = result.total_variance;
    report["total_variance_definition"] =
        "trace of the covariance matrix = sum of the column variances of the (standardized) data";
    report["noise_variance"] = result.noise_variance;
    report["noise_variance_definition"] =
        "probabilistic PCA (Tipping & Bishop) as scikit-learn estimates it (noise_variance_): "
        "mean of the min(n, d) - k discarded explained variances (0 when k = min(n, d))";
    const PpcaParameters ppca = ppca_of(result);
    if (!pca.center) {
      report["log_likelihood_note"] = "not computed: the probabilistic PCA model needs centered data";
    } else if (const std::string why = ppca_undefined_reason(ppca); why.empty()) {
      report["log_likelihood"] = ppca_training_log_likelihood(ppca, n, result.total_variance);
      report["log_likelihood_definition"] =
          "mean log-likelihood of the training samples under the probabilistic PCA "
          "N(mean, C), C = W^T diag(max(lambda_j, s)) W + s (I - W^T W) (scikit-learn's "
          "PCA.score(X); whitening does not change C; with --standardize, of the "
          "standardized samples)";
    } else {
      report["log_likelihood_note"] = "not computed: " + why;
    }
    if (!pca.center)
      report["covariance_note"] = "model/covariance.npy and model/precision.npy: not written "
                                  "without centering";
    else if (d > kPcaCovarianceMaxFeatures)
      report["covariance_note"] =
          "model/covariance.npy and model/precision.npy are written only for d <= " +
          std::to_string(kPcaCovarianceMaxFeatures) + " (here d = " + std::to_string(d) + ")";
    else if (!ppca_undefined_reason(ppca).empty())
      report["covariance_note"] = "model/precision.npy not written: " + ppca_undefined_reason(ppca);
    if (!result.spectrum.empty()) report["spectrum"] = result.spectrum;
    report["relative_residuals"] = result.residuals;
    report["residual_definition"] =
        sparse ? "||C u - lambda u||_2 / trace(C), C = Xc^T Xc / (n-1) (X^T X / (n-1) without "
                 "centering) applied as an operator; trace(C) >= ||C||_F"
        : result.route == PcaRoute::covariance
            ? "||C u - lambda u||_2 / ||C||_F, C = Xc^T Xc / (n-1)"
            : "||G v - lambda v||_2 / ||G||_F, G = Xc Xc^T / (n-1)";
    report["sign_convention"] =
        "largest |entry| of each embedding column is positive; the axis (row) in "
        "components.csv is flipped with it";
    report["components_orientation"] =
        "k x d: one row per component, one column per feature (scikit-learn's components_)";
    report["whitening"] = pca.whiten ? "z_j / sqrt(lambda_j / (n-1)): unit sample variance"
                                     : "none: z_j = Xc u_j, sample variance lambda_j / (n-1)";
    run.summary = "n = " + std::to_string(result.n) + ", d = " + std::to_string(result.d) +
                  ", k = " + std::to_string(k) + " (" + pca_route_name(result.route) +
                  " route), " + std::to_string(world.size()) + " ranks";
  });
}

GridPreference pca_grid(PcaRoute route, std::int64_t n, std::int64_t d) {
  return resolve_route(route, n, d) == PcaRoute::covariance ? GridPreference::cross_columns
                                                            : GridPreference::cross_rows;
}

Projection project_pca(const io::Model& model, io::MatrixFile& points, const BlacsGrid& grid,
                       int /*block_size: the points are read in row panels*/) {
  const Comm& comm = grid.comm();
  const PcaProjection p = read_pca_projection(model, comm);
  auto components = model.large(comm, "components");
  return {p.k, pca_transform(p, *components, points, comm).embedding};
}

Projection project_pca_scored(const io::Model& model, io::MatrixFile& points, const BlacsGrid& grid,
                              std::vector<double>& log_likelihood) {
  const Comm& comm = grid.comm();
  const PcaProjection p = read_pca_projection(model, comm);
  auto components = model.large(comm, "components");
  PcaTransformed t = pca_transform(p, *components, points, comm, true);
  log_likelihood = std::move(t.log_likelihood);
  return {p.k, std::move(t.embedding)};
}

}  // namespace kembed::app
