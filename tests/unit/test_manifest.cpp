#include <gtest/gtest.h>

#include <string>

#include "kembed/core/error.hpp"
#include "kembed/io/manifest.hpp"

using kembed::io::Json;
using kembed::io::parse_manifest;

namespace {

/// A manifest as ModelWriter::finish writes it, with `change` applied.
std::string manifest(const std::string& key = "", const Json& value = nullptr) {
  Json m = {{"format", "kembed-model"},
            {"format_version", 1},
            {"method", "kpca"},
            {"n", 3},
            {"arrays", {{"X", {{"file", "X.npy"}, {"rows", 3}, {"cols", 2}}}}}};
  if (!key.empty()) {
    if (value.is_null())
      m.erase(key);
    else
      m[key] = value;
  }
  return m.dump(2);
}

std::string error_of(const std::string& text) {
  try {
    parse_manifest(text, "M/manifest.json");
  } catch (const kembed::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Manifest, AcceptsWhatModelWriterWrites) {
  const Json m = parse_manifest(manifest(), "M/manifest.json");
  EXPECT_EQ(m.value("method", ""), "kpca");
  EXPECT_EQ(m.at("arrays").at("X").at("file"), "X.npy");
  // Key order is kept (ordered_json), as the writer wrote it.
  EXPECT_EQ(m.begin().key(), "format");
  // A float 1.0 is still version 1.
  EXPECT_EQ(error_of(manifest("format_version", 1.0)), "");
}

TEST(Manifest, ExistingMessagesStay) {
  EXPECT_EQ(error_of("{ not json").rfind("M/manifest.json: not a valid model manifest (", 0), 0u);
  EXPECT_EQ(error_of("[1, 2]"), "M/manifest.json: not a kembed model manifest");
  EXPECT_EQ(error_of(manifest("format", "something-else")),
            "M/manifest.json: not a kembed model manifest");
  EXPECT_EQ(error_of(manifest("format", nullptr)), "M/manifest.json: not a kembed model manifest");
  EXPECT_EQ(error_of(manifest("format_version", 2)),
            "M/manifest.json: unsupported model format version");
  EXPECT_EQ(error_of(manifest("format_version", nullptr)),
            "M/manifest.json: unsupported model format version");
  EXPECT_EQ(error_of(manifest("arrays", nullptr)), "M/manifest.json: manifest lists no arrays");
  EXPECT_EQ(error_of(manifest("arrays", Json::array({"X.npy"}))),
            "M/manifest.json: manifest lists no arrays");
}

// Keys of the wrong JSON type used to escape as nlohmann::json::type_error
// (not an agreed kembed::Error), or as undefined behaviour for a huge version.
TEST(Manifest, WrongTypesAreErrorsNotJsonExceptions) {
  EXPECT_EQ(error_of(manifest("format", 7)), "M/manifest.json: not a kembed model manifest");
  EXPECT_EQ(error_of(manifest("format_version", "1")),
            "M/manifest.json: unsupported model format version");
  EXPECT_EQ(error_of(manifest("format_version", 1e300)),
            "M/manifest.json: unsupported model format version");
  EXPECT_EQ(error_of(manifest("format_version", 1.5)),
            "M/manifest.json: unsupported model format version");
  EXPECT_EQ(error_of(manifest("method", Json::array({"kpca"}))),
            "M/manifest.json: manifest 'method' is not a string");
  EXPECT_EQ(error_of(manifest("arrays", {{"X", "X.npy"}})),
            "M/manifest.json: array 'X' has no file name");
  EXPECT_EQ(error_of(manifest("arrays", {{"X", {{"file", 3}}}})),
            "M/manifest.json: array 'X' has no file name");
  EXPECT_EQ(error_of(manifest("arrays", {{"X", {{"rows", 3}}}})),
            "M/manifest.json: array 'X' has no file name");
}
