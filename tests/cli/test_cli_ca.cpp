// kembed ca and kembed mca end to end: a labelled count table against a
// Jacobi eigen-decomposition of S^T S formed here, the transition formulas
// and chi-square / n read back from the output files, the same numbers on 1
// and 4 ranks; MCA of two variables against the CA of their cross-table
// (indicator inertias (1 + sqrt(lambda))/2, Benzécri's adjusted inertias and
// Greenacre's adjusted total equal to the cross-table's); bad tables refused
// on every rank.
#include "cli/cli_support.hpp"

using namespace cli_test;

namespace {

// A labelled output table: label column, then numbers.
struct Points {
  std::vector<std::string> header, labels;
  Matrix values;
};

Points read_points(const fs::path& path) {
  Points p;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::stringstream h(line);
  for (std::string cell; std::getline(h, cell, ',');) p.header.push_back(cell);
  p.values.cols = p.header.size() - 1;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::string cell;
    std::getline(row, cell, ',');
    p.labels.push_back(cell);
    while (std::getline(row, cell, ',')) p.values.v.push_back(std::strtod(cell.c_str(), nullptr));
    ++p.values.rows;
  }
  EXPECT_EQ(p.values.v.size(), p.values.rows * p.values.cols) << path;
  return p;
}

std::size_t column(const Points& p, const std::string& name) {
  const auto at = std::find(p.header.begin(), p.header.end(), name);
  EXPECT_NE(at, p.header.end()) << name;
  return std::size_t(at - p.header.begin()) - 1;
}

// Counts with structure; row i, column j.
Matrix table(std::size_t rows, std::size_t cols) {
  Matrix n = zeros(rows, cols);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j)
      n(i, j) = double((i * 5 + j * 3 + i * j) % 9 + (i % cols == j ? 7 : 1));
  return n;
}

struct Reference {
  std::vector<double> r, c, inertias;  // masses; eigenvalues of S^T S, descending
  Matrix s;                            // standardized residuals
  Matrix v;                            // eigenvectors of S^T S
  double chi2_over_n = 0;
};

Reference reference(const Matrix& n) {
  Reference ref;
  double total = 0;
  ref.r.assign(n.rows, 0.0);
  ref.c.assign(n.cols, 0.0);
  for (std::size_t i = 0; i < n.rows; ++i)
    for (std::size_t j = 0; j < n.cols; ++j) {
      total += n(i, j);
      ref.r[i] += n(i, j);
      ref.c[j] += n(i, j);
    }
  for (std::size_t i = 0; i < n.rows; ++i)
    for (std::size_t j = 0; j < n.cols; ++j) {
      const double e = ref.r[i] * ref.c[j] / total;
      ref.chi2_over_n += (n(i, j) - e) * (n(i, j) - e) / e / total;
    }
  for (double& x : ref.r) x /= total;
  for (double& x : ref.c) x /= total;
  ref.s = zeros(n.rows, n.cols);
  for (std::size_t i = 0; i < n.rows; ++i)
    for (std::size_t j = 0; j < n.cols; ++j)
      ref.s(i, j) = (n(i, j) / total - ref.r[i] * ref.c[j]) / std::sqrt(ref.r[i] * ref.c[j]);
  Matrix sts = zeros(n.cols, n.cols);
  for (std::size_t a = 0; a < n.cols; ++a)
    for (std::size_t b = 0; b < n.cols; ++b)
      for (std::size_t i = 0; i < n.rows; ++i) sts(a, b) += ref.s(i, a) * ref.s(i, b);
  jacobi_eigen(sts, ref.inertias, ref.v);
  return ref;
}

std::string labelled_csv(const Matrix& n) {
  std::string text = "region";
  for (std::size_t j = 0; j < n.cols; ++j) text += ",term" + std::to_string(j + 1);
  text += "\n";
  for (std::size_t i = 0; i < n.rows; ++i) {
    text += "r" + std::to_string(i + 1);
    for (std::size_t j = 0; j < n.cols; ++j) text += "," + format_g17(n(i, j));
    text += "\n";
  }
  return text;
}

TEST(CliCa, MatchesJacobiAndTransitionFormulasOnOneAndFourRanks) {
  const fs::path dir = scratch_dir("ca_main");
  const std::size_t rows = 8, cols = 5;
  const int k = 3;
  const Matrix n = table(rows, cols);
  write_file(dir / "t.csv", labelled_csv(n));
  const Reference ref = reference(n);
  double total = 0;
  for (double x : n.v) total += x;

  std::vector<Points> row_out, col_out;
  struct Layout {
    int np;
    const char* grid;  // "": the default, P x 1 for this tall table
  };
  for (const Layout& layout : {Layout{1, ""}, Layout{4, ""}, Layout{4, "2x2"}}) {
    const int np = layout.np;
    const fs::path out = dir / ("out" + std::to_string(np) + layout.grid);
    std::vector<std::string> args = {"ca", "--input", (dir / "t.csv").string(), "--id-column",
                                     "region", "-k", std::to_string(k), "--output-dir",
                                     out.string()};
    if (*layout.grid) args = concat(args, {"--grid", layout.grid, "--block-size", "2"});
    const RunResult r = run_kembed(args, np);
    ASSERT_TRUE(r.all_ranks_succeeded()) << r.describe();
    EXPECT_TRUE(contains(r.out, "8 x 5 table, k = 3")) << r.out;
    const Json report = Json::parse(read_file(out / "run.json"));
    EXPECT_EQ(report["route"], "columns");
    const Json grid = *layout.grid ? Json{{"nprow", 2}, {"npcol", 2}}
                                   : Json{{"nprow", np}, {"npcol", 1}};
    EXPECT_EQ(report["grid"], grid);
    EXPECT_NEAR(report["total_inertia"].get<double>(), ref.chi2_over_n, 1e-13);
    EXPECT_NEAR(report["chi_square"].get<double>(), ref.chi2_over_n * total, 1e-10);
    const Csv inertias = read_result_csv(out / "inertias.csv");
    ASSERT_EQ(inertias.data.rows, std::size_t(k));
    for (int t = 0; t < k; ++t) {
      EXPECT_NEAR(inertias.data(t, 0), ref.inertias[t], 1e-13);
      EXPECT_NEAR(inertias.data(t, 2), 100 * ref.inertias[t] / ref.chi2_over_n, 1e-10);
    }
    row_out.push_back(read_points(out / "rows.csv"));
    col_out.push_back(read_points(out / "columns.csv"));
  }
  const Points& rp = row_out[0];
  const Points& cp = col_out[0];
  ASSERT_EQ(rp.values.rows, rows);
  ASSERT_EQ(cp.values.rows, cols);
  EXPECT_EQ(rp.header[0], "row");
  EXPECT_EQ(rp.labels[2], "r3");
  EXPECT_EQ(cp.labels[4], "term5");
  // Same numbers on 4 ranks (4 x 1 and 2 x 2) as on 1.
  for (std::size_t run = 1; run < row_out.size(); ++run) {
    EXPECT_LT(max_abs_diff(row_out[run].values, rp.values), 1e-10);
    EXPECT_LT(max_abs_diff(col_out[run].values, cp.values), 1e-10);
  }

  for (int t = 0; t < k; ++t) {
    const std::string d = std::to_string(t + 1);
    const std::size_t std_col = column(rp, "std" + d), pc_col = column(rp, "pc" + d);
    const double sigma = std::sqrt(ref.inertias[t]);
    // Row standard coordinates from the Jacobi vectors: S v / sigma / sqrt(r),
    // signed so that the largest |entry| is positive.
    Matrix phi = zeros(rows, 1);
    for (std::size_t i = 0; i < rows; ++i) {
      for (std::size_t j = 0; j < cols; ++j) phi(i, 0) += ref.s(i, j) * ref.v(j, t);
      phi(i, 0) /= sigma * std::sqrt(ref.r[i]);
    }
    std::size_t arg = 0;
    for (std::size_t i = 1; i < rows; ++i)
      if (std::abs(phi(i, 0)) > std::abs(phi(arg, 0))) arg = i;
    const double sign = phi(arg, 0) < 0 ? -1 : 1;
    for (std::size_t i = 0; i < rows; ++i) {
      EXPECT_NEAR(rp.values(i, std_col), sign * phi(i, 0), 1e-9) << "row " << i << " dim " << d;
      EXPECT_NEAR(rp.values(i, pc_col), sign * phi(i, 0) * sigma, 1e-9);
      // F = D_r^{-1} P G_std.
      double f = 0;
      for (std::size_t j = 0; j < cols; ++j)
        f += n(i, j) / total / ref.r[i] * cp.values(j, column(cp, "std" + d));
      EXPECT_NEAR(rp.values(i, pc_col), f, 1e-10);
    }
    for (std::size_t j = 0; j < cols; ++j) {
      EXPECT_NEAR(cp.values(j, column(cp, "std" + d)), sign * ref.v(j, t) / std::sqrt(ref.c[j]),
                  1e-9);
      // G = D_c^{-1} P^T F_std.
      double g = 0;
      for (std::size_t i = 0; i < rows; ++i)
        g += n(i, j) / total / ref.c[j] * rp.values(i, std_col);
      EXPECT_NEAR(cp.values(j, column(cp, "pc" + d)), g, 1e-10);
    }
  }
  for (std::size_t i = 0; i < rows; ++i)
    EXPECT_NEAR(rp.values(i, column(rp, "mass")), ref.r[i], 1e-15);

  // Supplementary points through transform: a fitted row (and the same row
  // doubled: only the profile counts) lands on its principal coordinates, and
  // so does a fitted column given as a row of I counts.
  std::string sup_rows, sup_col;
  for (std::size_t j = 0; j < cols; ++j) {
    sup_rows += (j ? "," : "") + format_g17(n(2, j));
  }
  sup_rows += "\n";
  for (std::size_t j = 0; j < cols; ++j) sup_rows += (j ? "," : "") + format_g17(2 * n(6, j));
  sup_rows += "\n";
  for (std::size_t i = 0; i < rows; ++i) sup_col += (i ? "," : "") + format_g17(n(i, 1));
  write_file(dir / "sup_rows.csv", sup_rows);
  write_file(dir / "sup_col.csv", sup_col + "\n");
  const struct {
    std::string file;
    const Points* fitted;
    std::vector<std::size_t> match;
  } sups[] = {{"sup_rows.csv", &rp, {2, 6}}, {"sup_col.csv", &cp, {1}}};
  for (const auto& sup : sups) {
    const fs::path out = dir / ("t_" + sup.file);
    const RunResult r =
        run_kembed({"transform", "--model", (dir / "out4" / "model").string(), "--input",
                    (dir / sup.file).string(), "--output-dir", out.string()},
                   2);
    ASSERT_TRUE(r.all_ranks_succeeded()) << r.describe();
    const Csv z = read_result_csv(out / "embedding.csv");
    ASSERT_EQ(z.data.rows, sup.match.size());
    for (std::size_t s = 0; s < sup.match.size(); ++s)
      for (int t = 0; t < k; ++t)
        EXPECT_NEAR(
            z.data(s, t),
            sup.fitted->values(sup.match[s], column(*sup.fitted, "pc" + std::to_string(t + 1))),
            1e-10)
            << sup.file;
  }
}

// Two variables: the indicator CA's top inertias are (1 + sqrt(lambda))/2,
// lambda those of the cross-table CA (Greenacre 2007, ch. 18); Benzécri's
// adjusted inertias are then lambda, and Greenacre's adjusted total the
// cross-table's total inertia.
TEST(CliCa, McaOfTwoVariablesMatchesCaOfTheirCrossTable) {
  const fs::path dir = scratch_dir("mca");
  const std::vector<std::string> a_levels = {"apple", "berry", "cherry", "date"};
  const std::vector<std::string> b_levels = {"1", "2", "10"};  // numeric order, not text
  std::string csv = "fruit,size\n";
  Matrix cross = zeros(4, 3);
  for (int i = 0; i < 60; ++i) {
    const int a = (i * 7) % 4, b = (a + (i % 5 == 0 ? 1 : 0) + (i % 7 == 0 ? 2 : 0)) % 3;
    csv += a_levels[a] + "," + b_levels[b] + "\n";
    cross(a, b) += 1;
  }
  write_file(dir / "cat.csv", csv);
  const Reference ref = reference(cross);
  for (int np : {1, 3}) {
    const fs::path out = dir / ("out" + std::to_string(np));
    const RunResult r = run_kembed(
        {"mca", "--input", (dir / "cat.csv").string(), "-k", "2", "--output-dir", out.string()},
        np);
    ASSERT_TRUE(r.all_ranks_succeeded()) << r.describe();
    const Json report = Json::parse(read_file(out / "run.json"));
    EXPECT_EQ(report["variables"].get<double>(), 2);
    EXPECT_EQ(report["grid"], (Json{{"nprow", np}, {"npcol", 1}}));  // 60 x 7: tall
    EXPECT_EQ(report["categories"].get<int>(), 7);
    for (int t = 0; t < 2; ++t) {
      EXPECT_NEAR(report["principal_inertias"][t].get<double>(),
                  (1 + std::sqrt(ref.inertias[t])) / 2, 1e-12);
      EXPECT_NEAR(report["adjusted_inertias"][t].get<double>(), ref.inertias[t], 1e-12);
      EXPECT_NEAR(report["benzecri_percentages"][t].get<double>(),
                  100 * ref.inertias[t] / ref.chi2_over_n, 1e-9);
      EXPECT_NEAR(report["greenacre_percentages"][t].get<double>(),
                  100 * ref.inertias[t] / ref.chi2_over_n, 1e-9);
    }
    EXPECT_NEAR(report["greenacre_adjusted_total_inertia"].get<double>(), ref.chi2_over_n, 1e-12);
    EXPECT_NEAR(report["total_inertia"].get<double>(), (7.0 - 2) / 2, 1e-12);
    const Points cp = read_points(out / "columns.csv");
    EXPECT_EQ(cp.labels, (std::vector<std::string>{"fruit:apple", "fruit:berry", "fruit:cherry",
                                                   "fruit:date", "size:1", "size:2", "size:10"}));
  }
}

TEST(CliCa, BadTablesAreRefusedOnEveryRankAndDropEmptySaysSo) {
  const fs::path dir = scratch_dir("ca_bad");
  write_file(dir / "negative.csv", "1,2,3\n4,5,-1\n7,8,9\n");
  write_file(dir / "nan.csv", "1,2,3\n4,nan,6\n7,8,9\n");
  write_file(dir / "zero.csv", "1,2,3\n4,5,6\n0,0,0\n7,8,9\n");
  write_file(dir / "one.csv", "1,2,3\n");
  write_file(dir / "independent.csv", "1,2,3\n2,4,6\n3,6,9\n");
  const struct {
    std::string file;
    int np;
    std::string expected;
  } cases[] = {
      {"negative.csv", 4, "row 2, column 3 holds the negative count -1"},
      {"nan.csv", 1, "nan.csv:2: column 2"},
      {"zero.csv", 4,
       "row 3 is all zero (its profile is undefined); remove it or pass --drop-empty"},
      {"one.csv", 1, "at least 2 non-empty rows and 2 non-empty columns, the table has 1 x 3"},
      {"independent.csv", 4, "the table is one of independence"},
  };
  for (const auto& c : cases) {
    const fs::path out = dir / "out";
    const RunResult r = run_kembed(
        {"ca", "--input", (dir / c.file).string(), "-k", "1", "--output-dir", out.string()}, c.np);
    EXPECT_FALSE(r.timed_out()) << r.describe();
    EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
    EXPECT_TRUE(contains(r.err, c.expected)) << r.describe();
    EXPECT_FALSE(fs::exists(out));
  }
  const fs::path out = dir / "dropped";
  const RunResult r = run_kembed({"ca", "--input", (dir / "zero.csv").string(), "-k", "1",
                                  "--drop-empty", "--output-dir", out.string()},
                                 4);
  ASSERT_TRUE(r.all_ranks_succeeded()) << r.describe();
  EXPECT_TRUE(contains(r.out, "--drop-empty left out 1 empty rows and 0 empty columns")) << r.out;
  EXPECT_EQ(read_points(out / "rows.csv").labels, (std::vector<std::string>{"1", "2", "4"}));
  EXPECT_EQ(Json::parse(read_file(out / "run.json"))["dropped_rows"], Json::array({"3"}));
}

// The example configs run as written (their keys are valid options), and the
// smoking table gives the principal inertias published for it (Greenacre,
// "Correspondence Analysis in Practice": 0.07476, 0.01002 of a total 0.08519).
TEST(CliCa, ExampleConfigsRunAndTheSmokingTableGivesItsPublishedInertias) {
  const fs::path dir = scratch_dir("ca_configs");
  const std::string src = KEMBED_SOURCE_DIR;
  const RunResult r = run_kembed({"ca", "--config", src + "/configs/ca-smoke.ini", "--input",
                                  src + "/docs/data/smoke.csv", "--output-dir",
                                  (dir / "smoke").string()},
                                 2);
  ASSERT_TRUE(r.all_ranks_succeeded()) << r.describe();
  const Json report = Json::parse(read_file(dir / "smoke" / "run.json"));
  EXPECT_NEAR(report["total_inertia"].get<double>(), 0.08519, 5e-6);
  const Csv inertias = read_result_csv(dir / "smoke" / "inertias.csv");
  ASSERT_EQ(inertias.data.rows, 2u);
  EXPECT_NEAR(inertias.data(0, 0), 0.07476, 5e-6);
  EXPECT_NEAR(inertias.data(1, 0), 0.01002, 5e-6);
  EXPECT_EQ(read_points(dir / "smoke" / "rows.csv").labels,
            (std::vector<std::string>{"SM", "JM", "SE", "JE", "SC"}));

  const RunResult m = run_kembed({"mca", "--config", src + "/configs/mca-survey.ini", "--input",
                                  src + "/docs/data/survey.csv", "--output-dir",
                                  (dir / "survey").string()},
                                 2);
  ASSERT_TRUE(m.all_ranks_succeeded()) << m.describe();
  const Json survey = Json::parse(read_file(dir / "survey" / "run.json"));
  EXPECT_EQ(survey["components"], 2);
  EXPECT_EQ(survey["variables"], 3);  // the respondent column is an id, not a variable
  const auto respondents = read_points(dir / "survey" / "rows.csv").labels;
  ASSERT_EQ(respondents.size(), 40u);
  EXPECT_EQ(respondents.front(), "r01");
  EXPECT_EQ(respondents.back(), "r40");
}

}  // namespace

// One variable: Z's CA has S^T S = I - sqrt(c) sqrt(c)^T, so every principal
// inertia is 1 and the total J - 1. Benzécri's and Greenacre's adjustments
// scale by Q/(Q-1): undefined for Q = 1, so run.json holds null for them,
// never a number.
TEST(CliCa, McaOfOneVariableReportsTheAdjustmentsAsUndefined) {
  const fs::path dir = scratch_dir("mca_one");
  const std::vector<std::string> levels = {"red", "green", "blue", "grey", "pink"};
  std::string csv = "colour\n";
  for (int i = 0; i < 40; ++i) csv += levels[(i * 7 + i / 3) % 5] + "\n";
  write_file(dir / "one.csv", csv);
  for (int np : {1, 4}) {
    const fs::path out = dir / ("out" + std::to_string(np));
    const RunResult r = run_kembed(
        {"mca", "--input", (dir / "one.csv").string(), "-k", "2", "--output-dir", out.string()},
        np);
    ASSERT_TRUE(r.all_ranks_succeeded()) << r.describe();
    const Json report = Json::parse(read_file(out / "run.json"));
    EXPECT_EQ(report["variables"].get<double>(), 1);
    EXPECT_NEAR(report["total_inertia"].get<double>(), 4.0, 1e-12);
    for (int t = 0; t < 2; ++t)
      EXPECT_NEAR(report["principal_inertias"][t].get<double>(), 1.0, 1e-12);
    for (const char* key : {"adjusted_inertias", "benzecri_percentages",
                            "greenacre_adjusted_total_inertia", "greenacre_percentages"})
      EXPECT_TRUE(report[key].is_null()) << key << ": " << report[key].dump();
    EXPECT_TRUE(contains(report["adjustments_undefined"].get<std::string>(), "Q = 1"));
  }
}

// MCA of 600 individuals with a variable of 600 levels: S S^T has five
// distinct top eigenvalues and 1/3 repeated 594 times. krylov used to run
// its 300 cycles (13-30 s) with a residual climbing to 57 and call it a
// fallback with "--tol 0.000000"; the breakdown is now caught within a few
// cycles and the note says what happened, with the real tolerance. Whether
// the iteration breaks down here depends on the BLAS kernels' rounding (it
// does with OpenBLAS's Haswell kernels; with its SkylakeX kernels it converges
// at one rank): the inertias are checked either way, the note when there is
// one (test_symmetric_operator breaks the iteration whatever the kernels).
TEST(CliCa, KrylovBreakdownOnMcaIsCaughtEarlyAndReportedTruthfully) {
  const fs::path dir = scratch_dir("mca_breakdown");
  std::string csv = "person,b,c\n";
  std::uint64_t state = 7;
  const auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  for (int i = 0; i < 600; ++i)
    csv += "p" + std::to_string(i) + "," + std::string(1, char('x' + next() % 3)) + "," +
           std::string(1, char('t' + next() % 4)) + "\n";
  write_file(dir / "answers.csv", csv);
  // The reference: pdsyevd's whole spectrum, another solver entirely.
  const fs::path evd = dir / "evd";
  RUN_OK(reference,
         std::vector<std::string>({"mca", "--input", (dir / "answers.csv").string(), "-k", "2",
                                   "--solver", "evd", "--output-dir", evd.string()}),
         1);
  const Json expected = Json::parse(read_file(evd / "run.json"));
  for (int np : {1, 3}) {
    const fs::path out = dir / ("out" + std::to_string(np));
    const RunResult r = run_kembed({"mca", "--input", (dir / "answers.csv").string(), "-k", "2",
                                    "--solver", "krylov", "--output-dir", out.string()},
                                   np);
    ASSERT_TRUE(r.all_ranks_succeeded()) << r.describe();
    EXPECT_LT(r.seconds, 12) << r.describe();
    const Json report = Json::parse(read_file(out / "run.json"));
    if (report["solver_used"] != "krylov") {
      ASSERT_TRUE(report.contains("solver_note")) << report.dump(1);
      const std::string note = report["solver_note"].get<std::string>();
      EXPECT_TRUE(contains(note, "krylov broke down in cycle")) << note;
      EXPECT_TRUE(contains(note, "--tol 1e-12")) << note;
      EXPECT_FALSE(contains(note, "0.000000")) << note;
    }
    for (int t = 0; t < 2; ++t)
      EXPECT_NEAR(report["principal_inertias"][t].get<double>(),
                  expected["principal_inertias"][t].get<double>(), 1e-12);
  }
}

// A sparse table (Matrix Market, zeros not stored) takes the sparse operator
// (run.json says so) and gives the Jacobi reference's inertias, the dense
// run's coordinates at 1 and 4 ranks, and the same rows and columns files.
TEST(CliCa, SparseTableMatchesTheDenseAnalysis) {
  const fs::path dir = scratch_dir("ca_sparse");
  const std::size_t rows = 30, cols = 7;
  const int k = 2;
  Matrix n = zeros(rows, cols);
  std::string entries;
  std::size_t stored = 0;
  for (std::size_t j = 0; j < cols; ++j)
    for (std::size_t i = 0; i < rows; ++i) {
      // Every row and column has counts; about half the cells are zero.
      const double v = (i % cols == j) ? 3 + double(i % 4) : ((i * j + i) % 2 ? 0 : double((i + j) % 3));
      if (v == 0) continue;
      n(i, j) = v;
      entries += std::to_string(i + 1) + " " + std::to_string(j + 1) + " " + format_g17(v) + "\n";
      ++stored;
    }
  write_file(dir / "t.mtx", "%%MatrixMarket matrix coordinate integer general\n" +
                                std::to_string(rows) + " " + std::to_string(cols) + " " +
                                std::to_string(stored) + "\n" + entries);
  std::string csv;
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) csv += format_g17(n(i, j)) + (j + 1 < cols ? "," : "\n");
  write_file(dir / "t.csv", csv);
  const Reference ref = reference(n);

  RUN_OK(dense, (std::vector<std::string>{"ca", "--input", (dir / "t.csv").string(), "-k", "2",
                                          "--output-dir", (dir / "dense").string()}),
         2);
  const Points dense_rows = read_points(dir / "dense" / "rows.csv");
  const Points dense_cols = read_points(dir / "dense" / "columns.csv");
  for (int np : {1, 4}) {
    SCOPED_TRACE("np " + std::to_string(np));
    const fs::path out = dir / ("sparse" + std::to_string(np));
    RUN_OK(r, (std::vector<std::string>{"ca", "--input", (dir / "t.mtx").string(), "-k", "2",
                                        "--output-dir", out.string()}),
           np);
    const Json report = Json::parse(read_file(out / "run.json"));
    EXPECT_TRUE(contains(report.value("input_storage", ""), "sparse (mtx)")) << report.dump();
    EXPECT_EQ(report.value("stored_entries", 0LL), static_cast<long long>(stored));
    EXPECT_NEAR(report["total_inertia"].get<double>(), ref.chi2_over_n, 1e-13);
    const Csv inertias = read_result_csv(out / "inertias.csv");
    ASSERT_EQ(inertias.data.rows, std::size_t(k));
    for (int t = 0; t < k; ++t) EXPECT_NEAR(inertias.data(t, 0), ref.inertias[t], 1e-13);
    const Points sparse_rows = read_points(out / "rows.csv");
    const Points sparse_cols = read_points(out / "columns.csv");
    EXPECT_EQ(sparse_rows.header, dense_rows.header);
    EXPECT_EQ(sparse_rows.labels, dense_rows.labels);
    EXPECT_LT(max_abs_diff(sparse_rows.values, dense_rows.values), 1e-10);
    EXPECT_EQ(sparse_cols.labels, dense_cols.labels);
    EXPECT_LT(max_abs_diff(sparse_cols.values, dense_cols.values), 1e-10);
  }

  // kembed plan ca prices the sparse fit from the file's header with the
  // fit's own plan: the --dry-run's text, to the byte count, at 1 and 2
  // ranks, and the plan of --rows/--cols/--nnz; the busiest rank holds at
  // most ceil(S / P) + J - 1 of the S entries (S at 1 rank).
  const auto body = [](const std::string& text) { return text.substr(text.find(": ")); };
  for (int np : {1, 2}) {
    SCOPED_TRACE("plan, np " + std::to_string(np));
    const std::vector<std::string> budget = {"-k", "2", "--max-memory-per-rank", "1G"};
    const RunResult plan = run_serial(
        concat({"plan", "ca", "-i", (dir / "t.mtx").string(), "--ranks", std::to_string(np)},
               budget));
    EXPECT_EQ(plan.status, 0) << plan.describe();
    const std::size_t busiest = np == 1 ? stored : (stored + 1) / 2 + cols - 1;
    EXPECT_TRUE(contains(plan.out, "kembed plan ca: 7 x 7 operator of 30 x 7 sparse data (at most " +
                                       std::to_string(busiest) + " stored entries on a rank)"))
        << plan.out;
    const RunResult given =
        run_serial(concat({"plan", "ca", "--rows", "30", "--cols", "7", "--nnz",
                           std::to_string(stored), "--ranks", std::to_string(np)},
                          budget));
    EXPECT_EQ(given.status, 0) << given.describe();
    EXPECT_EQ(body(given.out), body(plan.out));
    RUN_OK(dry,
           concat({"ca", "-i", (dir / "t.mtx").string(), "--dry-run", "--output-dir",
                   (dir / "dry").string()},
                  budget),
           np);
    EXPECT_EQ(body(dry.out), body(plan.out));
  }
  const RunResult dense_table = run_serial({"plan", "ca", "-i", (dir / "t.csv").string()});
  EXPECT_NE(dense_table.status, 0);
  EXPECT_TRUE(contains(dense_table.err, "is not a sparse matrix file (.h5ad, .npz, .mtx); kembed "
                                        "plan ca plans the sparse fit only"))
      << dense_table.describe();
}

// MCA takes the sparse path (the indicator's CSR rows, fit_sparse_ca) with
// --solver auto or krylov and the dense one with --solver evd (pdsyevd on
// the block-cyclic indicator matrix): the same principal inertias,
// coordinates, total, Burt and Greenacre inertias, with run.json saying
// which storage and which lambdas Benzécri's percentages were taken over.
// With auto and this small J the whole spectrum comes from the Burt table,
// so Benzécri's percentages equal the dense ones; krylov has the K computed.
TEST(CliCa, SparseMcaMatchesTheDenseMca) {
  const fs::path dir = scratch_dir("mca_sparse");
  const int n = 150, q = 4, k = 3;
  std::string csv = "id,colour,size,shape,grade\n";
  for (int i = 0; i < n; ++i) {
    const int a = i % 3, b = i < 4 ? i : (a + (i / 5) % 3) % 4, c = i < 2 ? i : (i * 7 % 11 < 4),
              d = i < 5 ? i : (a + b + (i % 4 == 0)) % 5;
    const char* colours[] = {"red", "green", "blue"};
    csv += "p" + std::to_string(i) + "," + colours[a] + "," + std::to_string(10 * b) + "," +
           (c ? "round" : "square") + ",g" + std::to_string(d) + "\n";
  }
  write_file(dir / "answers.csv", csv);
  const std::vector<std::string> common = {
      "mca", "--input",        (dir / "answers.csv").string(), "--id-column", "id",
      "-k",  std::to_string(k)};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = common;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  // --dry-run prices the fit the run takes: the sparse one (n Q / 2 = 300
  // stored entries a rank on 2 ranks, priced with the split's bound of a
  // row's J - 1 = 13 more: 313), no dense data matrix.
  RUN_OK(plan, with({"--dry-run", "--output-dir", (dir / "plan").string()}), 2);
  EXPECT_TRUE(contains(plan.out + plan.err,
                       "14 x 14 operator of 150 x 14 sparse data (at most 313 stored entries"))
      << plan.describe();
  EXPECT_FALSE(contains(plan.out + plan.err, "data matrix")) << plan.describe();
  RUN_OK(dense, with({"--solver", "evd", "--output-dir", (dir / "dense").string()}), 2);
  const Json expected = Json::parse(read_file(dir / "dense" / "run.json"));
  EXPECT_TRUE(contains(expected.value("input_storage", ""), "dense (categorical)"))
      << expected.dump();
  EXPECT_TRUE(contains(expected.value("benzecri_lambdas", ""), "whole spectrum"));
  const Points dense_rows = read_points(dir / "dense" / "rows.csv");
  const Points dense_cols = read_points(dir / "dense" / "columns.csv");
  const auto largest = [](const Matrix& m) {
    double v = 0;
    for (double x : m.v) v = std::max(v, std::abs(x));
    return v;
  };
  for (const auto& [np, solver] : {std::pair{1, "auto"}, std::pair{4, "krylov"}}) {
    SCOPED_TRACE("np " + std::to_string(np) + ", " + solver);
    const fs::path out = dir / ("sparse" + std::to_string(np));
    RUN_OK(r, with({"--solver", solver, "--output-dir", out.string()}), np);
    const Json report = Json::parse(read_file(out / "run.json"));
    EXPECT_TRUE(contains(report.value("input_storage", ""), "sparse (categorical)"))
        << report.dump();
    EXPECT_EQ(report.value("stored_entries", 0LL), static_cast<long long>(n * q));
    EXPECT_EQ(report["solver_used"], "krylov");
    if (std::string(solver) == "krylov") {
      EXPECT_TRUE(contains(report.value("benzecri_lambdas", ""), "K computed"));
      EXPECT_FALSE(report.contains("spectrum"));
    } else {
      EXPECT_TRUE(contains(report.value("benzecri_lambdas", ""), "from the J x J S^T S"));
      ASSERT_EQ(report["spectrum"].size(), 14u);
      for (std::size_t t = 0; t < 14; ++t)
        EXPECT_NEAR(report["spectrum"][t].get<double>(), expected["spectrum"][t].get<double>(),
                    1e-13);
      for (int t = 0; t < k; ++t)
        EXPECT_NEAR(report["benzecri_percentages"][t].get<double>(),
                    expected["benzecri_percentages"][t].get<double>(), 1e-9);
    }
    EXPECT_TRUE(contains(report.value("burt_total_inertia_from", ""), "Burt table"));
    for (int t = 0; t < k; ++t) {
      const double want = expected["principal_inertias"][t].get<double>();
      EXPECT_NEAR(report["principal_inertias"][t].get<double>(), want, 1e-10 * want);
    }
    for (const char* key :
         {"total_inertia", "burt_total_inertia", "greenacre_adjusted_total_inertia"}) {
      const double want = expected[key].get<double>();
      EXPECT_NEAR(report[key].get<double>(), want, 1e-12 * want) << key;
    }
    EXPECT_NEAR(report["total_inertia"].get<double>(), double(14 - q) / q, 1e-12);  // J = 14
    const Points sparse_rows = read_points(out / "rows.csv");
    const Points sparse_cols = read_points(out / "columns.csv");
    EXPECT_EQ(sparse_rows.labels, dense_rows.labels);
    EXPECT_EQ(sparse_rows.labels.front(), "p0");
    EXPECT_EQ(sparse_rows.header, dense_rows.header);
    EXPECT_LT(max_abs_diff(sparse_rows.values, dense_rows.values),
              1e-8 * largest(dense_rows.values));
    EXPECT_EQ(sparse_cols.labels, dense_cols.labels);
    EXPECT_LT(max_abs_diff(sparse_cols.values, dense_cols.values),
              1e-8 * largest(dense_cols.values));
  }
}
