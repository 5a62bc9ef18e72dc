#include "kembed/io/matrix_file.hpp"

#include <algorithm>
#include <cctype>

#include "io/binary_matrix_file.hpp"
#include "io/text_matrix_file.hpp"

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

}  // namespace

std::unique_ptr<MatrixFile> open_matrix_file(const Comm& comm, const std::string& path,
                                             const FileHints& hints) {
  const std::string ext = extension_of(path);
  if (ext == ".npy") return BinaryMatrixFile::open_npy(comm, path);
  if (ext == ".bin") return BinaryMatrixFile::open_bin(comm, path, hints);
  return TextMatrixFile::open(comm, path);
}

}  // namespace kembed::io
