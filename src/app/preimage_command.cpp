#include "kembed/app/preimage_command.hpp"

#include <optional>

#include "kembed/app/kpca_command.hpp"
#include "kembed/app/pca_command.hpp"
#include "kembed/app/driver.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/csv_writer.hpp"
#include "kembed/io/model.hpp"
#include "kembed/distribute/read_distributed.hpp"
#include "kembed/spectral/inverse_map.hpp"
#include "kembed/spectral/pca_inverse.hpp"
#include "kembed/spectral/preimage.hpp"
#include "kembed/spectral/spectral_step.hpp"

namespace kembed::app {

// The app layer drives the methods and their kernels.
using namespace kembed::spectral;
using namespace kembed::kernel;

namespace {

// --method, --components, --embedding, --init and the fixed-point controls.
struct PreimageOptions {
  std::string model;
  PreimageMethod method = PreimageMethod::fixed_point;
  bool method_given = false;  ///< kpca models need --method; pca models take none
  std::string embedding;  ///< --embedding FILE; empty: project --input
  int components = 0;     ///< 0: all the model's (or the embedding file's columns)
  bool init_input = false;
  FixedPointSettings fixed_point;

  static po::options_description description() {
    po::options_description d("pre-image");
    d.add_options()
        ("model,m", po::value<std::string>(),
         "kernel PCA or PCA model directory (OUTPUT-DIR/model)")
        ("method", po::value<std::string>(),
         "kpca models: nearest (training sample), fixed-point (rbf or linear kernel) or ridge "
         "(needs a model fitted with --fit-inverse); pca models: leave out (x = mean + "
         "scale * Z W^T)")
        ("embedding", po::value<std::string>(),
         "instead of --input: coefficients to reconstruct (m x c, the first c components)")
        ("components,k", po::value<int>(),
         "reconstruct from the first K components (default: all of the model's, or the "
         "embedding file's columns)")
        ("init", po::value<std::string>()->default_value("nearest"),
         "fixed-point start: nearest (training sample) or input (the --input point itself)")
        ("tol", po::value<double>()->default_value(1e-8),
         "fixed-point stop: ||x_new - x|| <= tol * max(1, ||x_new||)")
        ("max-iter", po::value<int>()->default_value(500), "fixed-point steps per start")
        ("max-restarts", po::value<int>()->default_value(5),
         "unstable fixed-point starts replaced by the next-nearest training sample");
    return d;
  }

  explicit PreimageOptions(const po::variables_map& vm) {
    if (!vm.count("model")) throw Error("missing --model");
    model = vm["model"].as<std::string>();
    method_given = vm.count("method") > 0;
    if (method_given) method = parse_preimage_method(vm["method"].as<std::string>());
    if (vm.count("embedding")) embedding = vm["embedding"].as<std::string>();
    const bool input = vm.count("input") || vm.count("generate");
    if (input == !embedding.empty())
      throw Error("give either --input (points to denoise) or --embedding (coefficients)");
    if (vm.count("components")) {
      components = vm["components"].as<int>();
      if (components < 1) throw Error("--components must be at least 1");
    }
    const std::string init = vm["init"].as<std::string>();
    if (init != "nearest" && init != "input")
      throw Error("--init must be nearest or input, got '" + init + "'");
    init_input = init == "input";
    if (init_input && (!input || !method_given || method != PreimageMethod::fixed_point))
      throw Error("--init input needs --input and --method fixed-point");
    fixed_point.tol = vm["tol"].as<double>();
    fixed_point.max_iter = vm["max-iter"].as<int>();
    fixed_point.max_restarts = vm["max-restarts"].as<int>();
    if (!(fixed_point.tol > 0)) throw Error("--tol must be positive");
    if (fixed_point.max_iter < 1) throw Error("--max-iter must be at least 1");
    if (fixed_point.max_restarts < 0) throw Error("--max-restarts must be at least 0");
  }
};

// Collective: rows [0, m) of `file` on every rank, first `c` columns.
std::vector<double> read_all(io::MatrixFile& file, int c) {
  const auto all = file.read_rows({{0, file.rows()}});
  const std::int64_t cols = file.cols();
  std::vector<double> out(std::size_t(file.rows()) * c);
  for (std::int64_t i = 0; i < file.rows(); ++i)
    for (int j = 0; j < c; ++j) out[std::size_t(i) * c + j] = all[std::size_t(i) * cols + j];
  return out;
}

// Collective: the m x c coefficients of the points to reconstruct (every
// rank): the first c columns of the --embedding file, or the projections of
// the --input points.
std::vector<double> coefficients_to_reconstruct(const PreimageOptions& o, const io::Model& model,
                                                const KpcaModelStats& stats,
                                                io::MatrixFile& source, const BlacsGrid& grid,
                                                int block_size, int& c) {
  const Comm& comm = grid.comm();
  if (!o.embedding.empty()) {
    c = o.components > 0 ? o.components : static_cast<int>(source.cols());
    if (source.cols() > stats.k || c > source.cols())
      throw Error(o.embedding + ": has " + std::to_string(source.cols()) +
                  " columns; it must hold the first c <= " + std::to_string(stats.k) +
                  " components of the model" +
                  (c > source.cols() ? " and at least --components " + std::to_string(c) : ""));
    return read_all(source, c);
  }
  c = o.components > 0 ? o.components : stats.k;
  if (c > stats.k)
    throw Error("--components " + std::to_string(c) + " exceeds the model's " +
                std::to_string(stats.k) + " components");
  const Projection projection = project_kpca(model, source, grid, block_size);
  const std::int64_t m = source.rows();
  std::vector<double> z(std::size_t(m) * c);
  if (comm.is_root())
    for (std::int64_t q = 0; q < m; ++q)
      for (int j = 0; j < c; ++j) z[std::size_t(q) * c + j] = projection.embedding[q * stats.k + j];
  comm.broadcast(z.data(), z.size());
  return z;
}

// Collective: the m x c scores to map back with a pca model, block-cyclic: the
// first c columns of the --embedding file, or the projections of --input.
DistMatrix pca_scores(const PreimageOptions& o, const io::Model& model, const PcaProjection& pca,
                      io::MatrixFile& source, const BlacsGrid& grid, int nb, int& c) {
  const std::int64_t m = source.rows();
  if (!o.embedding.empty()) {
    c = o.components > 0 ? o.components : static_cast<int>(source.cols());
    collectively(grid.comm(), [&] {
      if (source.cols() > pca.k || c > source.cols())
        throw Error(o.embedding + ": has " + std::to_string(source.cols()) +
                    " columns; it must hold the first c <= " + std::to_string(pca.k) +
                    " components of the model" +
                    (c > source.cols() ? " and at least --components " + std::to_string(c) : ""));
    });
    DistMatrix all(grid, m, source.cols(), nb, nb);
    distribute::read_block_cyclic(source, all);
    DistMatrix z(grid, m, c, nb, nb);
    copy(all, 0, 0, m, c, z, 0, 0);
    return z;
  }
  c = o.components > 0 ? o.components : pca.k;
  collectively(grid.comm(), [&] {
    if (c > pca.k)
      throw Error("--components " + std::to_string(c) + " exceeds the model's " +
                  std::to_string(pca.k) + " components");
  });
  // transform's projection arrives row-major on rank 0; scatter takes column-major.
  const Projection projection = project_pca(model, source, grid, nb);
  std::vector<double> column_major;
  if (grid.comm().is_root()) {
    column_major.resize(std::size_t(m) * c);
    for (std::int64_t q = 0; q < m; ++q)
      for (int j = 0; j < c; ++j)
        column_major[std::size_t(j) * m + q] = projection.embedding[q * pca.k + j];
  }
  DistMatrix z(grid, m, c, nb, nb);
  z.scatter_from_root(column_major);
  return z;
}

// x = mean + scale * Z W^T for a pca model: preimages.csv and run.json.
void pca_preimages(const PreimageOptions& o, const io::Model& model, Run& run, int nb) {
  const BlacsGrid& grid = run.grid();
  const PcaProjection pca = read_pca_projection(model, grid.comm());
  run.timer().start("project");
  int c = 0;
  const DistMatrix z = pca_scores(o, model, pca, run.input(), grid, nb, c);
  run.timer().start("preimage");
  auto components = model.large(grid.comm(), "components");
  const DistMatrix x = pca_inverse_transform(pca, *components, z, nb);
  run.timer().start("write");
  run.write_rows("preimages.csv", io::numbered_columns("x", static_cast<int>(pca.d)),
                 row_major_on_root(x));
  Json& report = run.report;
  report["model"] = o.model;
  report["pre_image_method"] = "pca";
  report["definition"] = pca.whiten
      ? "x = mean + scale * ((Z diag(sqrt(explained_variance))) W^T), W the d x c axes"
      : "x = mean + scale * (Z W^T), W the d x c axes";
  report["source"] = o.embedding.empty() ? "input (projected, then reconstructed)" : "embedding";
  report["components"] = c;
  report["points"] = z.rows();
  run.summary = std::to_string(z.rows()) + " points (pca, " + std::to_string(c) + " components)";
}

Json point_report(const Preimages& p, std::int64_t q) {
  Json j;
  j["nearest_training_sample"] = p.nearest[q] + 1;
  j["feature_distance_squared"] = p.distance[q];
  if (!p.start_distance.empty()) j["start_feature_distance_squared"] = p.start_distance[q];
  j["iterations"] = p.iterations[q];
  j["restarts"] = p.restarts[q];
  j["converged"] = p.converged[q] != 0;
  return j;
}

}  // namespace

po::options_description preimage_options() {
  po::options_description all;
  all.add(PreimageOptions::description())
      .add(InputOptions::description("points to denoise: projected onto the first "
                                     "--components components and reconstructed"))
      .add(OutputOptions::description())
      .add(LayoutOptions::description());
  return all;
}

void run_preimage(const po::variables_map& vm, const Comm& world) {
  const PreimageOptions o(vm);
  const OutputOptions output(vm);
  const LayoutOptions layout(vm);
  const int nb = layout.block_size;
  std::optional<InputOptions> in;
  if (o.embedding.empty()) in.emplace(vm);
  refuse_seed_without_generate(vm, "preimage");
  std::optional<io::Model> model;
  std::optional<KpcaModelStats> stats;
  Job job("preimage", output, layout, {o.model, in ? in->input : o.embedding},
          [&](const Comm& c) {
            model.emplace(io::Model::open(c, o.model));
            const bool pca = model->method() == "pca";
            collectively(c, [&] {
              if (pca && o.method_given)
                throw Error("model '" + o.model + "' is a pca model: its pre-image is the "
                            "linear reconstruction x = mean + scale * Z W^T; leave out --method");
              if (!pca && model->method() != "kpca")
                throw Error("model '" + o.model + "' is for method '" + model->method() +
                            "'; pre-images need a kpca or pca model");
              if (!pca && !o.method_given)
                throw Error("missing --method (nearest, fixed-point or ridge)");
            });
            if (pca) return in ? in->open(c) : io::open_matrix_file(c, o.embedding);
            stats.emplace(kpca_model_stats(*model, c));
            collectively(c, [&] {
              if (stats->kernel.type == KernelType::precomputed)
                throw Error("model '" + o.model + "' was fitted on a precomputed kernel: it has "
                            "no input space to return to");
              if (o.method == PreimageMethod::ridge && !model->manifest().contains("inverse_map"))
                throw Error("model '" + o.model + "' has no pre-image map: fit it with kembed "
                            "kpca --fit-inverse --alpha A");
            });
            // The points to denoise (--input or --generate), or the --embedding file.
            return in ? in->open(c) : io::open_matrix_file(c, o.embedding);
          });
  drive(vm, world, job, [&](Run& run) {
    if (model->method() == "pca") return pca_preimages(o, *model, run, nb);
    io::MatrixFile& source = run.input();
    const BlacsGrid& grid = run.grid();
    run.timer().start("project");
    int c = 0;
    std::vector<double> z = coefficients_to_reconstruct(o, *model, *stats, source, grid, nb, c);
    collectively(world, [&] {
      if (o.method == PreimageMethod::ridge && c != stats->k)
        throw Error("--method ridge maps all " + std::to_string(stats->k) +
                    " components of the model back; leave out --components (got " +
                    std::to_string(c) + ")");
    });

    run.timer().start("preimage");
    auto training = model->large(world, "X");
    auto coefficients = model->large(world, "coefficients");
    const std::vector<double> z_copy =
        o.method == PreimageMethod::ridge ? z : std::vector<double>();
    FeatureReconstruction reconstruction(*stats, *training, *coefficients, std::move(z), c, grid,
                                         nb);
    Preimages result;
    switch (o.method) {
      case PreimageMethod::nearest:
        result = nearest_preimages(reconstruction);
        break;
      case PreimageMethod::fixed_point: {
        FixedPointSettings settings = o.fixed_point;
        if (o.init_input) settings.init = read_all(source, static_cast<int>(stats->d));
        result = fixed_point_preimages(reconstruction, settings);
        break;
      }
      case PreimageMethod::ridge: {
        auto weights = model->large(world, "inverse_weights");
        const auto mean = model->vector(world, "inverse_mean", stats->d);
        result = given_preimages(reconstruction,
                                 apply_inverse_map(stats->kernel, z_copy, stats->k, *coefficients,
                                                   stats->eigenvalues, *weights, mean, grid, nb));
        break;
      }
    }

    run.timer().start("write");
    const std::int64_t m = reconstruction.points();
    run.write_rows("preimages.csv", io::numbered_columns("x", static_cast<int>(stats->d)),
                   result.points);
    Json& report = run.report;
    report["model"] = o.model;
    report["pre_image_method"] = preimage_method_name(o.method);
    report["source"] = o.embedding.empty() ? "input (projected, then reconstructed)" : "embedding";
    report["components"] = c;
    report["kernel"] = model->manifest().at("kernel");
    if (o.method == PreimageMethod::fixed_point)
      report["fixed_point"] = {{"tol", o.fixed_point.tol},
                               {"max_iter", o.fixed_point.max_iter},
                               {"max_restarts", o.fixed_point.max_restarts},
                               {"init", o.init_input ? "input" : "nearest"}};
    long long converged = 0;
    for (char v : result.converged) converged += v;
    report["points"] = m;
    report["converged"] = converged;
    report["feature_distance_definition"] =
        "||phi(x*) - phi_hat||^2, phi_hat = mean + sum_j z_j u_j over the first c components";
    report["nearest_training_sample_base"] = 1;
    Json per_point = Json::array();
    for (std::int64_t q = 0; q < m; ++q) per_point.push_back(point_report(result, q));
    report["per_point"] = per_point;
    run.summary = std::to_string(m) + " points (" + preimage_method_name(o.method) + ", " +
                  std::to_string(converged) + " converged)";
  });
}

}  // namespace kembed::app
