// libFuzzer target: io::parse_manifest, the reader and field-by-field
// checker of a saved model's manifest.json, on arbitrary bytes.
// kembed::Error is the documented rejection; any other exception escapes and
// is reported as a crash. An accepted manifest must then survive, without
// any further check, what Model::open and the projection readers of its
// method (kpca_command.cpp, mds_command.cpp, pca_command.cpp,
// preimage_command.cpp) do with it: both their raw .at(...).get<T>() reads
// and the typed accessors of io::ManifestFields with the same ranges. A JSON
// exception or a kembed::Error there is a bug, so neither is caught.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "kembed/core/error.hpp"
#include "kembed/io/manifest.hpp"

namespace {

namespace io = kembed::io;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void read_kpca(const io::Json& m, const io::ManifestFields& f) {
  const io::Json& kernel = m.at("kernel");
  const std::string name = kernel.at("name").get<std::string>();
  const double gamma = kernel.value("gamma", 0.0);
  const int degree = kernel.value("degree", 3);
  const double coef0 = kernel.value("coef0", 1.0);
  const auto n = m.at("n").get<std::int64_t>();
  const auto d = m.at("d").get<std::int64_t>();
  const int k = m.at("k").get<int>();
  const double mean = m.at("kernel_grand_mean").get<double>();
  check(f.integer("n", 2, io::kMaxModelDimension) == n);
  check(f.integer("k", 1, n) == k);
  check(f.integer("d", name == "precomputed" ? 0 : 1, io::kMaxModelDimension) == d);
  check(f.choice("kernel.name", io::manifest_kernel_names()) == name);
  if (name == "rbf" || name == "laplacian" || name == "poly" || name == "sigmoid")
    check(f.positive("kernel.gamma") == gamma && gamma > 0);
  if (name == "poly") check(f.integer("kernel.degree", 1, 2147483647) == degree);
  if (name == "poly" || name == "sigmoid") check(f.number("kernel.coef0") == coef0);
  check(std::isfinite(coef0) && std::isfinite(mean) && f.number("kernel_grand_mean") == mean);
  if (m.contains("inverse_map")) check(f.positive("inverse_map.alpha") > 0);
  static_cast<void>(f.object("kernel"));  // preimage copies it into run.json
}

void read_mds(const io::Json& m, const io::ManifestFields& f) {
  const auto n = m.at("n").get<std::int64_t>();
  const auto d = m.at("d").get<std::int64_t>();
  const int k = m.at("k").get<int>();
  const double mean = m.at("sq_distance_grand_mean").get<double>();
  const std::string input = m.at("input").get<std::string>();
  check(input == "points" || input == "distances");
  if (input == "points") check(f.choice("metric", io::manifest_metric_names()) ==
                               m.at("metric").get<std::string>());
  check(f.integer("n", 2, io::kMaxModelDimension) == n && f.integer("k", 1, n) == k);
  check(f.integer("d", input == "points" ? 1 : 0, io::kMaxModelDimension) == d);
  check(std::isfinite(mean) && f.number("sq_distance_grand_mean") == mean);
}

void read_pca(const io::Json& m, const io::ManifestFields& f) {
  const auto n = f.integer("n", 2, io::kMaxModelDimension);
  const auto d = m.at("d").get<std::int64_t>();
  const int k = m.at("k").get<int>();
  const bool whiten = m.at("whiten").get<bool>();
  check(f.integer("d", 1, io::kMaxModelDimension) == d);
  check(f.integer("k", 1, n < d ? n : d) == k);
  check(f.flag("whiten") == whiten);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  io::Json manifest;
  try {
    manifest = io::parse_manifest(text, "fuzz/manifest.json");
  } catch (const kembed::Error&) {
    return 0;
  }
  // Model keeps the manifest const; method() reads "method" with value().
  const io::Json& m = manifest;
  const io::ManifestFields f(m, "fuzz/manifest.json");
  const std::string method = m.value("method", "");
  for (auto it = m["arrays"].begin(); it != m["arrays"].end(); ++it) {
    const std::string file = it.value().at("file").get<std::string>();  // Model::open
    check(!file.empty() && file.find('/') == std::string::npos && file != "..");
    // Model::array_path looks the array up by name; shape_error reads the shape.
    check(m["arrays"].contains(it.key()) && m["arrays"][it.key()].value("file", "") == file);
    // A vector (format 3) has "length"; a matrix "rows" and "cols".
    if (it.value().contains("length")) {
      check(it.value().at("length").get<std::int64_t>() >= 0 && !it.value().contains("rows"));
      continue;
    }
    check(it.value().at("rows").get<std::int64_t>() >= 0);
    check(it.value().at("cols").get<std::int64_t>() >= 0);
  }
  if (method == "kpca") read_kpca(m, f);
  if (method == "mds") read_mds(m, f);
  if (method == "pca") read_pca(m, f);
  // Every rank parses the broadcast text again: it must parse the same way.
  check(io::Json::parse(text) == manifest);
  return 0;
}
