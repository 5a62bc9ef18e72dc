#include "kembed/app/transform_command.hpp"

#include <cstring>

#include "kembed/app/kpca_command.hpp"
#include "kembed/app/mds_command.hpp"
#include "kembed/app/options.hpp"
#include "kembed/app/pca_command.hpp"
#include "kembed/app/run_report.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/csv_writer.hpp"
#include "kembed/io/output_dir.hpp"

namespace kembed::app {

namespace {

// The method named in a model's manifest -> how to project with it.
struct MethodProjector {
  const char* method;
  Projector project;
};

const MethodProjector kProjectors[] = {
    {"kpca", project_kpca},
    {"mds", project_mds},
    {"pca", project_pca},
};

}  // namespace

po::options_description transform_options() {
  po::options_description model("model");
  model.add_options()("model,m", po::value<std::string>(),
                      "model directory written by a fit (OUTPUT-DIR/model)");
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
  const OutputOptions out_options(vm);
  const LayoutOptions layout(vm);
  const int block_size = layout.block_size;
  const BlacsGrid grid = layout.make_grid(world);
  PhaseTimer timer(world);
  timer.start("read");
  out_options.check_writable(world);
  const io::Model model = io::Model::open(world, model_dir);
  Projector project = nullptr;
  for (const auto& entry : kProjectors)
    if (model.method() == entry.method) project = entry.project;
  if (!project)
    throw Error("model '" + model_dir + "' is for method '" + model.method() +
                "', which transform does not support");
  auto points = in.open(world);  // --input, or --generate in memory
  timer.start("project");
  const Projection projection = project(model, *points, grid, block_size);

  timer.start("write");
  std::unique_ptr<io::OutputDir> out;
  collectively(world, [&] {
    if (!world.is_root()) return;
    out = std::make_unique<io::OutputDir>(out_options.output_dir);
    out->write("embedding.csv", io::format_csv(io::numbered_columns("c", projection.components),
                                               projection.embedding));
  });
  timer.stop();
  Json report;
  report["method"] = "transform";
  report["model"] = model_dir;
  report["model_method"] = model.method();
  report["input"] = {{"path", points->path()}, {"format", points->format()},
                     {"rows", points->rows()}, {"cols", points->cols()}};
  report["components"] = projection.components;
  report["ranks"] = world.size();
  report["grid"] = {{"nprow", grid.nprow()}, {"npcol", grid.npcol()}};
  report["block_size"] = block_size;
  Json times = Json::object();
  for (const auto& [phase, seconds] : timer.max_over_ranks(world)) times[phase] = seconds;
  report["time_seconds"] = times;
  collectively(world, [&] {
    if (!world.is_root()) return;
    out->write("run.json", report.dump(2) + "\n");
    out->commit();
  });
  say(world, out_options.quiet,
      "kembed transform: " + std::to_string(points->rows()) + " points projected with " +
          model_dir + "; results in " + out_options.output_dir + "/");
}

}  // namespace kembed::app
