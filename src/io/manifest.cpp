#include "kembed/io/manifest.hpp"

#include "kembed/core/error.hpp"

namespace kembed::io {

Json parse_manifest(const std::string& text, const std::string& path) {
  Json manifest;
  try {
    manifest = Json::parse(text);
  } catch (const std::exception& e) {
    throw Error(path + ": not a valid model manifest (" + e.what() + ")");
  }
  // find() and explicit type checks, not value(): value() throws the JSON
  // library's type_error when a key holds the wrong type (e.g. "format": 1).
  if (!manifest.is_object()) throw Error(path + ": not a kembed model manifest");
  const auto format = manifest.find("format");
  if (format == manifest.end() || !format->is_string() || *format != kModelFormat)
    throw Error(path + ": not a kembed model manifest");
  // Compared as JSON numbers (1 and 1.0 match; 1.5 and 1e300 do not), never
  // converted to int: a huge floating-point value would overflow the conversion.
  const auto version = manifest.find("format_version");
  if (version == manifest.end() || !version->is_number() || *version != kModelFormatVersion)
    throw Error(path + ": unsupported model format version");
  // Model::method() reads it with value(), which would throw on another type.
  const auto method = manifest.find("method");
  if (method != manifest.end() && !method->is_string())
    throw Error(path + ": manifest 'method' is not a string");
  const auto arrays = manifest.find("arrays");
  if (arrays == manifest.end() || !arrays->is_object())
    throw Error(path + ": manifest lists no arrays");
  for (auto it = arrays->begin(); it != arrays->end(); ++it) {
    const auto file = it->find("file");  // end() when the entry is not an object
    if (file == it->end() || !file->is_string())
      throw Error(path + ": array '" + it.key() + "' has no file name");
  }
  return manifest;
}

}  // namespace kembed::io
