#include "kembed/app/driver.hpp"

#include <cstdio>

#include "kembed/app/version.hpp"
#include "kembed/core/simd_level.hpp"
#include "kembed/io/csv_writer.hpp"
#include "kembed/io/hdf5.hpp"
#include "kembed/io/npy_writer.hpp"
#include "kembed/linalg/library_versions.hpp"
#include "kembed/linalg/row_blocks.hpp"
#include "kembed/spectral/memory_plan.hpp"
#include "kembed/spectral/spectral_step.hpp"

namespace kembed::app {

// The app layer drives the methods and their kernels.
using namespace kembed::spectral;
using namespace kembed::kernel;

Run::Run(const Comm& world, const BlacsGrid& grid, int block_size, PhaseTimer& timer,
         io::MatrixFile& input, const OutputOptions& output, std::vector<std::string> reads)
    : world_(world),
      grid_(grid),
      block_size_(block_size),
      timer_(timer),
      input_(input),
      output_(output),
      reads_(std::move(reads)) {}

int Run::use_block_size_for(std::int64_t order) {
  block_size_ = effective_block_size(block_size_, order);
  return block_size_;
}

void Run::stage() {
  on_root([&] {
    if (!out_) out_ = std::make_unique<io::OutputDir>(output_.output_dir, reads_);
  });
}

void Run::write(const std::string& name, const std::function<std::string()>& contents) {
  stage();
  on_root([&] {
    out_->write(name, contents());
    written_.push_back(name);
  });
}

void Run::write_streamed(const std::string& name,
                         const std::function<void(const io::TextSink&)>& produce) {
  stage();
  on_root([&] {
    out_->write(name, produce);
    written_.push_back(name);
  });
}

void Run::write_rows(const std::string& name, const std::vector<std::string>& headers,
                     const std::vector<double>& values) {
  const TableFormat format = output_.table_format;
  if (format == TableFormat::csv) {
    write_streamed(name, [&](const io::TextSink& sink) {
      const std::vector<std::string> ids = input_.row_ids();
      if (ids.empty()) return io::write_csv(sink, headers, values);
      io::write_csv(sink, headers, values, id_header_, ids);
    });
    return;
  }
  const std::string stem = name.substr(0, name.rfind('.'));
  const std::string file = stem + extension(format);
  stage();
  // The table is on rank 0 alone, so rank 0 alone writes it, through MPI-IO
  // on a communicator of its own: the other ranks need not even see the
  // staging directory.
  const Comm alone = world_.split(world_.is_root() ? 0 : 1, 0);
  on_root([&] {
    const auto cols = static_cast<std::int64_t>(headers.size());
    const auto rows = static_cast<std::int64_t>(cols > 0 ? values.size() / headers.size() : 0);
    if (format == TableFormat::npy) io::write_npy(alone, out_->file(file), rows, cols, 0, values);
    else io::write_hdf5_matrix(alone, out_->file(file), "/" + stem, rows, cols, 0, values);
    written_.push_back(file);
  });
  write_row_ids(stem);
}

void Run::write_rows(const std::string& name, const std::vector<std::string>& headers,
                     const DistMatrix& table) {
  const TableFormat format = output_.table_format;
  if (format == TableFormat::csv) {
    write_rows(name, headers, row_major_on_root(table));
    return;
  }
  const std::string stem = name.substr(0, name.rfind('.'));
  const std::string file = stem + extension(format);
  const RowBlock mine = contiguous_rows(table);
  stage();
  std::string path;
  on_root([&] { path = out_->file(file); });
  world_.broadcast(path);
  if (format == TableFormat::npy)
    io::write_npy(world_, path, table.rows(), table.cols(), mine.first_row, mine.values);
  else
    io::write_hdf5_matrix(world_, path, "/" + stem, table.rows(), table.cols(), mine.first_row,
                          mine.values);
  on_root([&] { written_.push_back(file); });
  write_row_ids(stem);
}

void Run::write_row_ids(const std::string& stem) {
  // A binary table has no room for row ids: they go beside it, one a line.
  int has_ids = world_.is_root() && !input_.row_ids().empty() ? 1 : 0;
  world_.broadcast(&has_ids, 1);
  if (has_ids) {
    write(stem + "_ids.csv", [&] {
      std::string text = io::csv_field(id_header_) + "\n";
      for (const std::string& id : input_.row_ids()) text += io::csv_field(id) + "\n";
      return text;
    });
  }
}

std::string Run::staged_path(const std::string& name) {
  stage();
  std::string path;
  on_root([&] {
    path = out_->file(name);
    written_.push_back(name + "/");
  });
  world_.broadcast(path);
  return path;
}

KrylovSettings Run::krylov(const SolveOptions& asked) {
  KrylovSettings settings = asked.krylov;
  settings.progress = progress("krylov cycle");
  return settings;
}

std::function<void(int, int, int, double)> Run::progress(const std::string& step) {
  return [this, step](int n, int converged, int wanted, double max_residual) {
    char line[160];
    std::snprintf(line, sizeof line, "%s %d: %d of %d pairs converged, largest residual %.2e",
                  step.c_str(), n, converged, wanted, max_residual);
    timer_.note(line);
  };
}

Json Run::manifest_header() const {
  Json m;
  m["method"] = method_;
  m["kembed_version"] = KEMBED_VERSION;
  return m;
}

void Run::solver(const SolveOptions& asked, const SolverOutcome& outcome) {
  report["solver"] = solver_name(asked.solver);
  report["solver_used"] = outcome.used;
  if (!outcome.note.empty()) {
    report["solver_note"] = outcome.note;
    if (world_.is_root()) {
      std::fprintf(stderr, "kembed %s: note: %s\n", method_.c_str(), outcome.note.c_str());
      std::fflush(stderr);
    }
  }
  if (outcome.used == "krylov")
    report["krylov"] = {{"tol", asked.krylov.tol},
                        {"seed", asked.krylov.seed},
                        {"cycles", outcome.cycles},
                        {"block_products", outcome.products}};
  if (outcome.used == "lobpcg")  // spectral --affinity knn, preconditioned by the graph's multigrid
    report["lobpcg"] = {{"tol", asked.krylov.tol},
                        {"seed", asked.krylov.seed},
                        {"iterations", outcome.cycles},
                        {"block_products", outcome.products}};
  report["memory_estimate_bytes_per_rank"] = outcome.memory_estimate;
  report["memory_limit_bytes_per_rank"] = outcome.memory_limit;
}

void drive(const boost::program_options::variables_map& vm, const Comm& world, const Job& job,
           const std::function<void(Run&)>& work) {
  std::vector<std::string> reads = job.reads;
  if (vm.count("config")) reads.push_back(vm["config"].as<std::string>());
  const OutputOptions& out = *job.output;
  PhaseTimer timer(world, out.quiet     ? Verbosity::quiet
                          : out.verbose ? Verbosity::verbose
                                        : Verbosity::normal);
  // Slow BLAS kernels would show only as a slow run: say so at its start.
  const std::string blas_note = linalg::blas_core_note(linalg::blas_core(), best_simd_level());
  if (!blas_note.empty() && !out.quiet && world.is_root()) {
    std::fprintf(stderr, "kembed %s: note: %s\n", job.method.c_str(), blas_note.c_str());
    std::fflush(stderr);
  }
  timer.start("read");
  // An HDF5 input reaches other files through external links and virtual
  // datasets: the output check protects those too (rank 0 checks alone).
  collectively(world, [&] {
    if (world.is_root()) reads = io::with_linked_files(reads);
  });
  job.output->check_writable(world, reads);
  const std::unique_ptr<io::MatrixFile> input = job.open(world);
  const BlacsGrid grid = job.layout->make_grid(
      world, job.grid_preference ? job.grid_preference(*input) : GridPreference::near_square);
  if (job.solve && job.solve->dry_run) {
    print_dry_run(world, job.method, job.shape(*input, grid), job.solve->max_memory_per_rank);
    return;
  }

  Run run(world, grid, job.layout->block_size, timer, *input, *job.output, reads);
  run.method_ = job.method;
  // The id column keeps its header name; given by number, it is called "id".
  if (vm.count("id-column")) {
    const std::string id = vm["id-column"].as<std::string>();
    if (id.find_first_not_of("0123456789") != std::string::npos) run.id_header_ = id;
  }
  work(run);
  timer.stop();

  Json report = common_report(job.method, run.block_size(), *input, grid, timer);
  if (run.block_size() != job.layout->block_size)
    report["block_size_requested"] = job.layout->block_size;
  for (const auto& [key, value] : run.report.items()) report[key] = value;
  // Paths need not be UTF-8: replace what JSON cannot hold rather than fail.
  const std::string text = report.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
  run.write("run.json", [&] { return text; });
  // An .h5 result holds the report and the eigenvalues beside its table.
  run.on_root([&] {
    std::vector<double> eigenvalues;
    if (report.contains("eigenvalues") && report["eigenvalues"].is_array())
      for (const Json& v : report["eigenvalues"])
        if (v.is_number()) eigenvalues.push_back(v.get<double>());
    for (const std::string& name : run.written_)
      if (name.size() > 3 && name.compare(name.size() - 3, 3, ".h5") == 0)
        io::annotate_hdf5_result(run.out_->file(name), text, eigenvalues);
  });
  run.on_root([&] { run.out_->commit(); });

  std::string files;
  for (const std::string& name : run.written_) files += (files.empty() ? "" : ", ") + name;
  say(world, job.output->quiet,
      "kembed " + job.method + ": " + run.summary + "; results in " + job.output->output_dir +
          "/ (" + files + ")" + run.summary_tail);
}

}  // namespace kembed::app
