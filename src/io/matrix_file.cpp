#include "kembed/io/matrix_file.hpp"

#include <algorithm>
#include <cctype>

#include "io/binary_matrix_file.hpp"
#include "io/text_matrix_file.hpp"
#include "kembed/core/error.hpp"

namespace kembed::io {

namespace {

/// Lower-cased extension including the dot ("" when there is none).
std::string extension_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  const std::size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return {};
  std::string ext = path.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

/// The text options a binary file cannot honour, as the user spelled them.
std::string text_only_options(const TextOptions& text) {
  std::string given;
  auto add = [&](const std::string& option) { given += (given.empty() ? "" : ", ") + option; };
  if (text.header == TextOptions::Header::yes) add("--header yes");
  if (text.index_cols != 0) add("--index-col " + std::to_string(text.index_cols));
  if (!text.id_column.empty()) add("--id-column " + text.id_column);
  return given;
}

}  // namespace

std::unique_ptr<MatrixFile> open_matrix_file(const Comm& comm, const std::string& path,
                                             const FileHints& hints) {
  const std::string ext = extension_of(path);
  if (ext == ".npy" || ext == ".bin") {
    // Every rank sees the same path and hints, so every rank throws alike.
    const std::string given = text_only_options(hints.text);
    if (!given.empty()) throw Error(path + ": " + given + ": only for text input, not for a " + ext + " file");
    if (ext == ".npy") return BinaryMatrixFile::open_npy(comm, path);
    return BinaryMatrixFile::open_bin(comm, path, hints);
  }
  return TextMatrixFile::open(comm, path, hints.text);
}

}  // namespace kembed::io
