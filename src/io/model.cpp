#include "kembed/io/model.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kembed/io/npy_writer.hpp"
#include "kembed/core/error.hpp"

namespace fs = std::filesystem;

namespace kembed::io {

namespace {

void write_all(std::FILE* f, const void* data, std::size_t bytes, const std::string& path) {
  if (bytes && std::fwrite(data, 1, bytes, f) != bytes) {
    std::fclose(f);
    throw Error("cannot write '" + path + "'");
  }
}

}  // namespace

ModelWriter::ModelWriter(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::create_directory(dir_, ec);
  if (ec) throw Error("cannot create model directory '" + dir_ + "': " + ec.message());
}

void ModelWriter::add(const std::string& name, const Array& array) {
  const std::string path = (fs::path(dir_) / (name + ".npy")).string();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw Error("cannot write '" + path + "'");
  const std::string header = npy_header_f8(array.rows, array.cols);
  write_all(f, header.data(), header.size(), path);
  write_all(f, array.values.data(), array.values.size() * sizeof(double), path);
  if (std::fflush(f) != 0 || ::fsync(fileno(f)) != 0 || std::fclose(f) != 0)
    throw Error("cannot write '" + path + "'");
  add_written(name, array.rows, array.cols);
}

void ModelWriter::add_written(const std::string& name, std::int64_t rows, std::int64_t cols) {
  arrays_[name] = {{"file", name + ".npy"}, {"rows", rows}, {"cols", cols}};
}

void ModelWriter::finish(Json manifest) {
  Json out;
  out["format"] = kModelFormat;
  out["format_version"] = kModelFormatVersion;
  // A method whose layout changed (pca: kPcaModelFormatVersion) sets its own
  // version, which replaces the default in place.
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
  // open() checked both as integers >= 0.
  const Json& entry = manifest_["arrays"][name];
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

std::unique_ptr<MatrixFile> Model::large(const Comm& comm, const std::string& name) const {
  std::string path;
  collectively(comm, [&] { path = array_path(name); });
  auto file = open_matrix_file(comm, path);
  agree(comm, shape_error(name, *file));
  return file;
}

}  // namespace kembed::io
