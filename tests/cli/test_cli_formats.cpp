// Input and output formats (issue 13): files kembed does not read are named,
// not parsed; --output-format npy and h5 hold the same numbers as the CSV;
// HDF5 datasets (written here through the HDF5 C API) give the same
// embedding as the equivalent .npy, and bad datasets fail on every rank.
#include "cli/cli_support.hpp"
#include "rounded_to_float.hpp"

#ifdef KEMBED_TEST_HDF5
#include <hdf5.h>
#endif

using namespace cli_test;

namespace {

/// A kembed pca run's failure: every rank failed and the message says `expected`.
void expect_format_refused(const std::vector<std::string>& args, int np,
                           const std::string& expected) {
  const fs::path out = scratch_root() / "refused";
  const RunResult r = run_kembed(concat(args, {"--output-dir", out.string(), "--quiet"}), np);
  EXPECT_FALSE(r.timed_out()) << r.describe();
  EXPECT_TRUE(r.no_rank_succeeded()) << r.describe();
  EXPECT_TRUE(contains(r.err, "kembed: error: " + expected)) << "expected: " << expected << "\n" << r.describe();
  EXPECT_FALSE(fs::exists(out));
}

/// The n x k float64 matrix of a .npy file, read from its header by hand.
Matrix read_npy_matrix(const fs::path& path) {
  const std::string bytes = read_file(path);
  Matrix m;
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    ADD_FAILURE() << path << " is not a .npy file";
    return m;
  }
  const std::size_t header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  const std::string dict = bytes.substr(10, header_len);
  EXPECT_TRUE(contains(dict, "'descr': '<f8'")) << dict;
  EXPECT_TRUE(contains(dict, "'fortran_order': False")) << dict;
  const std::size_t open = dict.find("'shape': (");
  if (open == std::string::npos) {
    ADD_FAILURE() << dict;
    return m;
  }
  std::sscanf(dict.c_str() + open + 10, "%zu, %zu", &m.rows, &m.cols);
  m.v.resize(m.rows * m.cols);
  EXPECT_EQ(bytes.size(), 10 + header_len + m.v.size() * 8) << path;
  if (bytes.size() == 10 + header_len + m.v.size() * 8) std::memcpy(m.v.data(), bytes.data() + 10 + header_len, m.v.size() * 8);
  return m;
}

/// Same shape and the same doubles, bit for bit.
void expect_identical(const Matrix& a, const Matrix& b, const std::string& what) {
  ASSERT_EQ(a.rows, b.rows) << what;
  ASSERT_EQ(a.cols, b.cols) << what;
  for (std::size_t i = 0; i < a.v.size(); ++i)
    ASSERT_EQ(std::memcmp(&a.v[i], &b.v[i], sizeof(double)), 0) << what << ": entry " << i << ": " << a.v[i] << " vs " << b.v[i];
}

void expect_near(const Matrix& a, const Matrix& b, double tol, const std::string& what) {
  ASSERT_EQ(a.rows, b.rows) << what;
  ASSERT_EQ(a.cols, b.cols) << what;
  double scale = 0;
  for (double v : a.v) scale = std::max(scale, std::abs(v));
  for (std::size_t i = 0; i < a.v.size(); ++i) ASSERT_NEAR(a.v[i], b.v[i], tol * scale) << what << ": entry " << i;
}

}  // namespace

TEST(FormatsCli, ForeignFilesAreNamedNotParsed) {
  const fs::path dir = scratch_dir("foreign");
  // The first bytes are what each format's specification puts there.
  write_file(dir / "x.csv.gz", std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10) + "garbage");
  std::string npz = std::string("PK\x03\x04", 4) + std::string(22, '\0') + std::string("\x05\x00\x00\x00", 4) + "a.npy";
  write_file(dir / "x.npz", npz);
  write_file(dir / "x.parquet", std::string("PAR1\x15\x04", 6) + std::string(20, '\0') + "PAR1");
  write_file(dir / "x.dat", std::string("1,2\n3,4\n\0\x01\x02", 11));
  struct Case {
    std::string file, expected;
    int np;
  };
  const std::vector<Case> cases = {
      {"x.csv.gz", "x.csv.gz: a gzip-compressed file; kembed reads text", 1},
      // .npz is read as scipy's sparse format (sparse_matrix_file.hpp): this
      // local header without a central directory is no archive it can read.
      {"x.npz", "x.npz: not a zip archive, or a truncated or corrupt one", 4},
      {"x.parquet", "x.parquet: an Apache Parquet file; kembed reads text", 4},
      {"x.dat", "x.dat: a binary file (byte 9 is NUL), not text", 1},
  };
  for (const Case& c : cases) {
    const std::string path = (dir / c.file).string();
    expect_format_refused({"pca", "--input", path}, c.np,
                          path.substr(0, path.size() - c.file.size()) + c.expected);
  }
}

TEST(FormatsCli, NpyAndH5OutputHoldTheCsvNumbers) {
  const fs::path dir = scratch_dir("output_formats");
  const Matrix x = skewed_cloud(37, 5);
  // Row ids through --id-column: in the CSV, and beside a binary table.
  std::string text = "name,a,b,c\n";
  for (std::size_t i = 0; i < x.rows; ++i)
    text += "s" + std::to_string(i) + "," + format_g17(x(i, 0)) + "," + format_g17(x(i, 1)) + "," + format_g17(x(i, 2)) + "\n";
  write_file(dir / "x.csv", text);
  std::vector<std::string> formats = {"csv", "npy"};
#ifdef KEMBED_TEST_HDF5
  formats.push_back("h5");
#endif
  const RunResult version = run_serial({"--version"});
#ifdef KEMBED_TEST_HDF5
  EXPECT_TRUE(contains(version.out, "formats: input text npy bin h5, output csv npy h5")) << version.describe();
#else
  EXPECT_TRUE(contains(version.out, "(built without HDF5)")) << version.describe();
#endif
  std::map<std::string, fs::path> outs;
  for (const std::string& format : formats) {
    outs[format] = dir / format;
    const RunResult r = run_kembed({"pca", "--input", (dir / "x.csv").string(), "--id-column", "name", "-k", "2",
                                    "--output-format", format, "--output-dir", outs[format].string(), "--quiet"},
                                   3);  // 37 rows: 13, 13 and 11 per rank in the binary writes
    ASSERT_TRUE(r.all_ranks_succeeded()) << r.describe();
  }
  // The CSV has the ids first, then c1, c2.
  const std::string csv_text = read_file(outs["csv"] / "embedding.csv");
  std::istringstream lines(csv_text);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "name,c1,c2");
  Matrix from_csv = zeros(x.rows, 2);
  for (std::size_t i = 0; i < x.rows && std::getline(lines, line); ++i) {
    EXPECT_EQ(line.substr(0, line.find(',')), "s" + std::to_string(i));
    const std::size_t a = line.find(','), b = line.find(',', a + 1);
    from_csv(i, 0) = std::strtod(line.substr(a + 1, b - a - 1).c_str(), nullptr);
    from_csv(i, 1) = std::strtod(line.substr(b + 1).c_str(), nullptr);
  }
  // The shortest round-trip text reads back as the very same doubles.
  expect_identical(read_npy_matrix(outs["npy"] / "embedding.npy"), from_csv,
                   "embedding.npy against embedding.csv");
  EXPECT_FALSE(fs::exists(outs["npy"] / "embedding.csv"));
  std::string ids = "name\n";
  for (std::size_t i = 0; i < x.rows; ++i) ids += "s" + std::to_string(i) + "\n";
  EXPECT_EQ(read_file(outs["npy"] / "embedding_ids.csv"), ids);
  EXPECT_TRUE(fs::exists(outs["npy"] / "eigenvalues.csv"));
  EXPECT_TRUE(contains(read_file(outs["npy"] / ".kembed-result"), "embedding.npy"));
#ifdef KEMBED_TEST_HDF5
  const hid_t file = H5Fopen((outs["h5"] / "embedding.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t set = H5Dopen2(file, "/embedding", H5P_DEFAULT);
  ASSERT_GE(set, 0);
  const hid_t space = H5Dget_space(set);
  hsize_t dims[2] = {0, 0};
  ASSERT_EQ(H5Sget_simple_extent_ndims(space), 2);
  H5Sget_simple_extent_dims(space, dims, nullptr);
  Matrix from_h5 = zeros(dims[0], dims[1]);
  EXPECT_GE(H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, from_h5.v.data()), 0);
  H5Sclose(space);
  H5Dclose(set);
  // The same file holds the run report (the text of run.json) and the
  // eigenvalues (those of eigenvalues.csv, 1-D).
  const hid_t attribute = H5Aopen(file, "run.json", H5P_DEFAULT);
  ASSERT_GE(attribute, 0);
  const hid_t text_type = H5Aget_type(attribute);
  std::string report(H5Tget_size(text_type), '\0');
  EXPECT_GE(H5Aread(attribute, text_type, report.data()), 0);
  H5Tclose(text_type);
  H5Aclose(attribute);
  EXPECT_EQ(report, read_file(outs["h5"] / "run.json"));
  const hid_t values = H5Dopen2(file, "/eigenvalues", H5P_DEFAULT);
  ASSERT_GE(values, 0);
  const hid_t values_space = H5Dget_space(values);
  EXPECT_EQ(H5Sget_simple_extent_ndims(values_space), 1);
  std::vector<double> eigenvalues(static_cast<std::size_t>(H5Sget_simple_extent_npoints(values_space)));
  EXPECT_GE(H5Dread(values, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, eigenvalues.data()), 0);
  H5Sclose(values_space);
  H5Dclose(values);
  H5Fclose(file);
  expect_identical(from_h5, from_csv, "embedding.h5 against embedding.csv");
  const Csv listed = read_result_csv(outs["h5"] / "eigenvalues.csv");
  ASSERT_EQ(eigenvalues.size(), listed.data.rows);
  for (std::size_t j = 0; j < eigenvalues.size(); ++j) EXPECT_EQ(eigenvalues[j], listed.data(j, 0));
#endif
}

#ifdef KEMBED_TEST_HDF5
namespace {

/// Writes `x` as dataset `name` of a new HDF5 file, as float64 or float32,
/// contiguous or in chunks of 5 rows; `dims3` makes it 3-D (rows x cols x 1)
/// and `integers` stores int32, for the error cases.
void write_h5(const fs::path& path, const std::string& name, const Matrix& x, bool single, bool chunked,
              bool dims3 = false, bool integers = false) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hsize_t dims[3] = {x.rows, x.cols, 1};
  const hid_t space = H5Screate_simple(dims3 ? 3 : 2, dims, nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (chunked) {
    const hsize_t chunk[3] = {5, x.cols, 1};
    H5Pset_chunk(dcpl, dims3 ? 3 : 2, chunk);
  }
  const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  const hid_t type = integers ? H5T_STD_I32LE : single ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
  const hid_t set = H5Dcreate2(file, name.c_str(), type, space, lcpl, dcpl, H5P_DEFAULT);
  ASSERT_GE(set, 0);
  // HDF5 converts the doubles to the stored type.
  ASSERT_GE(H5Dwrite(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x.v.data()), 0);
  H5Dclose(set);
  H5Pclose(lcpl);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(file);
}

}  // namespace

TEST(FormatsCli, Hdf5InputGivesTheNpyEmbedding) {
  const fs::path dir = scratch_dir("h5_input");
  Matrix x = skewed_cloud(45, 9);
  // Values a float32 holds exactly, so every file stores the same matrix.
  x.v = kembed::test::rounded_to_float(x.v);
  write_file(dir / "x.npy", npy_header(x.rows, x.cols) + raw_doubles(x));
  write_h5(dir / "f64.h5", "/data/X", x, false, false);
  write_h5(dir / "f32.hdf5", "/X", x, true, true);
  const auto embed = [&](const std::vector<std::string>& input, int np, const std::string& name) {
    const fs::path out = dir / name;
    const RunResult r = run_kembed(concat(concat({"pca"}, input), {"-k", "2", "-o", out.string(), "--quiet"}), np);
    EXPECT_TRUE(r.all_ranks_succeeded()) << r.describe();
    return read_result_csv(out / "embedding.csv").data;
  };
  const Matrix reference = embed({"--input", (dir / "x.npy").string()}, 4, "npy");
  ASSERT_EQ(reference.rows, x.rows);
  // Contiguous float64 named by --dataset, on the same 4 ranks: identical.
  expect_identical(embed({"--input", (dir / "f64.h5").string(), "--dataset", "/data/X"}, 4, "f64"), reference,
                   "contiguous float64 dataset at 4 ranks");
  // Chunked float32 named in the path, on 1 rank: the same to rounding.
  expect_near(embed({"--input", (dir / "f32.hdf5").string() + ":/X"}, 1, "f32"), reference, 1e-10,
              "chunked float32 dataset at 1 rank");
}

TEST(FormatsCli, GenerateWritesTheSameMatrixAsH5AndNpy) {
  const fs::path dir = scratch_dir("generate_h5");
  const std::vector<std::string> spec = {"generate", "--dataset", "moons", "--rows", "203", "--cols", "4",
                                         "--seed", "11", "--quiet", "--output"};
  const RunResult npy = run_kembed(concat(spec, {(dir / "x.npy").string()}), 1);
  ASSERT_TRUE(npy.all_ranks_succeeded()) << npy.describe();
  const RunResult h5 = run_kembed(concat(spec, {(dir / "x.h5").string() + ":/sets/moons"}), 3);
  ASSERT_TRUE(h5.all_ranks_succeeded()) << h5.describe();
  EXPECT_EQ(sorted_names(dir), (std::vector<std::string>{"x.h5", "x.npy"}));  // no temporary left
  const hid_t file = H5Fopen((dir / "x.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t set = H5Dopen2(file, "/sets/moons", H5P_DEFAULT);
  ASSERT_GE(set, 0);
  Matrix from_h5 = zeros(203, 4);
  EXPECT_GE(H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, from_h5.v.data()), 0);
  H5Dclose(set);
  H5Fclose(file);
  expect_identical(from_h5, read_npy_matrix(dir / "x.npy"),
                   "generate: x.h5 (3 ranks) against x.npy (1 rank)");
}

TEST(FormatsCli, BadDatasetsFailOnEveryRank) {
  const fs::path dir = scratch_dir("h5_errors");
  const Matrix x = skewed_cloud(12, 2);
  write_h5(dir / "x.h5", "/group/X", x, false, false);
  write_h5(dir / "cube.h5", "/X", x, false, true, true);
  write_h5(dir / "ints.h5", "/X", x, false, false, false, true);
  const std::string h5 = (dir / "x.h5").string();
  expect_format_refused({"pca", "--input", h5, "--dataset", "/group/Y"}, 4,
                        h5 + ": no dataset /group/Y; datasets in the file: /group/X");
  expect_format_refused({"pca", "--input", (dir / "cube.h5").string() + ":/X"}, 1,
                        (dir / "cube.h5").string() + ", dataset /X: has 3 dimensions");
  expect_format_refused({"pca", "--input", (dir / "ints.h5").string()}, 4,
                        (dir / "ints.h5").string() + ", dataset /X: holds integers of 4 bytes");
}
#endif
