#include "kembed/io/model.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kembed/core/error.hpp"
#include "kembed/io/format_double.hpp"
#include "kembed/io/npy_header.hpp"
#include "kembed/io/npy_writer.hpp"
#include "read_only_file.hpp"

namespace fs = std::filesystem;

namespace kembed::io {

namespace {

void write_all(std::FILE* f, const void* data, std::size_t bytes, const std::string& path) {
  if (bytes && std::fwrite(data, 1, bytes, f) != bytes) {
    std::fclose(f);
    throw Error("cannot write '" + path + "'");
  }
}

// Writes `header` and `values` to `path`, synced.
void write_npy_file(const std::string& path, const std::string& header,
                    const std::vector<double>& values) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw Error("cannot write '" + path + "'");
  write_all(f, header.data(), header.size(), path);
  write_all(f, values.data(), values.size() * sizeof(double), path);
  if (std::fflush(f) != 0 || ::fsync(fileno(f)) != 0 || std::fclose(f) != 0)
    throw Error("cannot write '" + path + "'");
}

}  // namespace

ModelWriter::ModelWriter(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::create_directory(dir_, ec);
  if (ec) throw Error("cannot create model directory '" + dir_ + "': " + ec.message());
}

void ModelWriter::add(const std::string& name, const Array& array) {
  write_npy_file((fs::path(dir_) / (name + ".npy")).string(), npy_header_f8(array.rows, array.cols),
                 array.values);
  add_written(name, array.rows, array.cols);
}

void ModelWriter::add_vector(const std::string& name, const std::vector<double>& values) {
  const auto length = static_cast<std::int64_t>(values.size());
  write_npy_file((fs::path(dir_) / (name + ".npy")).string(), npy_vector_header_f8(length), values);
  arrays_[name] = {{"file", name + ".npy"}, {"length", length}};
}

void ModelWriter::add_written(const std::string& name, std::int64_t rows, std::int64_t cols) {
  arrays_[name] = {{"file", name + ".npy"}, {"rows", rows}, {"cols", cols}};
}

void ModelWriter::finish(Json manifest) {
  Json out;
  out["format"] = kModelFormat;
  out["format_version"] = kModelFormatVersion;
  // A manifest that names its own version (pca: kPcaModelFormatVersion)
  // replaces the default in place.
  for (auto it = manifest.begin(); it != manifest.end(); ++it) out[it.key()] = it.value();
  out["arrays"] = arrays_;
  const std::string path = (fs::path(dir_) / "manifest.json").string();
  std::ofstream file(path);
  file << out.dump(2) << "\n";
  file.close();
  if (!file) throw Error("cannot write '" + path + "'");
}

namespace {

// The text of DIR/manifest.json. Stat first: a FIFO would block the open and
// a directory "opens" but fails the read.
std::string read_manifest(const std::string& dir) {
  const std::string path = (fs::path(dir) / "manifest.json").string();
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    throw Error("cannot open model '" + dir + "': not a directory");
  if (::stat(path.c_str(), &st) != 0)
    throw Error("cannot open model '" + dir + "': no readable manifest.json");
  if (!S_ISREG(st.st_mode)) throw Error(path + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open model '" + dir + "': no readable manifest.json");
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw Error(path + ": read error");
  return buffer.str();
}

}  // namespace

Model Model::open(const Comm& comm, const std::string& dir) {
  Model model;
  model.dir_ = dir;
  std::string text;
  collectively(comm, [&] {
    if (!comm.is_root()) return;
    text = read_manifest(dir);
    const Json manifest = parse_manifest(text, model.manifest_path());
    for (const auto& entry : manifest.at("arrays")) {
      const auto file = (fs::path(dir) / entry.at("file").get<std::string>()).string();
      struct stat st {};
      if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        throw Error("model '" + dir + "' is incomplete: missing " + file);
    }
  });
  comm.broadcast(text);
  model.manifest_ = Json::parse(text);
  return model;
}

std::string Model::manifest_path() const { return (fs::path(dir_) / "manifest.json").string(); }

std::string Model::array_path(const std::string& name) const {
  if (!manifest_["arrays"].contains(name))
    throw Error("model '" + dir_ + "' has no array '" + name + "'");
  return (fs::path(dir_) / manifest_["arrays"][name].value("file", "")).string();
}

std::string Model::shape_error(const std::string& name, const MatrixFile& file) const {
  const Json& entry = manifest_["arrays"][name];
  if (entry.contains("length"))
    return file.path() + ": field 'arrays." + name + "' in " + manifest_path() +
           " lists a vector, but a matrix is read; the model is damaged";
  // open() checked both as integers >= 0.
  const auto rows = entry.at("rows").get<std::int64_t>(), cols = entry.at("cols").get<std::int64_t>();
  if (file.rows() == rows && file.cols() == cols) return "";
  return file.path() + ": shape (" + std::to_string(file.rows()) + ", " +
         std::to_string(file.cols()) + ") differs from the (" + std::to_string(rows) + ", " +
         std::to_string(cols) + ") of field 'arrays." + name + "' in " + manifest_path() +
         "; the model is damaged";
}

Array Model::small(const Comm& comm, const std::string& name, std::int64_t expected_rows,
                   std::int64_t expected_cols) const {
  std::string path;
  collectively(comm, [&] { path = array_path(name); });
  auto file = open_matrix_file(comm, path);
  std::string error = shape_error(name, *file);
  if (error.empty() && ((expected_rows >= 0 && file->rows() != expected_rows) ||
                        (expected_cols >= 0 && file->cols() != expected_cols)))
    error = path + ": expected shape (" + std::to_string(expected_rows) + ", " +
            std::to_string(expected_cols) + "), found (" + std::to_string(file->rows()) + ", " +
            std::to_string(file->cols()) + ")";
  agree(comm, error);
  Array array{file->rows(), file->cols(), {}};
  array.values = file->read_rows({{0, file->rows()}});
  return array;
}

namespace {

// Cap on a .npy header, as for any .npy input (kembed writes 128 bytes).
constexpr std::int64_t kMaxVectorHeaderBytes = std::int64_t{1} << 20;

std::string shape_text(std::int64_t rows, std::int64_t cols, bool one_d) {
  return "(" + std::to_string(rows) + (one_d ? ",)" : ", " + std::to_string(cols) + ")");
}

// Serial: the values of the .npy vector at `path` (float64 or float32),
// whose shape must be the one `entry` (field 'arrays.NAME' of
// `manifest_path`) lists, and hold `length` values.
std::vector<double> read_npy_vector(const std::string& path, const Json& entry,
                                    const std::string& name, std::int64_t length,
                                    const std::string& manifest_path) {
  const ReadOnlyFile file(path);
  if (!file.is_regular()) throw Error(path + ": not a regular file");
  std::string bytes(static_cast<std::size_t>(std::min<std::int64_t>(file.size(), npy_preamble_max)),
                    '\0');
  file.read_at(0, bytes.data(), static_cast<std::int64_t>(bytes.size()));
  const std::int64_t header_size = npy_header_size(bytes, path);
  if (header_size > file.size() || header_size > kMaxVectorHeaderBytes)
    throw Error(path + ": truncated or implausibly large .npy header (" +
                std::to_string(header_size) + " bytes)");
  bytes.resize(static_cast<std::size_t>(header_size));
  file.read_at(0, bytes.data(), header_size);
  const NpyHeader header = parse_npy_header(bytes, path, true);
  const bool one_d = header.ndim == 1;

  // Model::open checked the entry's integers ("length", or "rows" and "cols").
  const bool listed_one_d = entry.contains("length");
  const std::int64_t rows = entry.at(listed_one_d ? "length" : "rows").get<std::int64_t>();
  const std::int64_t cols = listed_one_d ? 1 : entry.at("cols").get<std::int64_t>();
  const std::string found = shape_text(header.rows, header.cols, one_d);
  const std::string listed = shape_text(rows, cols, listed_one_d);
  if (found != listed)
    throw Error(path + ": shape " + found + " differs from the " + listed + " of field 'arrays." +
                name + "' in " + manifest_path + "; the model is damaged");
  // Older versions listed vectors as 1 x k; (k, 1) holds the same values.
  const bool fits = header.cols == 1 ? header.rows == length
                                     : header.rows == 1 && header.cols == length;
  if (!fits)
    throw Error(path + ": expected a vector of " + std::to_string(length) +
                " values, found shape " + found);
  const std::int64_t count = header.rows * header.cols;
  const std::int64_t expected = header.data_offset + count * header.item_size;
  if (file.size() != expected)
    throw Error(path + ": .npy file has " + std::to_string(file.size()) +
                " bytes, but its header (shape " + found + ", '" + header.descr + "') needs " +
                std::to_string(expected) + " (file " +
                (file.size() < expected ? "truncated" : "has extra data") + ")");
  std::vector<double> values(static_cast<std::size_t>(count));
  if (header.item_size == 8) {
    file.read_at(header.data_offset, values.data(), count * 8);
  } else {
    std::vector<float> narrow(values.size());
    file.read_at(header.data_offset, narrow.data(), count * 4);
    std::copy(narrow.begin(), narrow.end(), values.begin());
  }
  // Matrices go through the readers, which refuse non-finite values; a
  // vector (means, eigenvalues, scales) is read here and must be checked here:
  // one NaN would make every transformed point NaN.
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      throw Error(path + ": entry " + std::to_string(i + 1) + " of " +
                  std::to_string(values.size()) + " (1-based) is " + format_double(values[i]) +
                  ", not a finite number; the model is damaged");
  return values;
}

}  // namespace

std::vector<double> Model::vector(const Comm& comm, const std::string& name,
                                  std::int64_t length) const {
  std::vector<double> values;
  collectively(comm, [&] {
    if (!comm.is_root()) return;
    const std::string path = array_path(name);  // throws first when the entry is missing
    values = read_npy_vector(path, manifest_["arrays"][name], name, length, manifest_path());
  });
  comm.broadcast(values);
  return values;
}

std::unique_ptr<MatrixFile> Model::large(const Comm& comm, const std::string& name) const {
  std::string path;
  collectively(comm, [&] { path = array_path(name); });
  auto file = open_matrix_file(comm, path);
  agree(comm, shape_error(name, *file));
  return file;
}

}  // namespace kembed::io
