// Model format 3: vectors (eigenvalues, means, scales, column means,
// offsets, principal inertias) are 1-D .npy arrays, as numpy.load gives
// scikit-learn's attributes. Every model kind is fitted, its .npy headers are
// parsed here (not by kembed's reader), and the model is rewritten by this
// test into the layout of the previous version (vectors as 1 x k matrices,
// the old format_version); `kembed transform` must give the same numbers
// from both.
#include "cli/cli_support.hpp"

namespace {

/// What a .npy header says, parsed from the bytes by this test.
struct NpyFile {
  std::vector<std::size_t> shape;
  std::vector<double> values;
};

NpyFile parse_npy(const fs::path& path) {
  NpyFile npy;
  const std::string bytes = read_file(path);
  if (bytes.size() < 10 || bytes.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)) != 0) {
    ADD_FAILURE() << path << ": not a version 1.0 .npy file";
    return npy;
  }
  const std::size_t header_len =
      static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  const std::string header = bytes.substr(10, header_len);
  EXPECT_TRUE(contains(header, "'descr': '<f8'")) << path << ": " << header;
  EXPECT_TRUE(contains(header, "'fortran_order': False")) << path << ": " << header;
  const std::size_t open = header.find("'shape': (");
  const std::size_t close = header.find(')', open);
  if (open == std::string::npos || close == std::string::npos) {
    ADD_FAILURE() << path << ": no shape in " << header;
    return npy;
  }
  // "(3,)" is 1-D, "(1, 3)" 2-D: numpy's tuple syntax.
  std::stringstream tuple(header.substr(open + 10, close - open - 10));
  std::size_t count = 1;
  for (std::string item; std::getline(tuple, item, ',');) {
    if (item.find_first_not_of(' ') == std::string::npos) continue;
    npy.shape.push_back(std::stoul(item));
    count *= npy.shape.back();
  }
  const std::size_t data = 10 + header_len;
  if (bytes.size() != data + count * sizeof(double)) {
    ADD_FAILURE() << path << ": " << bytes.size() - data << " data bytes for shape " << header;
    return npy;
  }
  npy.values.resize(count);
  std::memcpy(npy.values.data(), bytes.data() + data, count * sizeof(double));
  return npy;
}

Csv vectors_transform(const fs::path& model, const fs::path& input, const fs::path& out) {
  const RunResult r = run_kembed({"transform", "--model", model.string(), "--input",
                                  input.string(), "--output-dir", out.string(), "--quiet"},
                                 2);
  EXPECT_TRUE(r.all_ranks_succeeded()) << r.describe();
  return read_result_csv(out / "embedding.csv");
}

/// Copies the model at `from` to `to` in the layout of format `version`:
/// every vector rewritten as a 1 x length matrix, listed with rows and cols.
void write_old_layout(const fs::path& from, const fs::path& to, int version) {
  fs::copy(from, to);
  Json manifest = Json::parse(read_file(from / "manifest.json"));
  for (auto& [name, entry] : manifest["arrays"].items()) {
    if (!entry.contains("length")) continue;
    const std::size_t length = entry["length"].get<std::size_t>();
    const NpyFile vector = parse_npy(from / entry["file"].get<std::string>());
    const Matrix row{1, length, vector.values};
    write_file(to / entry["file"].get<std::string>(), npy_header(1, length) + raw_doubles(row));
    entry.erase("length");
    entry["rows"] = 1;
    entry["cols"] = length;
  }
  manifest["format_version"] = version;
  write_file(to / "manifest.json", manifest.dump(2));
}

struct VectorsCase {
  std::string name;
  std::vector<std::string> fit;     // the command and its options
  std::string input;                // file name in the scratch directory
  std::vector<std::string> vectors; // arrays scikit-learn keeps 1-D
  int old_version;                  // what the previous release wrote
  bool reproduces_fit;              // transform of the training data = embedding.csv
};

}  // namespace

TEST(ModelVectorsCli, VectorsAreOneDimensionalAndTheOldLayoutTransformsTheSame) {
  const fs::path dir = scratch_dir("model_vectors");
  write_csv(dir / "x.csv", skewed_cloud(40, 7), "");
  // A contingency table with distinct principal inertias.
  write_file(dir / "table.csv",
             "12,3,4,1,0\n2,15,3,2,1\n1,2,9,6,2\n0,1,3,11,4\n3,0,1,2,13\n5,4,2,1,1\n");
  const std::vector<VectorsCase> cases = {
      {"pca", {"pca", "--standardize", "--whiten", "-k", "2"}, "x.csv",
       {"mean", "scale", "eigenvalues"}, 2, true},
      {"kpca", {"kpca", "--kernel", "rbf", "--gamma", "0.5", "-k", "2"}, "x.csv",
       {"kernel_col_means", "eigenvalues"}, 1, true},
      {"nystrom", {"kpca", "--kernel", "rbf", "--gamma", "0.5", "-k", "2", "--approx",
                   "nystrom", "--landmarks", "12"},
       "x.csv", {"offset", "eigenvalues"}, 1, false},
      {"mds", {"mds", "-k", "2"}, "x.csv", {"eigenvalues", "sq_distance_row_means"}, 1, true},
      {"landmark_mds", {"mds", "-k", "2", "--approx", "landmark", "--landmarks", "12"}, "x.csv",
       {"landmark_sq_distance_means", "eigenvalues"}, 1, false},
      {"isomap", {"isomap", "-k", "2", "--neighbors", "8"}, "x.csv",
       {"eigenvalues", "sq_distance_row_means"}, 1, false},
      {"ca", {"ca", "-k", "2"}, "table.csv", {"principal_inertias"}, 1, false},
  };
  for (const VectorsCase& c : cases) {
    SCOPED_TRACE(c.name);
    const fs::path fit = dir / c.name;
    const RunResult r = run_kembed(
        concat(c.fit, {"--input", (dir / c.input).string(), "--output-dir", fit.string(),
                       "--quiet"}),
        2);
    ASSERT_TRUE(r.all_ranks_succeeded()) << r.describe();
    const fs::path model = fit / "model";
    const Json manifest = Json::parse(read_file(model / "manifest.json"));
    EXPECT_EQ(manifest.value("format_version", 0), 3);
    const std::size_t k = manifest.at("k").get<std::size_t>();

    // Each vector: shape (length,) in the file and "length" in the manifest;
    // eigenvalues and principal inertias have k entries.
    for (const std::string& name : c.vectors) {
      ASSERT_TRUE(manifest["arrays"].contains(name)) << name;
      const Json& entry = manifest["arrays"][name];
      const NpyFile npy = parse_npy(model / (name + ".npy"));
      ASSERT_EQ(npy.shape.size(), 1u) << name;
      EXPECT_EQ(entry.value("length", std::size_t{0}), npy.shape[0]) << name;
      EXPECT_FALSE(entry.contains("rows") || entry.contains("cols")) << name;
      if (name == "eigenvalues" || name == "principal_inertias") {
        EXPECT_EQ(npy.shape[0], k);
      }
    }
    // Everything else stays 2-D.
    for (const auto& [name, entry] : manifest["arrays"].items()) {
      if (std::find(c.vectors.begin(), c.vectors.end(), name) == c.vectors.end()) {
        EXPECT_EQ(parse_npy(model / entry["file"].get<std::string>()).shape.size(), 2u) << name;
      }
    }
    if (c.name == "pca") {
      // The eigenvalues are the explained variances eigenvalues.csv lists.
      const Matrix listed = read_result_csv(fit / "eigenvalues.csv").data;
      const NpyFile eig = parse_npy(model / "eigenvalues.npy");
      ASSERT_EQ(listed.rows, eig.values.size());
      for (std::size_t j = 0; j < listed.rows; ++j) EXPECT_EQ(listed(j, 0), eig.values[j]);
    }

    const fs::path old = dir / (c.name + "_old_model");
    write_old_layout(model, old, c.old_version);
    const Csv now = vectors_transform(model, dir / c.input, dir / (c.name + "_t3"));
    const Csv before = vectors_transform(old, dir / c.input, dir / (c.name + "_t_old"));
    ASSERT_EQ(now.header, before.header);
    ASSERT_EQ(now.data.rows, before.data.rows);
    ASSERT_GT(now.data.rows, 0u);
    // The same values read either way: the same numbers to the last bit.
    EXPECT_EQ(max_abs_diff(now.data, before.data), 0.0);
    if (c.reproduces_fit) {
      const Matrix fitted = read_result_csv(fit / "embedding.csv").data;
      EXPECT_LT(max_abs_diff(now.data, fitted), 1e-9);
    }
  }
}

// A model whose vector files do not match its manifest fails with the file
// named, on every rank.
TEST(ModelVectorsCli, MismatchedVectorsNameTheFile) {
  const fs::path dir = scratch_dir("model_vectors_bad");
  write_csv(dir / "x.csv", skewed_cloud(30, 3), "");
  const fs::path fit = dir / "fit";
  const RunResult r = run_kembed(
      {"pca", "-k", "2", "--input", (dir / "x.csv").string(), "--output-dir", fit.string(),
       "--quiet"},
      2);
  ASSERT_TRUE(r.all_ranks_succeeded()) << r.describe();
  // Format 3 manifest, but eigenvalues.npy rewritten 2-D.
  const fs::path bad = dir / "bad";
  fs::copy(fit / "model", bad);
  const NpyFile eig = parse_npy(fit / "model" / "eigenvalues.npy");
  write_file(bad / "eigenvalues.npy",
             npy_header(1, eig.values.size()) + raw_doubles({1, eig.values.size(), eig.values}));
  const RunResult t = run_kembed({"transform", "--model", bad.string(), "--input",
                                  (dir / "x.csv").string(), "--output-dir",
                                  (dir / "t").string()},
                                 2);
  EXPECT_TRUE(t.no_rank_succeeded()) << t.describe();
  EXPECT_TRUE(contains(t.err, (bad / "eigenvalues.npy").string() +
                                  ": shape (1, 2) differs from the (2,) of field "
                                  "'arrays.eigenvalues' in " +
                                  (bad / "manifest.json").string() + "; the model is damaged"))
      << t.describe();
}
