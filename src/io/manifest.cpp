#include "kembed/io/manifest.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kembed/core/error.hpp"

namespace kembed::io {

const std::vector<std::string>& manifest_kernel_names() {
  static const std::vector<std::string> names = {"linear",  "poly",   "rbf",        "laplacian",
                                                 "sigmoid", "cosine", "precomputed"};
  return names;
}

const std::vector<std::string>& manifest_metric_names() {
  static const std::vector<std::string> names = {"euclidean", "sqeuclidean", "manhattan",
                                                 "cosine"};
  return names;
}

namespace {

// The JSON text of a value for a message: short, and never throwing (the
// replace handler turns bytes that are not UTF-8 into U+FFFD).
std::string shown(const Json& value) {
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

std::string one_of(const std::vector<std::string>& allowed) {
  std::string text;
  for (std::size_t i = 0; i < allowed.size(); ++i)
    text += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + ("\"" + allowed[i] + "\"");
  return text;
}

}  // namespace

ManifestFields::ManifestFields(const Json& manifest, std::string path)
    : manifest_(manifest), path_(std::move(path)) {}

void ManifestFields::fail(const std::string& field, const std::string& reason) const {
  throw Error(path_ + ": field '" + field + "': " + reason);
}

void ManifestFields::wrong(const std::string& field, const std::string& expected,
                           const Json& found) const {
  fail(field, "expected " + expected + ", found " + shown(found));
}

const Json* ManifestFields::find(const std::string& field) const {
  const Json* node = &manifest_;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t dot = field.find('.', begin);
    const std::string parent = field.substr(0, begin == 0 ? 0 : begin - 1);
    if (!node->is_object()) wrong(parent, "an object", *node);
    const auto it = node->find(field.substr(begin, dot == std::string::npos ? dot : dot - begin));
    if (it == node->end()) return nullptr;
    node = &*it;
    if (dot == std::string::npos) return node;
    begin = dot + 1;
  }
}

const Json& ManifestFields::require(const std::string& field, const std::string& expected) const {
  const Json* value = find(field);
  if (!value) throw Error(path_ + ": field '" + field + "' is missing (expected " + expected + ")");
  return *value;
}

bool ManifestFields::has(const std::string& field) const {
  // A step that is not an object means "absent" here, not an error.
  const Json* node = &manifest_;
  std::size_t begin = 0;
  for (;;) {
    if (!node->is_object()) return false;
    const std::size_t dot = field.find('.', begin);
    const auto it = node->find(field.substr(begin, dot == std::string::npos ? dot : dot - begin));
    if (it == node->end()) return false;
    node = &*it;
    if (dot == std::string::npos) return true;
    begin = dot + 1;
  }
}

namespace {

// `value` as an integer in [lo, hi], or an Error naming `field` of `f`.
std::int64_t checked_integer(const ManifestFields& f, const std::string& field, const Json& value,
                             std::int64_t lo, std::int64_t hi) {
  const std::string expected =
      "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  bool ok = true;
  std::int64_t result = 0;
  if (value.is_number_unsigned()) {
    const auto u = value.get<std::uint64_t>();
    ok = u <= static_cast<std::uint64_t>(INT64_MAX);
    if (ok) result = static_cast<std::int64_t>(u);
  } else if (value.is_number_integer()) {
    result = value.get<std::int64_t>();
  } else if (value.is_number_float()) {
    // Converted only when it fits: a huge float cast to an integer is
    // undefined behaviour. -2^63 and 2^63 are exact as doubles.
    const double x = value.get<double>();
    ok = x >= -9223372036854775808.0 && x < 9223372036854775808.0 && x == std::floor(x);
    if (ok) result = static_cast<std::int64_t>(x);
  } else {
    ok = false;
  }
  if (!ok || result < lo || result > hi) f.fail(field, "expected " + expected + ", found " + shown(value));
  return result;
}

}  // namespace

std::int64_t ManifestFields::integer(const std::string& field, std::int64_t lo,
                                     std::int64_t hi) const {
  return checked_integer(*this, field,
                         require(field, "an integer from " + std::to_string(lo) + " to " +
                                            std::to_string(hi)),
                         lo, hi);
}

double ManifestFields::number(const std::string& field) const {
  const Json& value = require(field, "a finite number");
  // A JSON text cannot spell inf or nan, but 1e999 parses as inf.
  if (!value.is_number() || !std::isfinite(value.get<double>()))
    wrong(field, "a finite number", value);
  return value.get<double>();
}

double ManifestFields::positive(const std::string& field) const {
  const char* expected = "a positive finite number";
  const Json& value = require(field, expected);
  if (!value.is_number()) wrong(field, expected, value);
  const double x = value.get<double>();
  if (!(x > 0) || !std::isfinite(x)) wrong(field, expected, value);
  return x;
}

bool ManifestFields::flag(const std::string& field) const {
  const Json& value = require(field, "true or false");
  if (!value.is_boolean()) wrong(field, "true or false", value);
  return value.get<bool>();
}

std::string ManifestFields::text(const std::string& field) const {
  const Json& value = require(field, "a string");
  if (!value.is_string()) wrong(field, "a string", value);
  return value.get<std::string>();
}

std::string ManifestFields::choice(const std::string& field,
                                   const std::vector<std::string>& allowed) const {
  const std::string expected = one_of(allowed);
  const Json& value = require(field, expected);
  if (!value.is_string() ||
      std::find(allowed.begin(), allowed.end(), value.get<std::string>()) == allowed.end())
    wrong(field, expected, value);
  return value.get<std::string>();
}

const Json& ManifestFields::object(const std::string& field) const {
  const Json& value = require(field, "an object");
  if (!value.is_object()) wrong(field, "an object", value);
  return value;
}

namespace {

// An array the method needs, with the shape its readers expect; `shape`
// names the shape in the manifest's terms ("n, k").
void check_array(const ManifestFields& f, const std::string& name, std::int64_t rows,
                 std::int64_t cols, const std::string& shape) {
  const std::string field = "arrays." + name;
  if (!f.has(field))
    throw Error(f.path() + ": field '" + field + "' is missing (expected the " + shape +
                " array " + name + ")");
  if (f.has(field + ".length"))
    f.fail(field, "expected shape (" + shape + ") = (" + std::to_string(rows) + ", " +
                      std::to_string(cols) + "), found a vector of length " +
                      std::to_string(f.integer(field + ".length", 0, INT64_MAX)));
  const std::int64_t r = f.integer(field + ".rows", 0, INT64_MAX);
  const std::int64_t c = f.integer(field + ".cols", 0, INT64_MAX);
  if (r != rows || c != cols)
    f.fail(field, "expected shape (" + shape + ") = (" + std::to_string(rows) + ", " +
                      std::to_string(cols) + "), found (" + std::to_string(r) + ", " +
                      std::to_string(c) + ")");
}

// A vector the method needs, of `length` (named `what` in the manifest's
// terms, "k"): 1-D from kVectorModelFormatVersion (`one_d`), 1 x length
// before, as those versions wrote it.
void check_vector(const ManifestFields& f, const std::string& name, std::int64_t length,
                  const std::string& what, bool one_d) {
  if (!one_d) return check_array(f, name, 1, length, "1, " + what);
  const std::string field = "arrays." + name;
  const std::string expected = "length " + what + " = " + std::to_string(length);
  if (!f.has(field))
    throw Error(f.path() + ": field '" + field + "' is missing (expected the vector " + name +
                " of " + expected + ")");
  // parse_manifest checked that an entry without "length" has rows and cols.
  if (!f.has(field + ".length"))
    f.fail(field, "expected a vector of " + expected + " (format version " +
                      std::to_string(kVectorModelFormatVersion) +
                      " stores vectors 1-D), found shape (" +
                      std::to_string(f.integer(field + ".rows", 0, INT64_MAX)) + ", " +
                      std::to_string(f.integer(field + ".cols", 0, INT64_MAX)) + ")");
  const std::int64_t found = f.integer(field + ".length", 0, INT64_MAX);
  if (found != length) f.fail(field, "expected " + expected + ", found " + std::to_string(found));
}

void check_kpca(const ManifestFields& f, bool one_d) {
  const std::int64_t n = f.integer("n", 2, kMaxModelDimension);
  const std::int64_t k = f.integer("k", 1, n);
  f.object("kernel");
  const std::string kernel = f.choice("kernel.name", manifest_kernel_names());
  const bool precomputed = kernel == "precomputed";
  const bool poly = kernel == "poly", sigmoid = kernel == "sigmoid";
  // Kernel::uses_gamma(); the readers take the fields that are present, so
  // those a kernel does not use must still have the right type.
  const bool uses_gamma = poly || sigmoid || kernel == "rbf" || kernel == "laplacian";
  if (uses_gamma || f.has("kernel.gamma")) f.positive("kernel.gamma");
  if (poly || f.has("kernel.degree")) f.integer("kernel.degree", 1, 2147483647);
  if (poly || sigmoid || f.has("kernel.coef0")) f.number("kernel.coef0");
  const std::int64_t d = f.integer("d", precomputed ? 0 : 1, kMaxModelDimension);
  // kpca --approx nystrom: z(x) = k(x, landmarks) projection - offset.
  if (f.has("approximation")) {
    f.choice("approximation", {"nystrom"});
    if (precomputed) f.fail("kernel.name", "a Nystrom model needs a kernel on points");
    const std::int64_t m = f.integer("landmarks", k, kMaxModelDimension);
    check_array(f, "landmarks", m, d, "landmarks, d");
    check_array(f, "projection", m, k, "landmarks, k");
    check_vector(f, "offset", k, "k", one_d);
    check_vector(f, "eigenvalues", k, "k", one_d);
    return;
  }
  f.number("kernel_grand_mean");
  check_array(f, "coefficients", n, k, "n, k");
  check_vector(f, "kernel_col_means", n, "n", one_d);
  check_vector(f, "eigenvalues", k, "k", one_d);
  if (!precomputed) check_array(f, "X", n, d, "n, d");
  if (f.has("inverse_map")) {
    f.object("inverse_map");
    f.positive("inverse_map.alpha");
    check_array(f, "inverse_weights", n, d, "n, d");
    check_vector(f, "inverse_mean", d, "d", one_d);
  }
}

void check_mds(const ManifestFields& f, bool one_d) {
  const std::int64_t n = f.integer("n", 2, kMaxModelDimension);
  const std::int64_t k = f.integer("k", 1, n);
  const bool points = f.choice("input", {"points", "distances"}) == "points";
  if (points || f.has("metric")) f.choice("metric", manifest_metric_names());
  const std::int64_t d = f.integer("d", points ? 1 : 0, kMaxModelDimension);
  // mds --approx landmark: y = -1/2 L# (q - landmark_sq_distance_means).
  if (f.has("approximation")) {
    f.choice("approximation", {"landmark"});
    const std::int64_t m = f.integer("landmarks", k + 1, n);
    if (points) check_array(f, "landmarks", m, d, "landmarks, d");
    check_array(f, "landmark_pseudoinverse", k, m, "k, landmarks");
    check_vector(f, "landmark_sq_distance_means", m, "landmarks", one_d);
    check_vector(f, "eigenvalues", k, "k", one_d);
    return;
  }
  f.number("sq_distance_grand_mean");
  if (f.has("additive_method")) {  // mds --add
    f.choice("additive_method", {"cailliez", "lingoes"});
    f.number("additive_constant");
  }
  check_array(f, "vectors", n, k, "n, k");
  check_vector(f, "eigenvalues", k, "k", one_d);
  check_vector(f, "sq_distance_row_means", n, "n", one_d);
  if (points) check_array(f, "X", n, d, "n, d");
}

// `manifest` is the object behind `f`: feature_names is an array, which
// ManifestFields has no accessor for.
void check_pca(const ManifestFields& f, const Json& manifest, bool one_d) {
  const std::int64_t n = f.integer("n", 2, kMaxModelDimension);
  const std::int64_t d = f.integer("d", 1, kMaxModelDimension);
  const std::int64_t k = f.integer("k", 1, std::min(n, d));
  f.flag("whiten");
  if (f.has("standardize")) f.flag("standardize");
  const auto names = manifest.find("feature_names");
  if (names != manifest.end()) {
    if (!names->is_array() || static_cast<std::int64_t>(names->size()) != d)
      f.fail("feature_names", "expected an array of d = " + std::to_string(d) +
                                  " strings, found " + shown(*names));
    for (std::size_t t = 0; t < names->size(); ++t)
      if (!(*names)[t].is_string())
        f.fail("feature_names", "entry " + std::to_string(t + 1) + ": expected a string, found " +
                                    shown((*names)[t]));
  }
  // Version 1 stored the axes as columns (d x k); version 2 on as rows.
  const bool rows =
      f.integer("format_version", 1, kModelFormatVersion) >= kPcaRowsModelFormatVersion;
  if (rows || f.has("components_orientation"))
    f.choice("components_orientation", {rows ? "k x d" : "d x k"});
  check_vector(f, "mean", d, "d", one_d);
  check_vector(f, "scale", d, "d", one_d);
  if (rows)
    check_array(f, "components", k, d, "k, d");
  else
    check_array(f, "components", d, k, "d, k");
  check_vector(f, "eigenvalues", k, "k", one_d);
  // The probabilistic PCA of the fit (optional: written since kembed scores
  // samples; covariance and precision only up to 4096 features).
  if (f.has("noise_variance") && f.number("noise_variance") < 0)
    f.fail("noise_variance", "expected a number >= 0, found " + shown(manifest["noise_variance"]));
  for (const char* name : {"covariance", "precision"})
    if (f.has(std::string("arrays.") + name)) check_array(f, name, d, d, "d, d");
}

void check_ca(const ManifestFields& f, bool one_d) {
  const std::int64_t rows = f.integer("rows", 2, kMaxModelDimension);
  const std::int64_t cols = f.integer("cols", 2, kMaxModelDimension);
  const std::int64_t k = f.integer("k", 1, std::min(rows, cols) - 1);
  check_array(f, "row_standard", rows, k, "rows, k");
  check_array(f, "column_standard", cols, k, "cols, k");
  check_vector(f, "principal_inertias", k, "k", one_d);
}

// Laplacian eigenmaps: the Nystrom extension's arrays (format version 3 on).
void check_spectral(const ManifestFields& f, bool one_d) {
  const std::int64_t n = f.integer("n", 2, kMaxModelDimension);
  const std::int64_t d = f.integer("d", 1, kMaxModelDimension);
  const std::int64_t k = f.integer("k", 1, n - 1);
  if (f.choice("affinity", {"rbf", "knn"}) == "rbf") {
    f.positive("gamma");
  } else {
    f.integer("neighbors", 2, n);
    check_vector(f, "neighbor_radius", n, "n", one_d);
    check_vector(f, "neighbor_last", n, "n", one_d);
  }
  check_array(f, "X", n, d, "n, d");
  check_array(f, "vectors", n, k, "n, k");
  check_vector(f, "degrees", n, "n", one_d);
  check_vector(f, "eigenvalues", k, "k", one_d);
}

// nlohmann's "[json.exception.parse_error.101] parse error at line 1,
// column 3: syntax error ..." as "invalid JSON at line 1, column 3: syntax
// error ...", without the library's tag.
std::string json_syntax_error(const std::string& what) {
  std::string text = what;
  const std::size_t tag = text.find("] ");
  if (text.rfind("[json.exception.", 0) == 0 && tag != std::string::npos) text.erase(0, tag + 2);
  if (text.rfind("parse error at ", 0) == 0) return "invalid JSON at " + text.substr(15);
  return "invalid JSON: " + text;
}

}  // namespace

Json parse_manifest(const std::string& text, const std::string& path) {
  Json manifest;
  try {
    manifest = Json::parse(text);
  } catch (const Json::exception& e) {
    // parse_error, and out_of_range for a number too large for a double.
    throw Error(path + ": not a valid model manifest: " + json_syntax_error(e.what()));
  }
  // find() and explicit type checks, not value(): value() throws the JSON
  // library's type_error when a key holds the wrong type (e.g. "format": 1).
  if (!manifest.is_object()) throw Error(path + ": not a kembed model manifest");
  const auto format = manifest.find("format");
  if (format == manifest.end() || !format->is_string() || *format != kModelFormat)
    throw Error(path + ": not a kembed model manifest");
  // Compared as JSON numbers (1 and 1.0 match; 1.5 and 1e300 do not), never
  // converted to int: a huge floating-point value would overflow the conversion.
  // Model::method() reads it with value(), which would throw on another type.
  const auto method = manifest.find("method");
  const bool pca = method != manifest.end() && *method == "pca";
  const auto version = manifest.find("format_version");
  if (version == manifest.end() || !version->is_number() ||
      (*version != 1 && *version != kModelFormatVersion &&
       !(pca && *version == kPcaRowsModelFormatVersion)))
    throw Error(path + ": unsupported model format version " +
                (version == manifest.end() ? std::string("(none given)")
                                           : version->dump(-1, ' ', false,
                                                           Json::error_handler_t::replace)) +
                "; this kembed reads versions 1 and " + std::to_string(kModelFormatVersion) +
                " (and " + std::to_string(kPcaRowsModelFormatVersion) +
                " for pca models): refit the model with this kembed");
  if (method != manifest.end() && !method->is_string())
    throw Error(path + ": manifest 'method' is not a string");
  const auto arrays = manifest.find("arrays");
  if (arrays == manifest.end() || !arrays->is_object())
    throw Error(path + ": manifest lists no arrays");
  const ManifestFields fields(manifest, path);
  for (auto it = arrays->begin(); it != arrays->end(); ++it) {
    const auto file = it->find("file");  // end() when the entry is not an object
    if (file == it->end() || !file->is_string())
      throw Error(path + ": array '" + it.key() + "' has no file name");
    // Model reads dir/file: a tampered name must not reach outside the model.
    const std::string name = file->get<std::string>();
    if (name.empty() || name == "." || name == ".." ||
        name.find_first_of(std::string("/\0", 2)) != std::string::npos)
      fields.fail("arrays." + it.key() + ".file",
                  "expected a plain file name inside the model directory, found " + shown(*file));
    // Checked by hand: the key may itself hold a '.', which a field path cannot.
    // A vector has "length" instead of "rows" and "cols".
    const auto length = it->find("length");
    if (length != it->end()) {
      if (it->contains("rows") || it->contains("cols"))
        throw Error(path + ": field 'arrays." + it.key() +
                    "': expected \"length\" (a vector) or \"rows\" and \"cols\" (a matrix), "
                    "not both");
      checked_integer(fields, "arrays." + it.key() + ".length", *length, 0, INT64_MAX);
      continue;
    }
    for (const char* side : {"rows", "cols"}) {
      const auto extent = it->find(side);
      const std::string field = "arrays." + it.key() + "." + side;
      if (extent == it->end())
        throw Error(path + ": field '" + field + "' is missing (expected an integer from 0 to " +
                    std::to_string(INT64_MAX) + ")");
      checked_integer(fields, field, *extent, 0, INT64_MAX);
    }
  }
  const std::string name = method == manifest.end() ? "" : method->get<std::string>();
  const bool one_d = *version >= kVectorModelFormatVersion;
  if (name == "ca") check_ca(fields, one_d);
  if (name == "kpca") check_kpca(fields, one_d);
  if (name == "mds") check_mds(fields, one_d);
  if (name == "pca") check_pca(fields, manifest, one_d);
  if (name == "spectral") check_spectral(fields, one_d);
  return manifest;
}

}  // namespace kembed::io
