// Definitions of the CLI tests' helpers (cli_support.hpp), compiled once.
#include "cli_support.hpp"

namespace cli_test {

const fs::path& scratch_root() {
  struct Root {
    fs::path path;
    Root() {
      path = fs::temp_directory_path() / ("kembed-cli-test-" + std::to_string(::getpid()));
      fs::remove_all(path);
      fs::create_directories(path);
      // The same environment CTest gives us, so the binary also runs by hand.
      ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
      ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
      ::setenv("OPENBLAS_NUM_THREADS", "1", 0);
      ::setenv("OMP_NUM_THREADS", "1", 0);
    }
    ~Root() {
      if (!std::getenv("KEMBED_TEST_KEEP")) {
        std::error_code ec;
        fs::remove_all(path, ec);
      }
    }
  };
  static const Root root;
  return root.path;
}

fs::path scratch_dir(const std::string& name) {
  const fs::path dir = scratch_root() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

RunResult run_kembed(const std::vector<std::string>& args, int np, const std::string& shell_prefix,
                     const std::string& stdin_source) {
  static int counter = 0;
  const fs::path dir = scratch_dir("runs/" + std::to_string(counter++));
  const std::string rank_file = (dir / "rank.").string();
  // Each rank records its own exit code, then exits with it. The record is
  // renamed into place, so a wrapper killed by mpiexec leaves none (never a
  // half-written one).
  const std::string file = sh_quote(rank_file) + "\"$OMPI_COMM_WORLD_RANK\"";
  const std::string script = sh_quote(KEMBED_BINARY) + " \"$@\"; rc=$?; echo $rc > " + file +
                             ".tmp && mv " + file + ".tmp " + file + "; exit $rc";
  std::string shown = "kembed";
  for (const auto& a : args) shown += " " + sh_quote(a);
  std::string command = shell_prefix + sh_quote(MPIEXEC) + " --oversubscribe --timeout " +
                        std::to_string(kMpiTimeoutSeconds) + " -np " + std::to_string(np) +
                        " /bin/sh -c " + sh_quote(script) + " sh";
  for (const auto& a : args) command += " " + sh_quote(a);
  command += " " + stdin_source + " >" + sh_quote((dir / "stdout").string()) + " 2>" +
             sh_quote((dir / "stderr").string());

  RunResult r;
  r.command = "mpiexec -np " + std::to_string(np) + " " + shown;
  r.np = np;
  const auto start = std::chrono::steady_clock::now();
  const int raw = std::system(command.c_str());
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.status = raw != -1 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = read_file(dir / "stdout");
  r.err = read_file(dir / "stderr");
  for (int rank = 0; rank < np; ++rank) {
    const fs::path f = rank_file + std::to_string(rank);
    int code = -1;
    if (fs::exists(f)) {
      const std::string text = read_file(f);
      char* end = nullptr;
      const long value = std::strtol(text.c_str(), &end, 10);
      if (end != text.c_str() && (*end == '\n' || *end == '\0')) code = static_cast<int>(value);
    }
    r.rank_status.push_back(code);
  }
  return r;
}

RunResult run_serial(const std::vector<std::string>& args) {
  const fs::path dir = scratch_dir("runs/serial");
  std::string command = sh_quote(KEMBED_BINARY);
  for (const auto& a : args) command += " " + sh_quote(a);
  RunResult r;
  r.command = command;
  command += " </dev/null >" + sh_quote((dir / "stdout").string()) + " 2>" +
             sh_quote((dir / "stderr").string());
  const int raw = std::system(command.c_str());
  r.status = raw != -1 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = read_file(dir / "stdout");
  r.err = read_file(dir / "stderr");
  return r;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::vector<std::string> staging_leftovers(const fs::path& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!name.empty() && name[0] == '.' && contains(name, "tmp-")) found.push_back(name);
  }
  return found;
}

std::vector<std::string> sorted_names(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().filename() != ".kembed-result")
      names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

Matrix zeros(std::size_t rows, std::size_t cols) {
  return {rows, cols, std::vector<double>(rows * cols)};
}

Matrix noisy_circles(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> angle(0, 2 * M_PI);
  std::normal_distribution<double> noise(0, 0.1);
  Matrix x = zeros(n, 2);
  for (std::size_t i = 0; i < n; ++i) {
    const double r = i % 2 == 0 ? 1.0 : 3.0, t = angle(gen);
    x(i, 0) = r * std::cos(t) + noise(gen);
    x(i, 1) = r * std::sin(t) + noise(gen);
  }
  return x;
}

Matrix skewed_cloud(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> g(0, 1);
  const double scale[3] = {3.0, 1.5, 0.5};
  const double mix[3][3] = {{0.8, 0.4, 0.2}, {-0.3, 0.9, 0.1}, {0.2, -0.1, 1.0}};
  const double mean[3] = {5.0, -2.0, 0.5};
  Matrix x = zeros(n, 3);
  for (std::size_t i = 0; i < n; ++i) {
    double z[3];
    for (int a = 0; a < 3; ++a) z[a] = scale[a] * g(gen);
    for (int b = 0; b < 3; ++b) {
      x(i, b) = mean[b];
      for (int a = 0; a < 3; ++a) x(i, b) += z[a] * mix[a][b];
    }
  }
  return x;
}

std::string format_g17(double v) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

void write_csv(const fs::path& path, const Matrix& x, const std::string& header) {
  std::string text = header.empty() ? "" : header + "\n";
  for (std::size_t i = 0; i < x.rows; ++i)
    for (std::size_t j = 0; j < x.cols; ++j)
      text += format_g17(x(i, j)) + (j + 1 == x.cols ? "\n" : ",");
  write_file(path, text);
}

std::string raw_doubles(const Matrix& x) {
  std::string bytes(x.v.size() * sizeof(double), '\0');
  std::memcpy(bytes.data(), x.v.data(), bytes.size());
  return bytes;
}

std::string npy_header(std::size_t rows, std::size_t cols) {
  std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + std::to_string(rows) +
                     ", " + std::to_string(cols) + "), }";
  const std::size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>((dict.size() >> 8) & 0xff);
  return out + dict;
}

Csv read_result_csv(const fs::path& path) {
  Csv csv;
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return csv;
  std::stringstream h(line);
  for (std::string name; std::getline(h, name, ',');) csv.header.push_back(name);
  csv.data.cols = csv.header.size();
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::size_t count = 0;
    for (std::string cell; std::getline(row, cell, ','); ++count) {
      char* end = nullptr;
      const double value = std::strtod(cell.c_str(), &end);
      if (end == cell.c_str() || *end != '\0') {
        ADD_FAILURE() << path << ": not a number: '" << cell << "'";
        return csv;
      }
      csv.data.v.push_back(value);
    }
    if (count != csv.data.cols) {
      ADD_FAILURE() << path << ": row " << csv.data.rows + 1 << " has " << count
                    << " values, header has " << csv.data.cols;
      return csv;
    }
    ++csv.data.rows;
  }
  return csv;
}

std::vector<std::string> numbered(const std::string& prefix, int k) {
  std::vector<std::string> names;
  for (int j = 1; j <= k; ++j) names.push_back(prefix + std::to_string(j));
  return names;
}

KpcaOutput read_kpca_output(const fs::path& dir, std::size_t n, int k) {
  KpcaOutput out;
  EXPECT_EQ(sorted_names(dir),
            (std::vector<std::string>{"eigenvalues.csv", "embedding.csv", "model", "run.json"}));
  const Csv emb = read_result_csv(dir / "embedding.csv");
  EXPECT_EQ(emb.header, numbered("c", k)) << dir / "embedding.csv";
  EXPECT_EQ(emb.data.rows, n) << dir / "embedding.csv";
  EXPECT_EQ(emb.data.cols, static_cast<std::size_t>(k)) << dir / "embedding.csv";
  out.embedding = emb.data;
  read_eigenvalues(dir, k, out.eigenvalues, out.ratios);
  out.report = read_run_json(dir);
  return out;
}

void read_eigenvalues(const fs::path& dir, int k, std::vector<double>& values,
                      std::vector<double>& ratios) {
  const Csv eig = read_result_csv(dir / "eigenvalues.csv");
  EXPECT_EQ(eig.header, (std::vector<std::string>{"eigenvalue", "explained_variance_ratio"}));
  EXPECT_EQ(eig.data.rows, static_cast<std::size_t>(k)) << dir / "eigenvalues.csv";
  for (std::size_t j = 0; j < eig.data.rows && eig.data.cols == 2; ++j) {
    values.push_back(eig.data(j, 0));
    ratios.push_back(eig.data(j, 1));
  }
}

Json read_run_json(const fs::path& dir) {
  try {
    return Json::parse(read_file(dir / "run.json"));
  } catch (const std::exception& e) {
    ADD_FAILURE() << dir / "run.json" << " does not parse: " << e.what();
  }
  return Json();
}

Matrix with_sign_convention(Matrix m) {
  for (std::size_t j = 0; j < m.cols; ++j) {
    std::size_t arg = 0;
    for (std::size_t i = 1; i < m.rows; ++i)
      if (std::abs(m(i, j)) > std::abs(m(arg, j))) arg = i;
    if (m(arg, j) < 0)
      for (std::size_t i = 0; i < m.rows; ++i) m(i, j) = -m(i, j);
  }
  return m;
}

void jacobi_eigen(Matrix a, std::vector<double>& values, Matrix& vectors) {
  const std::size_t n = a.rows;
  Matrix v = zeros(n, n);
  for (std::size_t i = 0; i < n; ++i) v(i, i) = 1;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0, total = 0;
    for (std::size_t p = 0; p < n; ++p)
      for (std::size_t q = 0; q < n; ++q) (p == q ? total : off) += a(p, q) * a(p, q);
    if (off <= 1e-34 * (total + off)) break;
    for (std::size_t p = 0; p + 1 < n; ++p)
      for (std::size_t q = p + 1; q < n; ++q) {
        if (a(p, q) == 0) continue;
        // Rotation that zeroes a(p, q) (Golub & Van Loan, symmetric Schur).
        const double tau = (a(q, q) - a(p, p)) / (2 * a(p, q));
        const double t = (tau >= 0 ? 1.0 : -1.0) / (std::abs(tau) + std::sqrt(1 + tau * tau));
        const double c = 1 / std::sqrt(1 + t * t), s = t * c;
        for (std::size_t k = 0; k < n; ++k) {  // A <- A J
          const double akp = a(k, p), akq = a(k, q);
          a(k, p) = c * akp - s * akq;
          a(k, q) = s * akp + c * akq;
        }
        for (std::size_t k = 0; k < n; ++k) {  // A <- J^T A
          const double apk = a(p, k), aqk = a(q, k);
          a(p, k) = c * apk - s * aqk;
          a(q, k) = s * apk + c * aqk;
        }
        for (std::size_t k = 0; k < n; ++k) {  // V <- V J
          const double vkp = v(k, p), vkq = v(k, q);
          v(k, p) = c * vkp - s * vkq;
          v(k, q) = s * vkp + c * vkq;
        }
      }
  }
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t x, std::size_t y) { return a(x, x) > a(y, y); });
  values.clear();
  vectors = zeros(n, n);
  for (std::size_t j = 0; j < n; ++j) {
    values.push_back(a(order[j], order[j]));
    for (std::size_t i = 0; i < n; ++i) vectors(i, j) = v(i, order[j]);
  }
}

Matrix rbf_kernel(const Matrix& x, double gamma) {
  Matrix k = zeros(x.rows, x.rows);
  for (std::size_t i = 0; i < x.rows; ++i)
    for (std::size_t j = i; j < x.rows; ++j) {
      double d2 = 0;
      for (std::size_t c = 0; c < x.cols; ++c) d2 += (x(i, c) - x(j, c)) * (x(i, c) - x(j, c));
      k(i, j) = k(j, i) = std::exp(-gamma * d2);
    }
  return k;
}

Matrix double_center(Matrix k) {
  const std::size_t n = k.rows;
  std::vector<double> row_mean(n, 0.0);
  double mean = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) row_mean[i] += k(i, j);
    row_mean[i] /= static_cast<double>(n);
    mean += row_mean[i];
  }
  mean /= static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) k(i, j) += mean - row_mean[i] - row_mean[j];
  return k;
}

void expect_eigenpairs_of(const Matrix& kc, const KpcaOutput& out, const std::string& what) {
  const std::size_t n = kc.rows, k = out.eigenvalues.size();
  ASSERT_EQ(out.embedding.rows, n) << what;
  ASSERT_EQ(out.embedding.cols, k) << what;
  const double tol = 1e3 * static_cast<double>(n) * 2.2e-16;
  for (std::size_t j = 0; j + 1 < k; ++j)
    EXPECT_GE(out.eigenvalues[j], out.eigenvalues[j + 1]) << what << ": eigenvalues not descending";
  for (std::size_t j = 0; j < k; ++j) {
    const double lambda = out.eigenvalues[j];
    EXPECT_GT(lambda, 0) << what;
    double res = 0, norm2 = 0;
    for (std::size_t i = 0; i < n; ++i) {
      double kz = 0;
      for (std::size_t l = 0; l < n; ++l) kz += kc(i, l) * out.embedding(l, j);
      res += (kz - lambda * out.embedding(i, j)) * (kz - lambda * out.embedding(i, j));
      norm2 += out.embedding(i, j) * out.embedding(i, j);
    }
    EXPECT_LT(std::sqrt(res) / (lambda * std::sqrt(lambda)), tol)
        << what << ": column " << j + 1 << " is not an eigenvector of the centered kernel";
    EXPECT_NEAR(norm2 / lambda, 1.0, tol) << what << ": ||z_" << j + 1 << "||^2 != lambda";
    for (std::size_t m = j + 1; m < k; ++m) {
      double dot = 0;
      for (std::size_t i = 0; i < n; ++i) dot += out.embedding(i, j) * out.embedding(i, m);
      EXPECT_LT(std::abs(dot) / std::sqrt(lambda * out.eigenvalues[m]), tol)
          << what << ": columns " << j + 1 << " and " << m + 1 << " not orthogonal";
    }
  }
}

double max_abs_diff(const Matrix& a, const Matrix& b) {
  if (a.rows != b.rows || a.cols != b.cols) return INFINITY;
  double m = 0;
  for (std::size_t i = 0; i < a.v.size(); ++i) m = std::max(m, std::abs(a.v[i] - b.v[i]));
  return m;
}

double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return INFINITY;
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    m = std::max(m, std::abs(a[i] - b[i]) / std::max(std::abs(b[i]), 1e-300));
  return m;
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace cli_test
