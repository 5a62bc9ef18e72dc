#pragma once
/// @file Saved models: a directory with manifest.json and .npy arrays.
///
/// A fit writes everything projection needs; `kembed transform` reads it
/// back. Vectors (eigenvalues, means, scales: what scikit-learn keeps 1-D)
/// are 1-D .npy arrays from format version 3 (kModelFormatVersion), 1 x k
/// matrices before; both load. Small arrays are read on rank 0 and
/// broadcast; large ones (training samples) are read in parallel through
/// io::MatrixFile like any input.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kembed/io/manifest.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::io {

/// A dense row-major array held in memory.
struct Array {
  std::int64_t rows = 0, cols = 0;
  std::vector<double> values;
};

/// Writes a model directory. Serial: use on rank 0 only.
class ModelWriter {
 public:
  /// Creates `dir` (its parent must exist).
  explicit ModelWriter(std::string dir);
  /// Writes `name`.npy (float64, C order) and records it in the manifest.
  void add(const std::string& name, const Array& array);
  /// Writes `name`.npy as a 1-D float64 array of shape (values.size(),) and
  /// records it in the manifest as {"file", "length"}.
  void add_vector(const std::string& name, const std::vector<double>& values);
  /// Records an array written to `name`.npy in dir() by other means.
  void add_written(const std::string& name, std::int64_t rows, std::int64_t cols);
  /// Writes manifest.json: `manifest` plus format, version (kModelFormatVersion
  /// unless `manifest` holds "format_version") and array list.
  void finish(Json manifest);
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  Json arrays_ = Json::object();
};

/// Collective: copies the matrix in `source` to `path` as .npy, every rank
/// reading and writing its own rows (io::NpyWriter: a temporary file renamed
/// when complete). Returns (on every rank) the data fingerprint of the
/// float64 values (kembed/core/data_fingerprint.hpp), as 16 hex digits.
std::string copy_to_npy(const Comm& comm, MatrixFile& source, const std::string& path);

/// Collective: the same fingerprint without a copy when `path` is empty
/// (copy_to_npy is this function with a path).
std::string fingerprint_rows(const Comm& comm, MatrixFile& source, const std::string& path = "");

/// A model directory opened for reading (read-only; nothing is ever written).
class Model {
 public:
  /// Collective: rank 0 reads and checks manifest.json (format, version and
  /// every field of the method: see parse_manifest; that every listed array
  /// exists as a regular file); every rank gets the manifest. Errors name
  /// the directory or the file and field, and are agreed.
  static Model open(const Comm& comm, const std::string& dir);

  const Json& manifest() const { return manifest_; }
  const std::string& dir() const { return dir_; }
  /// DIR/manifest.json, as error messages name it.
  std::string manifest_path() const;
  std::string method() const { return manifest_.value("method", ""); }

  /// Typed, checked reads of manifest fields ("n", "kernel.gamma", ...; see
  /// io::ManifestFields). Local and deterministic (every rank holds the same
  /// manifest), so every rank throws the same kembed::Error, naming
  /// DIR/manifest.json and the field, e.g.
  ///   M/manifest.json: field 'whiten': expected true or false, found "yes"
  /// The fields open() checked for the model's method (see parse_manifest)
  /// cannot fail here when read with the types and ranges checked there.
  ManifestFields fields() const { return ManifestFields(manifest_, manifest_path()); }
  bool has(const std::string& field) const { return fields().has(field); }
  std::int64_t integer(const std::string& field, std::int64_t lo, std::int64_t hi) const {
    return fields().integer(field, lo, hi);
  }
  double number(const std::string& field) const { return fields().number(field); }
  double positive(const std::string& field) const { return fields().positive(field); }
  bool flag(const std::string& field) const { return fields().flag(field); }
  std::string text(const std::string& field) const { return fields().text(field); }
  std::string choice(const std::string& field, const std::vector<std::string>& allowed) const {
    return fields().choice(field, allowed);
  }
  const Json& object(const std::string& field) const { return fields().object(field); }

  /// Collective: a small array, read by rank 0 and broadcast to all ranks.
  /// Checks that the file's shape is the one the manifest lists, and
  /// expected_rows/cols when >= 0.
  Array small(const Comm& comm, const std::string& name, std::int64_t expected_rows = -1,
              std::int64_t expected_cols = -1) const;
  /// Collective: a vector of `length` values, read by rank 0 and broadcast.
  /// The file's shape must be the manifest's: (length,) when the entry has
  /// "length" (format version 3), (1, length) or (length, 1) when it has
  /// "rows" and "cols" (earlier versions). Errors name the file, e.g.
  ///   M/eigenvalues.npy: shape (1, 3) differs from the (3,) of field
  ///   'arrays.eigenvalues' in M/manifest.json; the model is damaged
  std::vector<double> vector(const Comm& comm, const std::string& name,
                             std::int64_t length) const;
  /// Collective: a large array, opened for parallel reading; its shape is
  /// checked against the manifest's.
  std::unique_ptr<MatrixFile> large(const Comm& comm, const std::string& name) const;

 private:
  std::string array_path(const std::string& name) const;
  // "" or the message when `file`'s shape differs from the manifest's.
  std::string shape_error(const std::string& name, const MatrixFile& file) const;
  std::string dir_;
  Json manifest_;
};

}  // namespace kembed::io
