#pragma once
/// @file The manifest.json of a saved model: format constants and the serial
/// parser. No MPI and no file access, so tests and fuzzers call it on strings.
#include <nlohmann/json.hpp>
#include <string>

namespace kembed::io {

using Json = nlohmann::ordered_json;

/// Format identifier and version written into every manifest.
inline constexpr const char* kModelFormat = "kembed-model";
inline constexpr int kModelFormatVersion = 1;

/// Parses and checks the text of a manifest: valid JSON; an object whose
/// "format" is kModelFormat and whose "format_version" is kModelFormatVersion;
/// "method", if present, a string; an "arrays" object whose every entry is an
/// object with a string "file".
/// `path` starts every error message. Throws kembed::Error and nothing else:
///   PATH: not a valid model manifest (<JSON parser message>)
///   PATH: not a kembed model manifest
///   PATH: unsupported model format version
///   PATH: manifest 'method' is not a string
///   PATH: manifest lists no arrays
///   PATH: array 'NAME' has no file name
/// Whether the listed files exist is Model::open's business.
Json parse_manifest(const std::string& text, const std::string& path);

}  // namespace kembed::io
