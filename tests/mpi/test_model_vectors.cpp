// Model format 3: vectors written 1-D by io::ModelWriter::add_vector and read
// back by io::Model::vector on every rank; vectors of format 1 and 2 models
// (1 x k or k x 1 matrices) still read; mismatches between a file and its
// manifest entry name the file; parse_manifest checks vectors by version.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "kembed/core/error.hpp"
#include "kembed/io/manifest.hpp"
#include "kembed/io/model.hpp"
#include "kembed/io/npy_header.hpp"
#include "kembed/mpi/comm.hpp"
#include "test_support.hpp"

using namespace kembed;
using kembed::io::Json;
using kembed::test::all_ranks;
using kembed::test::caught;

namespace {

// What the format-version error says after the version it found.
const std::string kVersionsRead =
    "; this kembed reads versions 1 and 3 (and 2 for pca models): refit the model with this "
    "kembed";

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

const std::vector<double> kEigenvalues = {3.5, 2.25, 1.0 / 3.0};
const std::vector<double> kMean = {-1.5, 0.0, 1e-300, 7.0};

}  // namespace

TEST(ModelVectors, WrittenOneDimensionalAndReadBackOnEveryRank) {
  const Comm comm = Comm::world();
  const std::string dir = test::scratch_dir(comm, "model_vectors_round_trip") + "/m";
  if (comm.is_root()) {
    io::ModelWriter writer(dir);
    writer.add_vector("eigenvalues", kEigenvalues);
    writer.add_vector("mean", kMean);
    writer.add("coefficients", {2, 3, {1, 2, 3, 4, 5, 6}});
    writer.finish({{"method", "test"}});
  }
  comm.barrier();
  // The file itself, parsed here: numpy's 1-D shape "(3,)" and the raw values.
  const std::string bytes = read_all(dir + "/eigenvalues.npy");
  ASSERT_GE(bytes.size(), 10u);
  const std::size_t header_len =
      static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  const std::string header = bytes.substr(10, header_len);
  EXPECT_NE(header.find("'shape': (3,)"), std::string::npos) << header;
  EXPECT_EQ((10 + header_len) % 64, 0u);
  ASSERT_EQ(bytes.size(), 10 + header_len + 3 * sizeof(double));
  std::vector<double> raw(3);
  std::memcpy(raw.data(), bytes.data() + 10 + header_len, raw.size() * sizeof(double));
  EXPECT_TRUE(same_bits(raw, kEigenvalues));

  const io::Model model = io::Model::open(comm, dir);
  EXPECT_EQ(model.manifest().at("format_version").get<int>(), 3);
  EXPECT_EQ(io::kModelFormatVersion, 3);
  EXPECT_EQ(model.manifest()["arrays"]["eigenvalues"],
            Json({{"file", "eigenvalues.npy"}, {"length", 3}}));
  EXPECT_TRUE(all_ranks(comm, same_bits(model.vector(comm, "eigenvalues", 3), kEigenvalues)));
  EXPECT_TRUE(all_ranks(comm, same_bits(model.vector(comm, "mean", 4), kMean)));
  const io::Array c = model.small(comm, "coefficients", 2, 3);
  EXPECT_TRUE(all_ranks(comm, c.rows == 2 && c.cols == 3 && c.values[5] == 6));
}

// Formats 1 and 2 stored vectors as 1 x k matrices, listed with rows and
// cols; a k x 1 one holds the same values.
TEST(ModelVectors, OldTwoDimensionalVectorsStillRead) {
  const Comm comm = Comm::world();
  const std::string dir = test::scratch_dir(comm, "model_vectors_old") + "/m";
  if (comm.is_root()) {
    io::ModelWriter writer(dir);
    writer.add("row", {1, 3, kEigenvalues});
    writer.add("column", {3, 1, kEigenvalues});
    writer.finish({{"method", "test"}, {"format_version", 1}});
  }
  comm.barrier();
  const io::Model model = io::Model::open(comm, dir);
  EXPECT_EQ(model.manifest().at("format_version").get<int>(), 1);
  EXPECT_TRUE(all_ranks(comm, same_bits(model.vector(comm, "row", 3), kEigenvalues)));
  EXPECT_TRUE(all_ranks(comm, same_bits(model.vector(comm, "column", 3), kEigenvalues)));
}

TEST(ModelVectors, MismatchesNameTheFileOnEveryRank) {
  const Comm comm = Comm::world();
  const std::string dir = test::scratch_dir(comm, "model_vectors_bad") + "/m";
  if (comm.is_root()) {
    io::ModelWriter writer(dir);
    writer.add_vector("eigenvalues", kEigenvalues);
    writer.add_vector("short", kEigenvalues);
    writer.add("listed_1d", {1, 3, kEigenvalues});
    writer.add("matrix", {2, 3, {1, 2, 3, 4, 5, 6}});
    writer.finish({{"method", "test"}});
    // listed_1d.npy is 1 x 3 but the manifest says (3,); short.npy loses a value.
    Json m = Json::parse(read_all(dir + "/manifest.json"));
    m["arrays"]["listed_1d"] = {{"file", "listed_1d.npy"}, {"length", 3}};
    write_all(dir + "/manifest.json", m.dump(2));
    const std::string bytes = read_all(dir + "/short.npy");
    write_all(dir + "/short.npy", bytes.substr(0, bytes.size() - 8));
  }
  comm.barrier();
  const io::Model model = io::Model::open(comm, dir);
  const std::string manifest = dir + "/manifest.json";
  // eigenvalues.npy: what short.npy held before it lost its last value.
  const std::size_t full = read_all(dir + "/eigenvalues.npy").size();
  const struct {
    std::string name;
    std::int64_t length;
    std::string message;
  } cases[] = {
      {"listed_1d", 3,
       dir + "/listed_1d.npy: shape (1, 3) differs from the (3,) of field 'arrays.listed_1d' in " +
           manifest + "; the model is damaged"},
      {"eigenvalues", 4, dir + "/eigenvalues.npy: expected a vector of 4 values, found shape (3,)"},
      {"matrix", 6, dir + "/matrix.npy: expected a vector of 6 values, found shape (2, 3)"},
      {"short", 3,
       dir + "/short.npy: .npy file has " + std::to_string(full - 8) +
           " bytes, but its header (shape (3,), '<f8') needs " + std::to_string(full) +
           " (file truncated)"},
      {"absent", 3, "model '" + dir + "' has no array 'absent'"},
  };
  for (const auto& c : cases) {
    const std::string error = caught([&] { model.vector(comm, c.name, c.length); });
    EXPECT_TRUE(all_ranks(comm, error == c.message)) << c.name << ": " << error;
  }
  // A vector entry read as a matrix.
  const std::string error = caught([&] { model.large(comm, "listed_1d"); });
  EXPECT_TRUE(all_ranks(comm, error == dir + "/listed_1d.npy: field 'arrays.listed_1d' in " +
                                          manifest +
                                          " lists a vector, but a matrix is read; the model is "
                                          "damaged"))
      << error;
}

TEST(ModelVectors, NpyHeaderAcceptsOneDimensionalShapesOnlyWhenAsked) {
  std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (5,), }";
  dict.append((64 - (10 + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  const std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + char(dict.size()) + '\0' + dict;
  const io::NpyHeader h = io::parse_npy_header(bytes, "v.npy", true);
  EXPECT_EQ(h.ndim, 1);
  EXPECT_EQ(h.rows, 5);
  EXPECT_EQ(h.cols, 1);
  EXPECT_EQ(h.data_offset, static_cast<std::int64_t>(10 + dict.size()));
  EXPECT_EQ(caught([&] { io::parse_npy_header(bytes, "v.npy"); }),
            "v.npy: .npy array is 1-D (shape (5,)); expected a 2-D matrix, e.g. save "
            "x.reshape(-1, 1)");
  std::string empty = bytes;
  empty.replace(empty.find("(5,)"), 4, "(0,)");
  EXPECT_NE(caught([&] { io::parse_npy_header(empty, "v.npy", true); }), "");
}

// parse_manifest: vectors are 1-D ("length") in version 3 and 1 x k
// matrices before; version 2 exists for pca only.
TEST(ModelVectors, ManifestChecksVectorsByVersion) {
  const auto vec = [](const std::string& name, int length) {
    return Json{{"file", name + ".npy"}, {"length", length}};
  };
  const auto mat = [](const std::string& name, int rows, int cols) {
    return Json{{"file", name + ".npy"}, {"rows", rows}, {"cols", cols}};
  };
  const Json v3 = {{"format", "kembed-model"},
                   {"format_version", 3},
                   {"method", "kpca"},
                   {"n", 3},
                   {"d", 2},
                   {"k", 1},
                   {"kernel", {{"name", "rbf"}, {"gamma", 0.5}}},
                   {"kernel_grand_mean", 0.25},
                   {"arrays",
                    {{"coefficients", mat("coefficients", 3, 1)},
                     {"kernel_col_means", vec("kernel_col_means", 3)},
                     {"eigenvalues", vec("eigenvalues", 1)},
                     {"X", mat("X", 3, 2)}}}};
  const auto error_with = [](Json m, const std::string& field, const Json& value) {
    Json* node = &m;
    std::size_t begin = 0;
    for (std::size_t dot; (dot = field.find('.', begin)) != std::string::npos; begin = dot + 1)
      node = &(*node)[field.substr(begin, dot - begin)];
    (*node)[field.substr(begin)] = value;
    return caught([&] { io::parse_manifest(m.dump(), "M/manifest.json"); });
  };
  const std::string p = "M/manifest.json: ";
  EXPECT_EQ(caught([&] { io::parse_manifest(v3.dump(), "M/manifest.json"); }), "");
  EXPECT_EQ(error_with(v3, "arrays.eigenvalues", vec("eigenvalues", 2)),
            p + "field 'arrays.eigenvalues': expected length k = 1, found 2");
  EXPECT_EQ(error_with(v3, "arrays.kernel_col_means", mat("kernel_col_means", 1, 3)),
            p + "field 'arrays.kernel_col_means': expected a vector of length n = 3 (format "
                "version 3 stores vectors 1-D), found shape (1, 3)");
  EXPECT_EQ(error_with(v3, "arrays.coefficients", vec("coefficients", 3)),
            p + "field 'arrays.coefficients': expected shape (n, k) = (3, 1), found a vector of "
                "length 3");
  EXPECT_EQ(error_with(v3, "arrays.eigenvalues.rows", 1),
            p + "field 'arrays.eigenvalues': expected \"length\" (a vector) or \"rows\" and "
                "\"cols\" (a matrix), not both");
  EXPECT_EQ(error_with(v3, "arrays.eigenvalues.length", -1),
            p + "field 'arrays.eigenvalues.length': expected an integer from 0 to "
                "9223372036854775807, found -1");
  // The same model as version 1 wrote it: vectors 1 x k, and no "length".
  Json v1 = v3;
  v1["format_version"] = 1;
  v1["arrays"]["kernel_col_means"] = mat("kernel_col_means", 1, 3);
  v1["arrays"]["eigenvalues"] = mat("eigenvalues", 1, 1);
  EXPECT_EQ(error_with(v1, "format_version", 1), "");
  EXPECT_EQ(error_with(v1, "arrays.eigenvalues", vec("eigenvalues", 1)),
            p + "field 'arrays.eigenvalues': expected shape (1, k) = (1, 1), found a vector of "
                "length 1");
  // Version 2 is a pca layout only; 4 does not exist yet.
  EXPECT_EQ(error_with(v1, "format_version", 2),
            p + "unsupported model format version 2" + kVersionsRead);
  EXPECT_EQ(error_with(v3, "format_version", 4),
            p + "unsupported model format version 4" + kVersionsRead);

  // pca: version 2 (k x d components, 1 x d vectors) and 3 (1-D vectors).
  Json pca2 = {{"format", "kembed-model"},
               {"format_version", 2},
               {"method", "pca"},
               {"n", 10},
               {"d", 3},
               {"k", 2},
               {"whiten", false},
               {"components_orientation", "k x d"},
               {"arrays",
                {{"mean", mat("mean", 1, 3)},
                 {"scale", mat("scale", 1, 3)},
                 {"components", mat("components", 2, 3)},
                 {"eigenvalues", mat("eigenvalues", 1, 2)}}}};
  EXPECT_EQ(error_with(pca2, "format_version", 2), "");
  Json pca3 = pca2;
  pca3["format_version"] = 3;
  pca3["arrays"]["mean"] = vec("mean", 3);
  pca3["arrays"]["scale"] = vec("scale", 3);
  pca3["arrays"]["eigenvalues"] = vec("eigenvalues", 2);
  EXPECT_EQ(error_with(pca3, "format_version", 3), "");
  EXPECT_EQ(error_with(pca2, "format_version", 3),
            p + "field 'arrays.mean': expected a vector of length d = 3 (format version 3 stores "
                "vectors 1-D), found shape (1, 3)");
  EXPECT_EQ(error_with(pca3, "arrays.components", mat("components", 3, 2)),
            p + "field 'arrays.components': expected shape (k, d) = (2, 3), found (3, 2)");
}
