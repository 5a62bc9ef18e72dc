#include "kembed/app/ca_command.hpp"

#include <cmath>

#include "kembed/app/driver.hpp"
#include "kembed/core/error.hpp"
#include "kembed/distribute/read_distributed.hpp"
#include "kembed/io/categorical_file.hpp"
#include "kembed/io/csv_writer.hpp"
#include "kembed/io/model.hpp"
#include "kembed/io/sparse_matrix_input.hpp"
#include "kembed/spectral/burt_inertia.hpp"
#include "kembed/spectral/ca.hpp"
#include "kembed/spectral/sparse_ca.hpp"

namespace kembed::app {

using namespace kembed::spectral;

namespace {

/// --route, --drop-empty: what only CA and MCA ask.
struct CaOptions {
  CaRoute route = CaRoute::automatic;
  bool drop_empty = false;

  static po::options_description description(bool with_drop_empty) {
    po::options_description d("correspondence analysis");
    d.add_options()("route", po::value<std::string>()->default_value("auto"),
                    "auto (rows when I <= J, else columns), rows (S S^T, I x I) or columns "
                    "(S^T S, J x J)");
    if (with_drop_empty)
      d.add_options()("drop-empty", po::bool_switch(),
                      "leave all-zero rows and columns out (listed in run.json) instead of "
                      "refusing the table");
    return d;
  }

  explicit CaOptions(const po::variables_map& vm) {
    route = parse_ca_route(vm["route"].as<std::string>());
    drop_empty = vm.count("drop-empty") && vm["drop-empty"].as<bool>();
  }
};

CaSettings settings_from(const SolveOptions& solve, const CaOptions& ca) {
  CaSettings s;
  s.components = solve.components;
  s.route = ca.route;
  s.solver = solve.solver;
  s.block_size = solve.layout.block_size;
  s.krylov = solve.krylov;
  s.drop_empty = ca.drop_empty;
  s.max_memory_per_rank = solve.max_memory_per_rank;
  return s;
}

/// What the table is: counts from --input (ca), or the indicator matrix of a
/// categorical file (mca), which kembed itself builds as CSR rows.
enum class CaTable { counts, indicator };

/// The one rule of which fit analyses the table, asked by the fit and by
/// the dry run's memory plan: the CSR rows to give fit_sparse_ca, or null
/// for the dense block-cyclic table. A sparse file (.h5ad, .npz, .mtx) is
/// always analysed sparse (fit_sparse_ca refuses the settings it cannot
/// take: --route rows, solvers other than krylov). The indicator matrix is
/// analysed sparse when the solver is krylov or auto and the route is not
/// rows; --solver evd, evr or elpa (the whole spectrum, over which
/// Benzécri's percentages are then taken) and --route rows (S S^T, n x n)
/// keep the dense table, formed block-cyclically from the CSR rows.
const io::SparseMatrixInput* sparse_table(const io::MatrixFile& input, const CaSettings& settings,
                                          CaTable table) {
  const auto* sparse = dynamic_cast<const io::SparseMatrixInput*>(&input);
  if (!sparse || table == CaTable::counts) return sparse;
  const bool krylov = settings.solver == Solver::automatic || settings.solver == Solver::krylov;
  return krylov && settings.route != CaRoute::rows ? sparse : nullptr;
}

/// With --solver auto the sparse fit of the indicator matrix also takes
/// every principal inertia (for Benzécri's percentages) from S^T S formed
/// from the Burt table (indicator_spectrum: J x J, dsyevd) when J is so
/// small that the dense fit's auto would have chosen evd (resolve_solver):
/// the whole spectrum, as the dense table gave it, at a J x J cost.
bool spectrum_from_burt(const CaSettings& settings, std::int64_t categories,
                        const KrylovSettings& krylov) {
  return settings.solver == Solver::automatic &&
         resolve_solver(Solver::automatic, categories, settings.components, krylov) == Solver::evd;
}

/// Collective: the shape the memory plan prices, for the fit sparse_table
/// chooses.
ProblemShape ca_shape(const io::MatrixFile& file, const CaSettings& settings, CaTable table,
                      int nprow, int npcol) {
  if (const auto* sparse = sparse_table(file, settings, table))
    return sparse_problem_shape(file.rows(), file.cols(), sparse->stored_entries(),
                                settings.components, nprow, npcol, settings.block_size,
                                SparseMethod::ca, sparse->busiest_entries());
  return ca_problem_shape(file.rows(), file.cols(), settings, nprow, npcol);
}

// Rank 0: `names`, or 1-based indices when there are none.
std::vector<std::string> labels_or_indices(std::vector<std::string> names, std::int64_t count) {
  if (std::int64_t(names.size()) == count) return names;
  names.clear();
  for (std::int64_t i = 1; i <= count; ++i) names.push_back(std::to_string(i));
  return names;
}

// Rank 0: rows.csv / columns.csv: one line per point that was not dropped.
void points_csv(const io::TextSink& sink, const char* label_header, const CaPoints& p,
                const std::vector<std::string>& labels, int k) {
  std::vector<std::string> header = {"mass", "distance", "inertia", "quality"};
  for (const char* prefix : {"std", "pc", "ctr", "cos2_"})
    for (const auto& name : io::numbered_columns(prefix, k)) header.push_back(name);
  std::vector<double> values;
  std::vector<std::string> ids;
  std::size_t next_dropped = 0;
  for (std::size_t i = 0; i < p.mass.size(); ++i) {
    if (next_dropped < p.dropped.size() && std::size_t(p.dropped[next_dropped]) == i) {
      ++next_dropped;
      continue;
    }
    ids.push_back(labels[i]);
    values.push_back(p.mass[i]);
    values.push_back(std::sqrt(p.inertia[i] / p.mass[i]));
    values.push_back(p.inertia[i]);
    values.push_back(p.quality[i]);
    for (const auto* a : {&p.standard, &p.principal, &p.contribution, &p.cos2})
      for (int t = 0; t < k; ++t) values.push_back((*a)[i * std::size_t(k) + std::size_t(t)]);
  }
  io::write_csv(sink, header, values, label_header, ids);
}

std::string inertias_csv(const CaResult& r) {
  std::vector<double> table;
  double cumulative = 0;
  for (double v : r.principal_inertias) {
    cumulative += v;
    table.insert(table.end(),
                 {v, std::sqrt(v), 100 * v / r.total_inertia, 100 * cumulative / r.total_inertia});
  }
  return io::format_csv(
      {"principal_inertia", "singular_value", "percentage", "cumulative_percentage"}, table);
}

Json dropped_labels(const CaPoints& p, const std::vector<std::string>& labels) {
  Json list = Json::array();
  for (auto i : p.dropped)
    list.push_back(labels.empty() ? std::to_string(i + 1) : labels[std::size_t(i)]);
  return list;
}

// Collective: writes model/ (what supplementary points need) into the
// staging directory.
void save_model(Run& run, const CaResult& r) {
  const std::string dir = run.staged_path("model");
  Json manifest = run.manifest_header();
  manifest["rows"] = r.rows;
  manifest["cols"] = r.cols;
  manifest["k"] = r.k;
  manifest["projection"] =
      "supplementary row h (cols entries): (h / sum h) column_standard; supplementary column b "
      "(given as a row of rows entries): (b / sum b) row_standard; principal coordinates";
  run.on_root([&] {
    io::ModelWriter writer(dir);
    writer.add("row_standard", {r.rows, r.k, r.row_points.standard});
    writer.add("column_standard", {r.cols, r.k, r.col_points.standard});
    writer.add_vector("principal_inertias", r.principal_inertias);
    writer.finish(manifest);
  });
}

/// A fitted CA and the rows it was fitted on (null: the dense table).
struct CaFit {
  CaResult result;
  const io::SparseMatrixInput* sparse = nullptr;
};

// Collective: fits CA on the table of run.input() and writes every output
// of a CA (MCA adds its own fields to run.report afterwards).
CaFit fit_and_write(Run& run, const SolveOptions& solve, CaSettings settings, CaTable kind) {
  io::MatrixFile& input = run.input();
  settings.krylov = run.krylov(solve);
  const std::int64_t rows = input.rows(), cols = input.cols();
  settings.block_size = run.use_block_size_for(
      resolve_ca_route(settings.route, rows, cols) == CaRoute::rows ? rows : cols);
  const int nb = settings.block_size;
  // Labels exist on rank 0 only; every other rank works with empty lists.
  const std::vector<std::string> row_names = input.row_ids(), col_names = input.column_names();

  // Sparse rows go through the sparse operator, anything else as a
  // block-cyclic table (sparse_table: the rule). The sparse rows are read
  // already; the guard counts them with what the solve adds. The dense
  // table is checked before it is formed: it is the largest item after the
  // cross-product.
  const auto* sparse = sparse_table(input, settings, kind);
  MemoryCheck memory =
      check_memory(ca_shape(input, settings, kind, run.grid().nprow(), run.grid().npcol()),
                   settings.max_memory_per_rank, run.world());
  CaResult r;
  std::string fallback;  // why the indicator was formed dense after all
  if (sparse) {
    try {
      r = fit_sparse_ca(sparse->csr(), run.grid(), settings, input.path(), run.timer());
    } catch (const Error& e) {
      // Errors are agreed: every rank takes the same branch. An indicator
      // matrix with a variable of many rare categories has a highly
      // degenerate spectrum, on which the block Krylov iteration can break
      // down; the dense indicator then takes evd, as the dense path's
      // krylov falls back to a dense solver, where the memory guard allows.
      const std::string what = e.what();
      if (kind != CaTable::indicator || what.rfind("krylov ", 0) != 0) throw;
      // The operator's advice names --storage, which mca does not have.
      const std::string failure = what.substr(0, what.find(" with the matrix-free operator")) +
                                  " on the sparse indicator matrix";
      fallback = failure + "; fell back to evd on the dense one";
      settings.solver = Solver::evd;
      try {
        memory =
            check_memory(ca_shape(input, settings, kind, run.grid().nprow(), run.grid().npcol()),
                         settings.max_memory_per_rank, run.world());
      } catch (const Error& refused) {
        throw Error(failure +
                    "; raise --tol, or give the fallback (evd on the dense indicator "
                    "matrix) the memory it needs: " +
                    refused.what());
      }
      sparse = nullptr;
    }
  }
  if (!sparse) {
    run.timer().start("distribute");
    DistMatrix table(run.grid(), rows, cols, nb, nb);
    distribute::read_block_cyclic(input, table);
    r = fit_ca(table, settings, input.path(), row_names, col_names, run.timer());
  }
  if (!fallback.empty())
    r.solver_note = r.solver_note.empty() ? fallback : fallback + "; " + r.solver_note;
  run.solver(solve, {r.solver_used, r.solver_note, r.iterations, r.matvecs, memory.estimate,
                     memory.limit});

  run.timer().start("write");
  std::vector<std::string> row_labels, col_labels;
  if (run.world().is_root()) {
    row_labels = labels_or_indices(row_names, rows);
    col_labels = labels_or_indices(col_names, cols);
  }
  run.write("inertias.csv", [&] { return inertias_csv(r); });
  run.write_streamed("rows.csv", [&](const io::TextSink& sink) {
    points_csv(sink, "row", r.row_points, row_labels, r.k);
  });
  run.write_streamed("columns.csv", [&](const io::TextSink& sink) {
    points_csv(sink, "column", r.col_points, col_labels, r.k);
  });
  run.timer().start("model");
  save_model(run, r);

  Json& report = run.report;
  if (sparse) {
    report["input_storage"] = "sparse (" + sparse->format() +
                              "): CSR rows, the standardized residuals applied as an operator; "
                              "the dense table is never formed";
    report["stored_entries"] = run.world().sum(static_cast<long long>(sparse->csr().nonzeros()));
  } else if (kind == CaTable::indicator) {
    report["input_storage"] =
        "dense (categorical): the indicator matrix formed block-cyclically from its CSR rows, " +
        (fallback.empty() ? "for --solver " + solver_name(settings.solver) + " / --route " +
                                ca_route_name(settings.route) +
                                " (krylov or auto with another route keep it sparse)"
                          : std::string("after krylov failed on the sparse one (solver_note)"));
  }
  report["route"] = ca_route_name(r.route);
  report["route_requested"] = ca_route_name(settings.route);
  report["rows"] = r.rows;
  report["columns"] = r.cols;
  report["components"] = r.k;
  report["grand_total"] = r.grand_total;
  report["total_inertia"] = r.total_inertia;
  report["chi_square"] = r.total_inertia * r.grand_total;
  report["principal_inertias"] = r.principal_inertias;
  std::vector<double> percentages;
  for (double v : r.principal_inertias) percentages.push_back(100 * v / r.total_inertia);
  report["percentages"] = percentages;
  if (run.world().is_root()) {
    report["dropped_rows"] = dropped_labels(r.row_points, row_names);
    report["dropped_columns"] = dropped_labels(r.col_points, col_names);
  }
  if (!r.spectrum.empty()) report["spectrum"] = r.spectrum;
  report["relative_residuals"] = r.residuals;
  report["residual_definition"] = r.route == CaRoute::rows
                                      ? "||A u - lambda u||_2 / ||A||_F, A = S S^T"
                                      : "||A v - lambda v||_2 / ||A||_F, A = S^T S";
  report["definitions"] = {
      {"P", "N / n, n the grand total of the counts N"},
      {"mass", "row masses r = P 1, column masses c = P^T 1"},
      {"S", "standardized residuals D_r^{-1/2} (P - r c^T) D_c^{-1/2} = U Sigma V^T"},
      {"total_inertia", "||S||_F^2 = sum_ij (p_ij - r_i c_j)^2 / (r_i c_j) = chi-square / n"},
      {"principal_inertia",
       "sigma_k^2, eigenvalue k of S S^T (= of S^T S); percentage = "
       "100 sigma_k^2 / total inertia"},
      {"std",
       "standard coordinates: rows Phi = D_r^{-1/2} U, columns Gamma = D_c^{-1/2} V "
       "(R ca: rowcoord, colcoord)"},
      {"pc", "principal coordinates: F = Phi Sigma, G = Gamma Sigma"},
      {"distance",
       "chi-square distance of the profile to the average profile, d_i = "
       "sqrt(sum_j (p_ij / r_i - c_j)^2 / c_j) (R ca: rowdist)"},
      {"inertia",
       "r_i d_i^2 = sum_j s_ij^2, the point's share of the total inertia (R ca: "
       "rowinertia)"},
      {"ctr",
       "contribution to dimension k: r_i phi_ik^2 (sums to 1 over the points; R's "
       "summary prints it in per mille)"},
      {"cos2",
       "squared correlation with dimension k: f_ik^2 / d_i^2 (0 when d_i = 0; R's "
       "summary: cor, per mille)"},
      {"quality", "sum of cos2 over the K kept dimensions (R's summary: qlt, per mille)"},
      {"dropped",
       "all-zero rows and columns left out with --drop-empty: not in rows.csv / "
       "columns.csv, no mass"}};
  report["sign_convention"] =
      "in each dimension the row standard coordinate of largest magnitude is positive (the "
      "first within a relative 1e-8 on ties); column coordinates follow, so the transition "
      "formulas hold. R's ca keeps the signs of LAPACK's SVD: a dimension may differ from it "
      "by a sign";
  run.summary = std::to_string(r.rows) + " x " + std::to_string(r.cols) +
                " table, k = " + std::to_string(r.k) + ", total inertia " +
                std::to_string(r.total_inertia) + " (" + ca_route_name(r.route) + " route), " +
                std::to_string(run.world().size()) + " ranks";
  return {std::move(r), sparse};
}

}  // namespace

// S^T S (J x J) of whole rows on P x 1, S S^T on 1 x P: one local product per
// rank and a reduction (the pca rule).
GridPreference ca_grid(CaRoute route, std::int64_t rows, std::int64_t cols) {
  return resolve_ca_route(route, rows, cols) == CaRoute::columns ? GridPreference::cross_columns
                                                                 : GridPreference::cross_rows;
}

po::options_description ca_options() {
  po::options_description all;
  all.add(InputOptions::description(
              "I x J table of non-negative counts (.csv/.tsv/.txt, .npy, .bin); row labels "
              "with --id-column, column labels from a header"))
      .add(OutputOptions::description())
      .add(SolveOptions::description())
      .add(CaOptions::description(true));
  return all;
}

void run_ca(const po::variables_map& vm, const Comm& world) {
  const InputOptions in(vm);
  const OutputOptions output(vm);
  const SolveOptions solve(vm);
  refuse_table_format(output, "ca", "inertias.csv, rows.csv and columns.csv");
  const CaSettings settings = settings_from(solve, CaOptions(vm));
  Job job("ca", output, solve.layout, {in.input}, [&](const Comm& c) { return in.open(c); });
  job.with_grid(
      [&](const io::MatrixFile& file) { return ca_grid(settings.route, file.rows(), file.cols()); });
  job.with_dry_run(solve, [&](const io::MatrixFile& file, const BlacsGrid& grid) {
    return ca_shape(file, settings, CaTable::counts, grid.nprow(), grid.npcol());
  });
  drive(vm, world, job, [&](Run& run) {
    const CaResult r = fit_and_write(run, solve, settings, CaTable::counts).result;
    if (!r.row_points.dropped.empty() || !r.col_points.dropped.empty())
      run.summary_tail = "; --drop-empty left out " + std::to_string(r.row_points.dropped.size()) +
                         " empty rows and " + std::to_string(r.col_points.dropped.size()) +
                         " empty columns (run.json lists them)";
  });
}

po::options_description mca_options() {
  po::options_description input("input");
  input.add_options()("input,i", po::value<std::string>(),
                      "CSV of categorical variables: a header of variable names, one row per "
                      "individual, categories as text or integers")(
      "id-column", po::value<std::string>(),
      "the column (header name or 1-based number) of row ids: not a variable; the ids label "
      "rows.csv");
  po::options_description all;
  all.add(input)
      .add(OutputOptions::description())
      .add(SolveOptions::description())
      .add(CaOptions::description(false));
  return all;
}

void run_mca(const po::variables_map& vm, const Comm& world) {
  if (!vm.count("input")) throw Error("mca needs --input CATEGORICAL.csv");
  const std::string path = vm["input"].as<std::string>();
  const std::string id_column = vm.count("id-column") ? vm["id-column"].as<std::string>() : "";
  if (vm.count("id-column") && id_column.empty())
    throw Error("--id-column needs a column name or number");
  const OutputOptions output(vm);
  const SolveOptions solve(vm);
  refuse_table_format(output, "mca", "inertias.csv, rows.csv and columns.csv");
  const CaSettings settings = settings_from(solve, CaOptions(vm));
  Job job("mca", output, solve.layout, {path},
          [&](const Comm& c) { return io::open_indicator_matrix(c, path, id_column); });
  job.with_grid(
      [&](const io::MatrixFile& file) { return ca_grid(settings.route, file.rows(), file.cols()); });
  job.with_dry_run(solve, [&](const io::MatrixFile& file, const BlacsGrid& grid) {
    return ca_shape(file, settings, CaTable::indicator, grid.nprow(), grid.npcol());
  });
  drive(vm, world, job, [&](Run& run) {
    // Every row of the indicator matrix stores Q ones, Q the number of
    // variables (open_indicator_matrix).
    const std::int64_t n = run.input().rows(), categories = run.input().cols();
    const auto& indicator = dynamic_cast<const io::SparseMatrixInput&>(run.input()).csr();
    const double q = double(run.world().sum(static_cast<long long>(indicator.nonzeros())) / n);
    const CaFit fit = fit_and_write(run, solve, settings, CaTable::indicator);
    const CaResult& r = fit.result;
    // Benzécri: (Q/(Q-1))^2 (lambda - 1/Q)^2 for indicator inertias lambda >
    // 1/Q. Greenacre: the same values as a share of the adjusted total
    // Q/(Q-1) (sum of all lambda^2 - (J-Q)/Q^2), the Burt inertia
    // (sum lambda^2 = ||S^T S||_F^2) less its diagonal blocks' part.
    const auto adjust = [q](double lambda) {
      return lambda > 1 / q ? std::pow(q / (q - 1) * (lambda - 1 / q), 2) : 0.0;
    };
    std::vector<double> adjusted, benzecri, greenacre;
    for (double lambda : r.principal_inertias) adjusted.push_back(adjust(lambda));
    // Benzécri's percentages need every lambda > 1/Q: the whole spectrum
    // when the solver computed it (or the Burt table gives it), else the K
    // kept ones.
    std::vector<double> spectrum = r.spectrum;
    if (fit.sparse && spectrum_from_burt(settings, categories, solve.krylov)) {
      spectrum = indicator_spectrum(indicator, run.world());
      run.report["spectrum"] = spectrum;
    }
    double adjusted_sum = 0;
    for (double lambda : spectrum.empty() ? r.principal_inertias : spectrum)
      adjusted_sum += adjust(lambda);
    // Sum of all lambda^2: ||S^T S||_F^2 of the solved matrix on the dense
    // path; the sparse fit never forms S^T S (its norm there is only the
    // bound trace(S^T S)), so the Burt table is formed from the CSR rows.
    const double burt =
        fit.sparse ? burt_inertia(indicator, run.world()) : r.solved_frobenius * r.solved_frobenius;
    const double greenacre_total =
        q > 1 ? q / (q - 1) * (burt - (double(categories) - q) / (q * q)) : 0.0;
    for (double a : adjusted) {
      benzecri.push_back(adjusted_sum > 0 ? 100 * a / adjusted_sum : 0.0);
      greenacre.push_back(greenacre_total > 0 ? 100 * a / greenacre_total : 0.0);
    }
    Json& report = run.report;
    report["individuals"] = n;
    report["variables"] = q;
    report["categories"] = categories;
    report["indicator_total_inertia_expected"] = (double(categories) - q) / q;
    report["burt_total_inertia"] = burt;
    report["burt_total_inertia_from"] =
        fit.sparse ? "the Burt table Z^T Z, formed exactly from the indicator's CSR rows"
                   : "||A||_F^2 of the solved cross product A (S^T S or S S^T)";
    if (q > 1) {
      report["adjusted_inertias"] = adjusted;
      report["benzecri_percentages"] = benzecri;
      std::string over =
          "every principal inertia above 1/Q (the whole spectrum, " + r.solver_used + ")";
      if (spectrum.empty())
        over = "the K computed principal inertias above 1/Q (the " + r.solver_used +
               " solver does not compute the whole spectrum; --solver evd does)";
      else if (r.spectrum.empty())
        over =
            "every principal inertia above 1/Q (the whole spectrum, from the J x J S^T S "
            "formed from the Burt table: J is small)";
      report["benzecri_lambdas"] = over;
      report["greenacre_adjusted_total_inertia"] = greenacre_total;
      report["greenacre_percentages"] = greenacre;
    } else {
      // Both adjustments scale by Q/(Q-1): with one variable there is no
      // value to report, not a zero.
      for (const char* key : {"adjusted_inertias", "benzecri_percentages",
                              "greenacre_adjusted_total_inertia", "greenacre_percentages"})
        report[key] = nullptr;
      report["adjustments_undefined"] =
          "Benzecri's adjusted inertias and Greenacre's adjusted total scale by Q/(Q-1), "
          "undefined for a single variable (Q = 1); they are null. The indicator analysis of "
          "one variable has every principal inertia equal to 1";
    }
    report["mca_definitions"] = {
        {"indicator",
         "Z, n x J, z_ij = 1 when individual i takes category j; CA of Z. Built as CSR rows "
         "(Q entries a row); analysed sparse with the krylov solver (auto, krylov), formed "
         "dense for evd, evr, elpa and --route rows (input_storage says which)"},
        {"adjusted_inertia",
         "Benzecri: (Q/(Q-1))^2 (lambda_k - 1/Q)^2 for lambda_k > 1/Q, else 0; lambda_k the "
         "principal inertias of the indicator CA"},
        {"benzecri_percentages",
         "100 adjusted_k / sum of the adjusted inertias of every lambda > 1/Q (of the K kept "
         "ones when the whole spectrum is not computed; benzecri_lambdas says which)"},
        {"burt_total_inertia",
         "sum of all lambda^2 = inertia of the Burt matrix Z^T Z = ||S^T S||_F^2 "
         "(burt_total_inertia_from says how it was computed)"},
        {"greenacre_adjusted_total_inertia",
         "Q/(Q-1) (burt_total_inertia - (J - Q)/Q^2) (Greenacre 2007, ch. 19)"},
        {"greenacre_percentages", "100 adjusted_k / greenacre_adjusted_total_inertia"},
        {"categories_order",
         "per variable: numerically when every value is an integer, else "
         "byte order; columns.csv labels them variable:category"}};
    run.summary = "MCA of " + std::to_string(n) + " individuals, " +
                  std::to_string(static_cast<int>(q)) + " variables, " +
                  std::to_string(categories) + " categories, k = " + std::to_string(r.k);
  });
}

Projection project_ca(const io::Model& model, io::MatrixFile& points, const BlacsGrid& grid,
                      int block_size) {
  const Comm& comm = grid.comm();
  std::int64_t rows = 0, cols = 0;
  int k = 0;
  collectively(comm, [&] {
    rows = model.integer("rows", 2, INT64_MAX);
    cols = model.integer("cols", 2, INT64_MAX);
    k = int(model.integer("k", 1, std::min(rows, cols) - 1));
  });
  // A profile over the table's columns is a supplementary row; one over its
  // rows (I != J) a supplementary column.
  const bool column_points = points.cols() == rows && rows != cols;
  auto standard = model.large(comm, column_points ? "row_standard" : "column_standard");
  if (standard->cols() != k)
    agree(comm, model.manifest_path() + ": the standard coordinates have " +
                    std::to_string(standard->cols()) +
                    " columns, the manifest says k = " + std::to_string(k));
  return {k, ca_supplementary(*standard, points, grid, block_size)};
}

}  // namespace kembed::app
