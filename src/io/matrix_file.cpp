#include "kembed/io/matrix_file.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "io/binary_matrix_file.hpp"
#include "io/foreign_format.hpp"
#include "io/read_only_file.hpp"
#include "io/text_matrix_file.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/sparse_matrix_file.hpp"
#include "kembed/io/sparse_matrix_input.hpp"
#ifdef KEMBED_HAVE_HDF5
#include "io/hdf5_matrix_file.hpp"
#endif

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

bool is_hdf5_extension(const std::string& ext) {
  return ext == ".h5" || ext == ".hdf5" || ext == ".he5" || ext == ".hdf";
}

/// Serial: the first bytes of a regular file ("" for anything else: a stream
/// read here would be gone for the parser).
std::string head_of(const std::string& path) {
  std::error_code ec;
  if (path == "-" || !std::filesystem::is_regular_file(path, ec)) return {};
  const ReadOnlyFile file(path);
  std::string head(static_cast<std::size_t>(std::min<std::int64_t>(file.size(), kSniffBytes)), '\0');
  file.read_at(0, head.data(), static_cast<std::int64_t>(head.size()));
  return head;
}

}  // namespace

std::pair<std::string, std::string> split_dataset(const std::string& path) {
  const std::size_t colon = path.rfind(":/");
  if (colon == std::string::npos || !is_hdf5_extension(extension_of(path.substr(0, colon)))) return {path, ""};
  return {path.substr(0, colon), path.substr(colon + 1)};
}

std::vector<std::string> with_linked_files(const std::vector<std::string>& reads) {
  std::vector<std::string> all = reads;
  for (const std::string& read : reads) {
    if (read.empty() || read == "-") continue;
    const auto [file, dataset] = split_dataset(read);
    if (!dataset.empty()) all.push_back(file);
#ifdef KEMBED_HAVE_HDF5
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) continue;
    try {
      if (!is_hdf5_extension(extension_of(file)) && !is_hdf5(head_of(file))) continue;
    } catch (const Error&) {
      continue;  // unreadable: opening the input says so
    }
    for (const std::string& behind : hdf5_files_behind(file, dataset)) all.push_back(behind);
#endif
  }
  return all;
}

std::unique_ptr<MatrixFile> open_matrix_file(const Comm& comm, const std::string& given_path,
                                             const FileHints& hints) {
  // Named variables, not a structured binding: lambdas below capture them.
  const std::pair<std::string, std::string> split = split_dataset(given_path);
  const std::string& path = split.first;
  const std::string& named_dataset = split.second;
  const std::string ext = extension_of(path);
  // Sparse files (.h5ad, .npz, .mtx, or a Matrix Market banner) are read as
  // CSR rows; commands without a sparse path get the rows they ask for dense.
  int sparse = 0;
  collectively(comm, [&] {
    if (comm.is_root()) sparse = is_sparse_file(path) ? 1 : 0;
  });
  comm.broadcast(&sparse, 1);
  if (sparse) {
    const std::string given = text_only_options(hints.text);
    if (!given.empty())
      throw Error(path + ": " + given + ": only for text input, not for a sparse matrix file");
    return SparseMatrixInput::open(comm, path, hints.dataset.empty() ? named_dataset : hints.dataset);
  }
  // Rank 0 looks at the first bytes of a file that is not .npy or .bin, so
  // that HDF5 is recognized whatever its name and a compressed or binary file
  // is named instead of parsed as text.
  bool hdf5 = is_hdf5_extension(ext);
  if (ext != ".npy" && ext != ".bin") {
    int is_h5 = 0;
    collectively(comm, [&] {
      if (!comm.is_root()) return;
      const std::string head = head_of(path);
      if (is_hdf5(head)) is_h5 = 1;
#ifndef KEMBED_HAVE_HDF5
      if (hdf5 || is_h5) throw Error(foreign_format(path, "\x89HDF\r\n\x1a\n"));
#endif
      if (!is_h5 && !hdf5) {
        const std::string foreign = foreign_format(path, head);
        if (!foreign.empty()) throw Error(foreign);
      }
    });
    comm.broadcast(&is_h5, 1);
    hdf5 = hdf5 || is_h5;
  }
  if (!hints.dataset.empty() && !named_dataset.empty() && hints.dataset != named_dataset)
    throw Error(given_path + ": names dataset " + named_dataset + ", but --dataset says " + hints.dataset);
  if (!hints.dataset.empty() && !hdf5) throw Error(path + ": --dataset is only for HDF5 input");
  if (ext == ".npy" || ext == ".bin" || hdf5) {
    // Every rank sees the same path and hints, so every rank throws alike.
    const std::string given = text_only_options(hints.text);
    if (!given.empty())
      throw Error(path + ": " + given + ": only for text input, not for a " + (hdf5 ? "HDF5" : ext) + " file");
#ifdef KEMBED_HAVE_HDF5
    if (hdf5) return Hdf5MatrixFile::open(comm, path, hints.dataset.empty() ? named_dataset : hints.dataset);
#endif
    if (ext == ".npy") return BinaryMatrixFile::open_npy(comm, path);
    return BinaryMatrixFile::open_bin(comm, path, hints);
  }
  return TextMatrixFile::open(comm, path, hints.text);
}

}  // namespace kembed::io
