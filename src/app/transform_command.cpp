#include "kembed/app/transform_command.hpp"

#include <cstring>
#include <numeric>
#include <optional>

#include "kembed/app/ca_command.hpp"
#include "kembed/app/driver.hpp"
#include "kembed/app/kpca_command.hpp"
#include "kembed/app/manifold_commands.hpp"
#include "kembed/app/mds_command.hpp"
#include "kembed/app/pca_command.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/csv_writer.hpp"
#include "kembed/io/npy_writer.hpp"

namespace kembed::app {

// The app layer drives the methods and their kernels.
using namespace kembed::spectral;
using namespace kembed::kernel;

namespace {

// The method named in a model's manifest -> how to project with it.
struct MethodProjector {
  const char* method;
  Projector project;
};

const MethodProjector kProjectors[] = {
    {"ca", project_ca},
    {"isomap", project_isomap},
    {"kpca", project_kpca},
    {"mds", project_mds},
    {"pca", project_pca},
    {"spectral", project_spectral},
};

}  // namespace

po::options_description transform_options() {
  po::options_description model("model");
  // clang-format off
  model.add_options()
      ("model,m", po::value<std::string>(), "model directory written by a fit (OUTPUT-DIR/model)")
      ("score", po::bool_switch(), "pca models: also write score_samples.npy, each point's "
       "log-likelihood under the probabilistic PCA (scikit-learn's score_samples)");
  // clang-format on
  po::options_description all;
  all.add(model)
      .add(InputOptions::description("new samples (same features as the fit), or for a "
                                     "precomputed kernel the m x n kernel against the training set"))
      .add(OutputOptions::description())
      .add(LayoutOptions::description());
  return all;
}

void run_transform(const po::variables_map& vm, const Comm& world) {
  if (!vm.count("model")) throw Error("missing --model");
  const std::string model_dir = vm["model"].as<std::string>();
  const InputOptions in(vm);
  refuse_seed_without_generate(vm, "transform");
  const OutputOptions output(vm);
  const LayoutOptions layout(vm);
  const bool score = vm["score"].as<bool>();
  std::optional<io::Model> model;
  Job job("transform", output, layout, {model_dir, in.input}, [&](const Comm& c) {
            model.emplace(io::Model::open(c, model_dir));
            return in.open(c);  // --input, or --generate in memory
          });
  drive(vm, world, job, [&](Run& run) {
    Projector project = nullptr;
    for (const auto& entry : kProjectors)
      if (model->method() == entry.method) project = entry.project;
    if (!project)
      throw Error("model '" + model_dir + "' is for method '" + model->method() +
                  "', which transform does not support");
    // Every rank holds the manifest: the same refusal everywhere, before
    // anything is read or written.
    if (score && model->method() != "pca")
      throw Error("--score needs a pca model; '" + model_dir + "' is a " + model->method() +
                  " model");
    run.timer().start("project");
    std::vector<double> log_likelihood;
    const Projection projection =
        score ? project_pca_scored(*model, run.input(), run.grid(), log_likelihood)
              : project(*model, run.input(), run.grid(), run.block_size());
    run.timer().start("write");
    run.write_rows("embedding.csv", io::numbered_columns("c", projection.components),
                   projection.embedding);
    if (score) {
      // The mean over every point, known to rank 0 and then to all.
      double mean = 0;
      run.write("score_samples.npy", [&] {
        const auto m = static_cast<std::int64_t>(log_likelihood.size());
        mean = m ? std::accumulate(log_likelihood.begin(), log_likelihood.end(), 0.0) /
                       static_cast<double>(m)
                 : 0.0;
        std::string bytes = io::npy_vector_header_f8(m);
        const std::size_t header = bytes.size();
        bytes.resize(header + log_likelihood.size() * sizeof(double));
        if (!log_likelihood.empty())
          std::memcpy(&bytes[header], log_likelihood.data(),
                      log_likelihood.size() * sizeof(double));
        return bytes;
      });
      run.world().broadcast(&mean, 1);
      run.report["log_likelihood"] = mean;
      run.report["log_likelihood_definition"] =
          "mean of score_samples.npy: each point's log-likelihood under the model's "
          "probabilistic PCA (scikit-learn's PCA.score; with a standardized model, of the "
          "standardized points)";
    }
    run.report["model"] = model_dir;
    run.report["model_method"] = model->method();
    run.report["components"] = projection.components;
    run.summary = std::to_string(run.input().rows()) + " points projected with " + model_dir;
  });
}

}  // namespace kembed::app
