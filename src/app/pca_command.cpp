#include "kembed/app/pca_command.hpp"

#include <cmath>
#include <cstdio>
#include <optional>

#include "kembed/app/options.hpp"
#include "kembed/app/run_report.hpp"
#include "kembed/core/error.hpp"
#include "kembed/core/version.hpp"
#include "kembed/io/csv_writer.hpp"
#include "kembed/io/model.hpp"
#include "kembed/io/output_dir.hpp"
#include "kembed/spectral/pca.hpp"

namespace kembed::app {

namespace {

/// --variance, --standardize, --whiten, --route: what only PCA asks.
struct PcaOptions {
  double variance = 0;  ///< 0: not given
  bool standardize = false;
  bool whiten = false;
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
    route = parse_pca_route(vm["route"].as<std::string>());
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

// Collective: 64-bit FNV-1a of the values of `source` (row-major float64
// bytes, as kpca's copy_to_npy computes it), streamed through rank 0 in
// chunks; 16 hex digits on every rank.
std::string data_fingerprint(const Comm& comm, io::MatrixFile& source) {
  const std::int64_t rows = source.rows(), cols = source.cols();
  const std::int64_t chunk = std::max<std::int64_t>(1, (std::int64_t{8} << 20) / cols);
  std::uint64_t hash = 1469598103934665603ULL;
  for (std::int64_t begin = 0; begin < rows; begin += chunk) {
    std::vector<io::RowRange> want;
    if (comm.is_root()) want.push_back({begin, std::min(rows, begin + chunk)});
    const auto values = source.read_rows(want);
    const auto* p = reinterpret_cast<const unsigned char*>(values.data());
    for (std::size_t i = 0; i < values.size() * sizeof(double); ++i)
      hash = (hash ^ p[i]) * 1099511628211ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  std::string fingerprint = hex;
  comm.broadcast(fingerprint);
  return fingerprint;
}

// Collective: writes model/ into the staging directory `out` (rank 0).
void save_model(const Comm& world, const io::OutputDir* out, io::MatrixFile& file,
                const PcaResult& r, const PcaSettings& settings) {
  Json manifest;
  manifest["method"] = "pca";
  manifest["kembed_version"] = KEMBED_VERSION;
  manifest["n"] = r.n;
  manifest["d"] = r.d;
  manifest["k"] = r.k;
  manifest["standardize"] = settings.standardize;
  manifest["whiten"] = settings.whiten;
  manifest["route"] = pca_route_name(r.route);
  manifest["eigenvalues"] = "explained variance lambda_j / (n-1) of each kept component";
  manifest["projection"] =
      "Z = ((Y - mean) / scale) components, then column j / sqrt(eigenvalue_j) when whiten";
  manifest["data_fingerprint_fnv1a64"] = data_fingerprint(world, file);
  collectively(world, [&] {
    if (!world.is_root()) return;
    io::ModelWriter writer(out->file("model"));
    writer.add("mean", {1, r.d, r.mean});
    writer.add("scale", {1, r.d, r.scale});
    writer.add("components", {r.d, r.k, r.components});
    writer.add("eigenvalues", {1, r.k, r.explained_variance});
    writer.finish(manifest);
  });
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
  PhaseTimer timer(world);
  timer.start("read");
  output.check_writable(world);
  const BlacsGrid grid = solve.layout.make_grid(world);
  auto file = in.open(world);  // --input, or --generate in memory
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
  if (solve.dry_run) {
    print_dry_run(world, "pca",
                  pca_problem_shape(file->rows(), file->cols(), settings, grid.nprow(),
                                    grid.npcol()),
                  solve.max_memory_per_rank);
    return;
  }
  const PcaResult result = fit_pca(*file, grid, settings, timer);
  const int k = result.k;

  timer.start("write");
  std::unique_ptr<io::OutputDir> out;
  collectively(world, [&] {
    if (!world.is_root()) return;
    out = std::make_unique<io::OutputDir>(output.output_dir);
    const auto columns = io::numbered_columns("c", k);
    out->write("embedding.csv", io::format_csv(columns, result.embedding));
    out->write("eigenvalues.csv", eigenvalues_csv(result));
    out->write("components.csv", io::format_csv(columns, result.components));
  });
  timer.start("model");
  save_model(world, out.get(), *file, result, settings);
  timer.stop();

  Json report = common_report("pca", solve.layout.block_size, *file, grid, timer);
  report["solver"] = solver_name(solve.solver);
  report["solver_used"] = result.solver_used;
  report["memory_estimate_bytes_per_rank"] = result.estimated_peak_bytes;
  report["memory_limit_bytes_per_rank"] = result.memory_limit_bytes;
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
  report["centering"] = pca.standardize
                            ? "column means removed, columns divided by their sample std (n-1)"
                            : "column means removed";
  report["eigenvalues"] = result.explained_variance;
  report["eigenvalue_definition"] =
      "explained variance lambda_j / (n-1), lambda_j eigenvalue of Xc^T Xc (= of Xc Xc^T)";
  report["explained_variance_ratio"] = result.explained_ratio;
  std::vector<double> cumulative;
  double sum = 0;
  for (double r : result.explained_ratio) cumulative.push_back(sum += r);
  report["cumulative_explained_variance_ratio"] = cumulative;
  std::vector<double> singular;
  for (double v : result.explained_variance)
    singular.push_back(std::sqrt(v * static_cast<double>(result.n - 1)));
  report["singular_values"] = singular;
  report["total_variance"] = result.total_variance;
  report["total_variance_definition"] =
      "trace of the covariance matrix = sum of the column variances of the (standardized) data";
  report["noise_variance"] = result.noise_variance;
  report["noise_variance_definition"] =
      "probabilistic PCA (Tipping & Bishop): mean of the d - k discarded covariance "
      "eigenvalues (0 when k = d); equals scikit-learn's noise_variance_ when n >= d";
  if (!result.spectrum.empty()) report["spectrum"] = result.spectrum;
  report["relative_residuals"] = result.residuals;
  report["residual_definition"] = result.route == PcaRoute::covariance
                                      ? "||C u - lambda u||_2 / ||C||_F, C = Xc^T Xc / (n-1)"
                                      : "||G v - lambda v||_2 / ||G||_F, G = Xc Xc^T / (n-1)";
  report["sign_convention"] =
      "largest |entry| of each embedding column is positive; the axis in components.csv is "
      "flipped with it";
  report["whitening"] = pca.whiten ? "z_j / sqrt(lambda_j / (n-1)): unit sample variance"
                                   : "none: z_j = Xc u_j, sample variance lambda_j / (n-1)";

  collectively(world, [&] {
    if (!world.is_root()) return;
    out->write("run.json", report.dump(2) + "\n");
    out->commit();
  });
  say(world, output.quiet,
      "kembed pca: n = " + std::to_string(result.n) + ", d = " + std::to_string(result.d) +
          ", k = " + std::to_string(k) + " (" + pca_route_name(result.route) + " route), " +
          std::to_string(world.size()) + " ranks; results in " + output.output_dir +
          "/ (embedding.csv, eigenvalues.csv, components.csv, run.json, model/)");
}

Projection project_pca(const io::Model& model, io::MatrixFile& points, const BlacsGrid& grid,
                       int block_size) {
  const Comm& comm = grid.comm();
  const Json& m = model.manifest();
  PcaProjection p;
  collectively(comm, [&] {
    p.d = m.at("d").get<std::int64_t>();
    p.k = m.at("k").get<int>();
    p.whiten = m.at("whiten").get<bool>();
    if (p.d < 1 || p.k < 1 || p.k > p.d)
      throw Error("model '" + model.dir() + "': invalid shape d = " + std::to_string(p.d) +
                  ", k = " + std::to_string(p.k));
  });
  p.mean = model.small(comm, "mean", 1, p.d).values;
  p.scale = model.small(comm, "scale", 1, p.d).values;
  p.explained_variance = model.small(comm, "eigenvalues", 1, p.k).values;
  auto components = model.large(comm, "components");
  return {p.k, pca_transform(p, *components, points, grid, block_size)};
}

}  // namespace kembed::app
