// libFuzzer target: io::parse_manifest, the reader and checker of a saved
// model's manifest.json, on arbitrary bytes. kembed::Error is the documented
// rejection. An accepted manifest must survive what Model::open and Model's
// accessors then do with it without any further check (file names of the
// arrays, the method): a JSON type_error there is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "kembed/core/error.hpp"
#include "kembed/io/manifest.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace io = kembed::io;
  const std::string text(reinterpret_cast<const char*>(data), size);
  io::Json manifest;
  try {
    manifest = io::parse_manifest(text, "fuzz/manifest.json");
  } catch (const kembed::Error&) {
    return 0;
  }
  // Model keeps the manifest const; method() reads "method" with value().
  const io::Json& m = manifest;
  const std::string method = m.value("method", "");
  for (auto it = m["arrays"].begin(); it != m["arrays"].end(); ++it) {
    const std::string file = it.value().at("file").get<std::string>();  // Model::open
    // Model::array_path looks the array up by name.
    if (!m["arrays"].contains(it.key()) || m["arrays"][it.key()].value("file", "") != file)
      __builtin_trap();
  }
  static_cast<void>(method);
  // Every rank parses the broadcast text again: it must parse the same way.
  if (io::Json::parse(text) != manifest) __builtin_trap();
  return 0;
}
