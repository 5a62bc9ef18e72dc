#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kembed/core/error.hpp"
#include "kembed/io/manifest.hpp"
#include "kembed/kernel/kernel.hpp"
#include "kembed/kernel/distances.hpp"

using kembed::io::Json;
using kembed::io::ManifestFields;
using kembed::io::parse_manifest;

namespace {

// What the format-version error says after the version it found.
const std::string kVersionsRead =
    "; this kembed reads versions 1 and 3 (and 2 for pca models): refit the model with this "
    "kembed";

/// A manifest as ModelWriter::finish writes it, with `change` applied.
std::string manifest(const std::string& key = "", const Json& value = nullptr) {
  Json m = {{"format", "kembed-model"},
            {"format_version", 1},
            {"method", "kpca"},
            {"n", 3},
            {"d", 2},
            {"k", 1},
            {"kernel", {{"name", "rbf"}, {"gamma", 0.5}}},
            {"kernel_grand_mean", 0.25},
            {"arrays",
             {{"coefficients", {{"file", "coefficients.npy"}, {"rows", 3}, {"cols", 1}}},
              {"kernel_col_means", {{"file", "kernel_col_means.npy"}, {"rows", 1}, {"cols", 3}}},
              {"eigenvalues", {{"file", "eigenvalues.npy"}, {"rows", 1}, {"cols", 1}}},
              {"X", {{"file", "X.npy"}, {"rows", 3}, {"cols", 2}}}}}};
  if (!key.empty()) {
    if (value.is_null())
      m.erase(key);
    else
      m[key] = value;
  }
  return m.dump(2);
}

std::string manifest_error(const std::string& text) {
  try {
    parse_manifest(text, "M/manifest.json");
  } catch (const kembed::Error& e) {
    return e.what();
  }
  return "";
}

// The manifests of the three methods as their writers (kpca_command.cpp,
// mds_command.cpp, pca_command.cpp) lay them out, n = 20.
Json arrays_entry(const std::string& name, int rows, int cols) {
  return {{"file", name + ".npy"}, {"rows", rows}, {"cols", cols}};
}

Json kpca_poly() {  // poly kernel with the pre-image map
  return {{"format", "kembed-model"},
          {"format_version", 1},
          {"method", "kpca"},
          {"kembed_version", "x"},
          {"n", 20},
          {"d", 3},
          {"k", 2},
          {"kernel", {{"name", "poly"}, {"gamma", 0.5}, {"degree", 3}, {"coef0", 1.0}}},
          {"kernel_grand_mean", 1.5},
          {"embedding_scale", "sqrt(eigenvalue)"},
          {"inverse_map", {{"alpha", 1.0}, {"definition", "..."}}},
          {"data_fingerprint_mix64sum", "0123456789abcdef"},
          {"arrays",
           {{"coefficients", arrays_entry("coefficients", 20, 2)},
            {"kernel_col_means", arrays_entry("kernel_col_means", 1, 20)},
            {"eigenvalues", arrays_entry("eigenvalues", 1, 2)},
            {"inverse_weights", arrays_entry("inverse_weights", 20, 3)},
            {"inverse_mean", arrays_entry("inverse_mean", 1, 3)},
            {"X", arrays_entry("X", 20, 3)}}}};
}

Json kpca_precomputed() {
  return {{"format", "kembed-model"},
          {"format_version", 1},
          {"method", "kpca"},
          {"n", 20},
          {"d", 0},
          {"k", 2},
          {"kernel", {{"name", "precomputed"}}},
          {"kernel_grand_mean", -0.5},
          {"arrays",
           {{"coefficients", arrays_entry("coefficients", 20, 2)},
            {"kernel_col_means", arrays_entry("kernel_col_means", 1, 20)},
            {"eigenvalues", arrays_entry("eigenvalues", 1, 2)}}}};
}

Json mds_points() {
  return {{"format", "kembed-model"},
          {"format_version", 1},
          {"method", "mds"},
          {"n", 20},
          {"d", 3},
          {"k", 2},
          {"input", "points"},
          {"metric", "manhattan"},
          {"sq_distance_grand_mean", 4.0},
          {"arrays",
           {{"vectors", arrays_entry("vectors", 20, 2)},
            {"eigenvalues", arrays_entry("eigenvalues", 1, 2)},
            {"sq_distance_row_means", arrays_entry("sq_distance_row_means", 1, 20)},
            {"X", arrays_entry("X", 20, 3)}}}};
}

Json mds_distances() {
  Json m = mds_points();
  m["input"] = "distances";
  m.erase("metric");
  m["d"] = 0;
  m["arrays"].erase("X");
  return m;
}

Json pca() {
  return {{"format", "kembed-model"},
          {"format_version", 1},
          {"method", "pca"},
          {"n", 20},
          {"d", 3},
          {"k", 2},
          {"standardize", true},
          {"whiten", false},
          {"route", "covariance"},
          {"arrays",
           {{"mean", arrays_entry("mean", 1, 3)},
            {"scale", arrays_entry("scale", 1, 3)},
            {"components", arrays_entry("components", 3, 2)},
            {"eigenvalues", arrays_entry("eigenvalues", 1, 2)}}}};
}

/// The error of `m` with the field at dotted `path` set to `value` (removed
/// when `value` is null).
std::string tampered(Json m, const std::string& path, const Json& value) {
  Json* node = &m;
  std::string rest = path;
  for (std::size_t dot; (dot = rest.find('.')) != std::string::npos; rest.erase(0, dot + 1))
    node = &(*node)[rest.substr(0, dot)];
  if (value.is_null())
    node->erase(rest);
  else
    (*node)[rest] = value;
  return manifest_error(m.dump());
}

}  // namespace

TEST(Manifest, AcceptsWhatTheWritersWrite) {
  const Json m = parse_manifest(manifest(), "M/manifest.json");
  EXPECT_EQ(m.value("method", ""), "kpca");
  EXPECT_EQ(m.at("arrays").at("X").at("file"), "X.npy");
  // Key order is kept (ordered_json), as the writer wrote it.
  EXPECT_EQ(m.begin().key(), "format");
  // A float 1.0 is still version 1.
  EXPECT_EQ(manifest_error(manifest("format_version", 1.0)), "");
  for (const Json& good : {kpca_poly(), kpca_precomputed(), mds_points(), mds_distances(), pca()})
    EXPECT_EQ(manifest_error(good.dump()), "") << good.dump();
  // Methods transform does not know are checked for format only (transform
  // then names the method it does not support).
  EXPECT_EQ(manifest_error(manifest("method", "tsne")), "");
}

TEST(Manifest, ExistingMessagesStay) {
  EXPECT_EQ(manifest_error("{ not json").rfind("M/manifest.json: not a valid model manifest: invalid JSON "
                                         "at line 1, column 4: ",
                                         0),
            0u)
      << manifest_error("{ not json");
  EXPECT_EQ(manifest_error("{ not json").find("json.exception"), std::string::npos);
  EXPECT_EQ(manifest_error("[1, 2]"), "M/manifest.json: not a kembed model manifest");
  EXPECT_EQ(manifest_error(manifest("format", "something-else")),
            "M/manifest.json: not a kembed model manifest");
  EXPECT_EQ(manifest_error(manifest("format", nullptr)), "M/manifest.json: not a kembed model manifest");
  EXPECT_EQ(manifest_error(manifest("format_version", 2)),
            "M/manifest.json: unsupported model format version 2" + kVersionsRead);
  EXPECT_EQ(manifest_error(manifest("format_version", nullptr)),
            "M/manifest.json: unsupported model format version (none given)" + kVersionsRead);
  EXPECT_EQ(manifest_error(manifest("arrays", nullptr)), "M/manifest.json: manifest lists no arrays");
  EXPECT_EQ(manifest_error(manifest("arrays", Json::array({"X.npy"}))),
            "M/manifest.json: manifest lists no arrays");
}

// Keys of the wrong JSON type used to escape as nlohmann::json::type_error
// (not an agreed kembed::Error), or as undefined behaviour for a huge version.
TEST(Manifest, WrongTypesAreErrorsNotJsonExceptions) {
  EXPECT_EQ(manifest_error(manifest("format", 7)), "M/manifest.json: not a kembed model manifest");
  EXPECT_EQ(manifest_error(manifest("format_version", "1")),
            "M/manifest.json: unsupported model format version \"1\"" + kVersionsRead);
  EXPECT_EQ(manifest_error(manifest("format_version", 1e300)),
            "M/manifest.json: unsupported model format version 1e+300" + kVersionsRead);
  EXPECT_EQ(manifest_error(manifest("format_version", 1.5)),
            "M/manifest.json: unsupported model format version 1.5" + kVersionsRead);
  EXPECT_EQ(manifest_error(manifest("method", Json::array({"kpca"}))),
            "M/manifest.json: manifest 'method' is not a string");
  EXPECT_EQ(manifest_error(manifest("arrays", {{"X", "X.npy"}})),
            "M/manifest.json: array 'X' has no file name");
  EXPECT_EQ(manifest_error(manifest("arrays", {{"X", {{"file", 3}}}})),
            "M/manifest.json: array 'X' has no file name");
  EXPECT_EQ(manifest_error(manifest("arrays", {{"X", {{"rows", 3}}}})),
            "M/manifest.json: array 'X' has no file name");
}

// A tampered file name must not let the model read outside its directory.
TEST(Manifest, ArrayFileNamesStayInTheModel) {
  for (const std::string bad : {"../X.npy", "/etc/passwd", "sub/X.npy", "", ".", ".."})
    EXPECT_EQ(tampered(kpca_poly(), "arrays.X.file", bad),
              "M/manifest.json: field 'arrays.X.file': expected a plain file name inside the "
              "model directory, found " +
                  Json(bad).dump())
        << bad;
  EXPECT_EQ(tampered(kpca_poly(), "arrays.X.file", std::string("X\0.npy", 6)).find(
                "M/manifest.json: field 'arrays.X.file': expected a plain file name"),
            0u);
  EXPECT_EQ(tampered(kpca_poly(), "arrays.X.rows", nullptr),
            "M/manifest.json: field 'arrays.X.rows' is missing (expected an integer from 0 to "
            "9223372036854775807)");
  EXPECT_EQ(tampered(kpca_poly(), "arrays.X.cols", -3),
            "M/manifest.json: field 'arrays.X.cols': expected an integer from 0 to "
            "9223372036854775807, found -3");
}

// Every field a reader of each method takes: missing, wrong type, out of
// range; the message names the file and the field (issue: data safety).
TEST(Manifest, KpcaFieldsAreChecked) {
  const std::string p = "M/manifest.json: field ";
  const Json m = kpca_poly();
  EXPECT_EQ(tampered(m, "n", nullptr),
            p + "'n' is missing (expected an integer from 2 to 2147483647)");
  EXPECT_EQ(tampered(m, "n", 1e300), p + "'n': expected an integer from 2 to 2147483647, found 1e+300");
  EXPECT_EQ(tampered(m, "n", 20.5), p + "'n': expected an integer from 2 to 2147483647, found 20.5");
  EXPECT_EQ(tampered(m, "n", "20"),
            p + "'n': expected an integer from 2 to 2147483647, found \"20\"");
  EXPECT_EQ(tampered(m, "n", 1), p + "'n': expected an integer from 2 to 2147483647, found 1");
  EXPECT_EQ(tampered(m, "n", 4294967296LL),
            p + "'n': expected an integer from 2 to 2147483647, found 4294967296");
  // An integral float is the integer; the arrays then decide.
  EXPECT_EQ(tampered(m, "n", 20.0), "");
  EXPECT_EQ(tampered(m, "k", -1), p + "'k': expected an integer from 1 to 20, found -1");
  EXPECT_EQ(tampered(m, "k", 21), p + "'k': expected an integer from 1 to 20, found 21");
  EXPECT_EQ(tampered(m, "k", true), p + "'k': expected an integer from 1 to 20, found true");
  EXPECT_EQ(tampered(m, "d", 0), p + "'d': expected an integer from 1 to 2147483647, found 0");
  EXPECT_EQ(tampered(m, "kernel", "rbf"), p + "'kernel': expected an object, found \"rbf\"");
  EXPECT_EQ(tampered(m, "kernel", nullptr), p + "'kernel' is missing (expected an object)");
  EXPECT_EQ(tampered(m, "kernel.name", "gauss"),
            p + "'kernel.name': expected \"linear\", \"poly\", \"rbf\", \"laplacian\", "
                "\"sigmoid\", \"cosine\" or \"precomputed\", found \"gauss\"");
  EXPECT_EQ(tampered(m, "kernel.gamma", "abc"),
            p + "'kernel.gamma': expected a positive finite number, found \"abc\"");
  EXPECT_EQ(tampered(m, "kernel.gamma", 0), p + "'kernel.gamma': expected a positive finite number, found 0");
  EXPECT_EQ(tampered(m, "kernel.gamma", -1.5),
            p + "'kernel.gamma': expected a positive finite number, found -1.5");
  EXPECT_EQ(tampered(m, "kernel.gamma", nullptr),
            p + "'kernel.gamma' is missing (expected a positive finite number)");
  EXPECT_EQ(manifest_error(R"({"format": "kembed-model", "format_version": 1, "method": "kpca", "n": 20,
      "d": 3, "k": 2, "kernel": {"name": "rbf", "gamma": 1e999}, "kernel_grand_mean": 0,
      "arrays": {}})"),
            "M/manifest.json: not a valid model manifest: invalid JSON: number overflow parsing "
            "'1e999'");
  EXPECT_EQ(tampered(m, "kernel.degree", 0),
            p + "'kernel.degree': expected an integer from 1 to 2147483647, found 0");
  EXPECT_EQ(tampered(m, "kernel.degree", 2.5),
            p + "'kernel.degree': expected an integer from 1 to 2147483647, found 2.5");
  EXPECT_EQ(tampered(m, "kernel.degree", nullptr),
            p + "'kernel.degree' is missing (expected an integer from 1 to 2147483647)");
  EXPECT_EQ(tampered(m, "kernel.coef0", "1"), p + "'kernel.coef0': expected a finite number, found \"1\"");
  EXPECT_EQ(tampered(m, "kernel.coef0", nullptr),
            p + "'kernel.coef0' is missing (expected a finite number)");
  EXPECT_EQ(tampered(m, "kernel_grand_mean", Json::array()),
            p + "'kernel_grand_mean': expected a finite number, found []");
  EXPECT_EQ(tampered(m, "inverse_map", 1), p + "'inverse_map': expected an object, found 1");
  EXPECT_EQ(tampered(m, "inverse_map.alpha", 0),
            p + "'inverse_map.alpha': expected a positive finite number, found 0");
  EXPECT_EQ(tampered(m, "inverse_map.alpha", nullptr),
            p + "'inverse_map.alpha' is missing (expected a positive finite number)");

  // Parameters a kernel does not use may be absent, but when present they
  // are read and must be well-formed.
  Json rbf = m;
  rbf["kernel"] = {{"name", "rbf"}, {"gamma", 0.5}};
  EXPECT_EQ(manifest_error(rbf.dump()), "");
  EXPECT_EQ(tampered(rbf, "kernel.degree", "3"),
            p + "'kernel.degree': expected an integer from 1 to 2147483647, found \"3\"");
  Json linear = m;
  linear["kernel"] = {{"name", "linear"}};
  EXPECT_EQ(manifest_error(linear.dump()), "");
  EXPECT_EQ(tampered(linear, "kernel.gamma", "abc"),
            p + "'kernel.gamma': expected a positive finite number, found \"abc\"");
  Json sigmoid = m;
  sigmoid["kernel"] = {{"name", "sigmoid"}, {"gamma", 0.5}};
  EXPECT_EQ(manifest_error(sigmoid.dump()), p + "'kernel.coef0' is missing (expected a finite number)");
  // d = 0 only where the model has no input space.
  EXPECT_EQ(tampered(kpca_precomputed(), "d", -1),
            p + "'d': expected an integer from 0 to 2147483647, found -1");
}

TEST(Manifest, ArrayShapesMatchNDK) {
  const std::string p = "M/manifest.json: field ";
  const Json m = kpca_poly();
  EXPECT_EQ(tampered(m, "arrays.coefficients", nullptr),
            p + "'arrays.coefficients' is missing (expected the n, k array coefficients)");
  EXPECT_EQ(tampered(m, "arrays.coefficients.cols", 3),
            p + "'arrays.coefficients': expected shape (n, k) = (20, 2), found (20, 3)");
  EXPECT_EQ(tampered(m, "k", 1),
            p + "'arrays.coefficients': expected shape (n, k) = (20, 1), found (20, 2)");
  EXPECT_EQ(tampered(m, "n", 19),
            p + "'arrays.coefficients': expected shape (n, k) = (19, 2), found (20, 2)");
  EXPECT_EQ(tampered(m, "d", 4), p + "'arrays.X': expected shape (n, d) = (20, 4), found (20, 3)");
  EXPECT_EQ(tampered(m, "arrays.inverse_mean.cols", 2),
            p + "'arrays.inverse_mean': expected shape (1, d) = (1, 3), found (1, 2)");
  EXPECT_EQ(tampered(m, "arrays.inverse_weights", nullptr),
            p + "'arrays.inverse_weights' is missing (expected the n, d array inverse_weights)");
  EXPECT_EQ(tampered(m, "arrays.X", nullptr),
            p + "'arrays.X' is missing (expected the n, d array X)");
  // A precomputed kernel has no training samples to list.
  EXPECT_EQ(manifest_error(kpca_precomputed().dump()), "");
  EXPECT_EQ(tampered(pca(), "arrays.components.rows", 2),
            p + "'arrays.components': expected shape (d, k) = (3, 2), found (2, 2)");
  EXPECT_EQ(tampered(mds_points(), "arrays.sq_distance_row_means.cols", 21),
            p + "'arrays.sq_distance_row_means': expected shape (1, n) = (1, 20), found (1, 21)");
}

TEST(Manifest, MdsFieldsAreChecked) {
  const std::string p = "M/manifest.json: field ";
  const Json m = mds_points();
  EXPECT_EQ(tampered(m, "input", "graph"),
            p + "'input': expected \"points\" or \"distances\", found \"graph\"");
  EXPECT_EQ(tampered(m, "input", nullptr),
            p + "'input' is missing (expected \"points\" or \"distances\")");
  EXPECT_EQ(tampered(m, "metric", "chebyshev"),
            p + "'metric': expected \"euclidean\", \"sqeuclidean\", \"manhattan\" or \"cosine\", "
                "found \"chebyshev\"");
  EXPECT_EQ(tampered(m, "metric", nullptr),
            p + "'metric' is missing (expected \"euclidean\", \"sqeuclidean\", \"manhattan\" or "
                "\"cosine\")");
  EXPECT_EQ(tampered(m, "sq_distance_grand_mean", "4"),
            p + "'sq_distance_grand_mean': expected a finite number, found \"4\"");
  EXPECT_EQ(tampered(m, "sq_distance_grand_mean", nullptr),
            p + "'sq_distance_grand_mean' is missing (expected a finite number)");
  EXPECT_EQ(tampered(m, "k", 0), p + "'k': expected an integer from 1 to 20, found 0");
  EXPECT_EQ(tampered(m, "n", -5), p + "'n': expected an integer from 2 to 2147483647, found -5");
  EXPECT_EQ(tampered(m, "d", 0), p + "'d': expected an integer from 1 to 2147483647, found 0");
  EXPECT_EQ(tampered(mds_distances(), "metric", 3),
            p + "'metric': expected \"euclidean\", \"sqeuclidean\", \"manhattan\" or \"cosine\", "
                "found 3");
}

// A knn spectral model as save_spectral_model writes it (format version 3:
// vectors 1-D).
TEST(Manifest, SpectralFieldsAreChecked) {
  const auto vector = [](const std::string& name, int length) {
    return Json{{"file", name + ".npy"}, {"length", length}};
  };
  const Json m = {{"format", "kembed-model"},
                  {"format_version", 3},
                  {"method", "spectral"},
                  {"n", 20},
                  {"d", 3},
                  {"k", 2},
                  {"affinity", "knn"},
                  {"neighbors", 5},
                  {"arrays",
                   {{"X", arrays_entry("X", 20, 3)},
                    {"vectors", arrays_entry("vectors", 20, 2)},
                    {"degrees", vector("degrees", 20)},
                    {"eigenvalues", vector("eigenvalues", 2)},
                    {"neighbor_radius", vector("neighbor_radius", 20)},
                    {"neighbor_last", vector("neighbor_last", 20)}}}};
  EXPECT_EQ(parse_manifest(m.dump(), "M/manifest.json").value("method", ""), "spectral");
  const std::string p = "M/manifest.json: field ";
  EXPECT_EQ(tampered(m, "affinity", "cosine"),
            p + "'affinity': expected \"rbf\" or \"knn\", found \"cosine\"");
  EXPECT_EQ(tampered(m, "neighbors", 1),
            p + "'neighbors': expected an integer from 2 to 20, found 1");
  EXPECT_EQ(tampered(m, "k", 20), p + "'k': expected an integer from 1 to 19, found 20");
  EXPECT_EQ(tampered(m, "arrays.neighbor_last", nullptr),
            "M/manifest.json: field 'arrays.neighbor_last' is missing (expected the vector "
            "neighbor_last of length n = 20)");
  EXPECT_EQ(tampered(m, "arrays.vectors.cols", 3),
            p + "'arrays.vectors': expected shape (n, k) = (20, 2), found (20, 3)");
  Json rbf = m;
  rbf["affinity"] = "rbf";
  rbf.erase("neighbors");
  rbf["arrays"].erase("neighbor_radius");
  rbf["arrays"].erase("neighbor_last");
  EXPECT_EQ(tampered(rbf, "gamma", nullptr),
            p + "'gamma' is missing (expected a positive finite number)");
  rbf["gamma"] = 0.5;
  EXPECT_EQ(parse_manifest(rbf.dump(), "M/manifest.json").value("affinity", ""), "rbf");
}

TEST(Manifest, PcaFieldsAreChecked) {
  const std::string p = "M/manifest.json: field ";
  const Json m = pca();
  EXPECT_EQ(tampered(m, "whiten", nullptr), p + "'whiten' is missing (expected true or false)");
  EXPECT_EQ(tampered(m, "whiten", "yes"), p + "'whiten': expected true or false, found \"yes\"");
  EXPECT_EQ(tampered(m, "whiten", 1), p + "'whiten': expected true or false, found 1");
  EXPECT_EQ(tampered(m, "standardize", "no"),
            p + "'standardize': expected true or false, found \"no\"");
  // k <= min(n, d).
  EXPECT_EQ(tampered(m, "k", 4), p + "'k': expected an integer from 1 to 3, found 4");
  EXPECT_EQ(tampered(m, "k", -1), p + "'k': expected an integer from 1 to 3, found -1");
  EXPECT_EQ(tampered(m, "d", 1e300), p + "'d': expected an integer from 1 to 2147483647, found 1e+300");
  EXPECT_EQ(tampered(m, "n", nullptr), p + "'n' is missing (expected an integer from 2 to 2147483647)");
}

// Format 2 pca models hold the axes as rows (k x d); format 1 ones (d x k)
// still load; other methods stay at version 1.
TEST(Manifest, PcaFormatTwoHoldsAxesAsRowsAndNames) {
  const std::string p = "M/manifest.json: field ";
  Json v2 = pca();
  v2["format_version"] = 2;
  v2["components_orientation"] = "k x d";
  v2["arrays"]["components"] = arrays_entry("components", 2, 3);
  v2["feature_names"] = {"a", "b", "c"};
  EXPECT_EQ(manifest_error(v2.dump()), "");
  EXPECT_EQ(manifest_error(pca().dump()), "");
  EXPECT_EQ(tampered(v2, "arrays.components.rows", 3),
            p + "'arrays.components': expected shape (k, d) = (2, 3), found (3, 3)");
  EXPECT_EQ(tampered(v2, "components_orientation", nullptr),
            p + "'components_orientation' is missing (expected \"k x d\")");
  EXPECT_EQ(tampered(pca(), "components_orientation", "k x d"),
            p + "'components_orientation': expected \"d x k\", found \"k x d\"");
  EXPECT_EQ(tampered(v2, "feature_names", Json::array({"a", "b"})),
            p + "'feature_names': expected an array of d = 3 strings, found [\"a\",\"b\"]");
  EXPECT_EQ(tampered(v2, "feature_names", Json::array({"a", 2, "c"})),
            p + "'feature_names': entry 2: expected a string, found 2");
  EXPECT_EQ(tampered(v2, "format_version", 4),
            "M/manifest.json: unsupported model format version 4" + kVersionsRead);
  Json kpca2 = kpca_poly();
  kpca2["format_version"] = 2;
  EXPECT_EQ(manifest_error(kpca2.dump()),
            "M/manifest.json: unsupported model format version 2" + kVersionsRead);
}

// The accessors the readers use: after parse_manifest, reads of the checked
// fields succeed; reads of others give the same kind of message.
TEST(Manifest, TypedAccessors) {
  const Json m = parse_manifest(kpca_poly().dump(), "M/manifest.json");
  const ManifestFields f(m, "M/manifest.json");
  EXPECT_EQ(f.integer("n", 2, 100), 20);
  EXPECT_EQ(f.integer("kernel.degree", 1, 10), 3);
  EXPECT_EQ(f.positive("kernel.gamma"), 0.5);
  EXPECT_EQ(f.number("kernel_grand_mean"), 1.5);
  EXPECT_EQ(f.text("kernel.name"), "poly");
  EXPECT_EQ(f.choice("kernel.name", {"rbf", "poly"}), "poly");
  EXPECT_EQ(f.object("kernel").size(), 4u);
  EXPECT_TRUE(f.has("inverse_map.alpha"));
  EXPECT_FALSE(f.has("inverse_map.beta"));
  EXPECT_FALSE(f.has("n.x"));  // n is no object: absent, not an error
  EXPECT_EQ(f.positive("inverse_map.alpha"), 1.0);
  auto error = [](auto read) {
    try {
      read();
    } catch (const kembed::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error([&] { f.integer("n", 21, 30); }),
            "M/manifest.json: field 'n': expected an integer from 21 to 30, found 20");
  EXPECT_EQ(error([&] { f.flag("kernel.name"); }),
            "M/manifest.json: field 'kernel.name': expected true or false, found \"poly\"");
  EXPECT_EQ(error([&] { f.text("n"); }), "M/manifest.json: field 'n': expected a string, found 20");
  EXPECT_EQ(error([&] { f.number("n.x"); }),
            "M/manifest.json: field 'n': expected an object, found 20");
  EXPECT_EQ(error([&] { f.flag("whiten"); }),
            "M/manifest.json: field 'whiten' is missing (expected true or false)");
  // A long value is shortened in the message.
  const Json big = {{"s", std::string(200, 'x')}};
  const std::string message = error([&] { ManifestFields(big, "B").integer("s", 0, 1); });
  EXPECT_LT(message.size(), 140u) << message;
  EXPECT_NE(message.find("...") , std::string::npos) << message;
}

// io repeats the kernel and metric name tables (it sits below kernel and
// spectral): both sides must agree.
TEST(Manifest, NameTablesMatchKernelAndMetric) {
  const auto& kernels = kembed::io::manifest_kernel_names();
  for (const std::string& name : kernels) EXPECT_EQ(kembed::kernel::Kernel::name(kembed::kernel::Kernel::parse(name)), name);
  for (auto type : {kembed::kernel::KernelType::linear, kembed::kernel::KernelType::poly, kembed::kernel::KernelType::rbf,
                    kembed::kernel::KernelType::laplacian, kembed::kernel::KernelType::sigmoid,
                    kembed::kernel::KernelType::cosine, kembed::kernel::KernelType::precomputed})
    EXPECT_NE(std::find(kernels.begin(), kernels.end(), kembed::kernel::Kernel::name(type)), kernels.end());
  // uses_gamma() is what the manifest check requires gamma for.
  for (const std::string& name : kernels) {
    kembed::kernel::Kernel k;
    k.type = kembed::kernel::Kernel::parse(name);
    const bool required = name == "poly" || name == "rbf" || name == "laplacian" || name == "sigmoid";
    EXPECT_EQ(k.uses_gamma(), required) << name;
  }
  const auto& metrics = kembed::io::manifest_metric_names();
  for (const std::string& name : metrics) EXPECT_EQ(kembed::kernel::metric_name(kembed::kernel::parse_metric(name)), name);
  for (auto metric : {kembed::kernel::Metric::euclidean, kembed::kernel::Metric::sqeuclidean,
                      kembed::kernel::Metric::manhattan, kembed::kernel::Metric::cosine})
    EXPECT_NE(std::find(metrics.begin(), metrics.end(), kembed::kernel::metric_name(metric)), metrics.end());
}
