#pragma once
/// @file The manifest.json of a saved model: format constants, the serial
/// parser with its field-by-field schema check, and typed, checked reads of
/// its fields. No MPI and no file access, so tests and fuzzers call it on
/// strings.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kembed::io {

using Json = nlohmann::ordered_json;

/// Format identifier and version written into every manifest.
inline constexpr const char* kModelFormat = "kembed-model";
/// The version of every model written now, whatever the method: vectors
/// (eigenvalues, means, scales, column means, offsets, principal inertias)
/// are 1-D .npy arrays of shape (k,), as scikit-learn keeps them, listed in
/// the manifest as {"file", "length"}; matrices are 2-D, listed as {"file",
/// "rows", "cols"}; pca components are k x d. Earlier versions still load:
///   1  every method; vectors 1 x k; pca components d x k
///   2  pca only; components k x d ("components_orientation": "k x d"),
///      vectors 1 x k
inline constexpr int kModelFormatVersion = 3;
/// The first version that stores vectors 1-D.
inline constexpr int kVectorModelFormatVersion = 3;
/// The first pca version that stores the components k x d.
inline constexpr int kPcaRowsModelFormatVersion = 2;
/// The version of pca models written now (pca moved to 2 first, and on to
/// 3 with every other method).
inline constexpr int kPcaModelFormatVersion = kModelFormatVersion;

/// Upper bound of n, d and k in a manifest: ScaLAPACK descriptors and the
/// readers hold them in an int.
inline constexpr std::int64_t kMaxModelDimension = 2147483647;

/// Kernel names a kpca manifest may hold (Kernel::name of every KernelType)
/// and metric names an MDS manifest may hold (metric_name of every Metric).
/// io sits below kernel and spectral, so the tables are repeated here;
/// test_manifest checks that both sides agree.
const std::vector<std::string>& manifest_kernel_names();
const std::vector<std::string>& manifest_metric_names();

/// Typed, checked reads of the fields of a parsed manifest. A field is a key
/// of the top-level object or a dotted path into nested objects
/// ("kernel.gamma", "arrays.X.rows"). Every failure throws kembed::Error
/// naming the manifest and the field:
///   PATH: field 'FIELD' is missing (expected WHAT)
///   PATH: field 'FIELD': expected WHAT, found VALUE
/// (VALUE is the JSON text of the value, shortened to about 60 characters).
/// Holds a reference: `manifest` must outlive it.
class ManifestFields {
 public:
  ManifestFields(const Json& manifest, std::string path);

  /// True when the field exists (every object on the way is an object).
  bool has(const std::string& field) const;
  /// An integer in [lo, hi]. A float with an integral value is accepted
  /// (1.0 is 1); 1e300, 2.5 and "3" are not.
  std::int64_t integer(const std::string& field, std::int64_t lo, std::int64_t hi) const;
  /// A finite number.
  double number(const std::string& field) const;
  /// A finite number > 0.
  double positive(const std::string& field) const;
  /// true or false.
  bool flag(const std::string& field) const;
  /// A string.
  std::string text(const std::string& field) const;
  /// A string that is one of `allowed`.
  std::string choice(const std::string& field, const std::vector<std::string>& allowed) const;
  /// An object (for the caller to pass on whole, e.g. into run.json).
  const Json& object(const std::string& field) const;

  /// Throws "PATH: field 'FIELD': REASON".
  [[noreturn]] void fail(const std::string& field, const std::string& reason) const;
  const std::string& path() const { return path_; }

 private:
  // The value, or nullptr when missing; throws when a step on the way is
  // not an object.
  const Json* find(const std::string& field) const;
  const Json& require(const std::string& field, const std::string& expected) const;
  [[noreturn]] void wrong(const std::string& field, const std::string& expected,
                          const Json& found) const;

  const Json& manifest_;
  std::string path_;
};

/// Parses and checks the text of a manifest. `path` starts every error
/// message. Throws kembed::Error and nothing else.
///
/// Format (every manifest):
///   PATH: not a valid model manifest: invalid JSON at line L, column C: ...
///   PATH: not a kembed model manifest          ("format" is not kModelFormat)
///   PATH: unsupported model format version V; this kembed reads versions 1
///         and 3 (and 2 for pca models): refit the model with this kembed
///                                              ("format_version" is not 1
///                                               or 3, or 2 for a pca model;
///                                               V is "(none given)" when absent)
///   PATH: manifest 'method' is not a string
///   PATH: manifest lists no arrays              ("arrays" is not an object)
///   PATH: array 'NAME' has no file name
///   PATH: field 'arrays.NAME.file': expected a plain file name inside the
///         model directory, found "../x.npy"
///   PATH: field 'arrays.NAME.rows' / '.cols' / '.length': integers from 0 up
///         (an entry holds "length" for a vector, or "rows" and "cols")
///
/// Fields, per method (a manifest of another method is checked for format
/// only; transform then says it does not support it). "vector L" is an
/// array of length L: 1-D (an entry with "length") from version 3, 1 x L
/// before.
///   kpca  n in [2, kMaxModelDimension]; k in [1, n]; kernel an object with
///         name one of manifest_kernel_names(); kernel.gamma positive finite
///         (required for poly, rbf, laplacian, sigmoid); kernel.degree an
///         integer in [1, 2^31-1] (required for poly); kernel.coef0 finite
///         (required for poly, sigmoid); d in [1, kMaxModelDimension], or
///         [0, ...] for a precomputed kernel; kernel_grand_mean finite;
///         inverse_map, if present, an object with alpha positive finite.
///         Arrays: coefficients n x k, kernel_col_means vector n,
///         eigenvalues vector k, X n x d (not for precomputed), and with
///         inverse_map inverse_weights n x d and inverse_mean vector d.
///         Nystrom (approximation "nystrom"): landmarks m x d, projection
///         m x k, offset vector k, eigenvalues vector k.
///   mds   n in [2, ...]; k in [1, n]; input "points" or "distances"; metric
///         one of manifest_metric_names() (required for points); d in
///         [1, ...] for points, [0, ...] for distances;
///         sq_distance_grand_mean finite. Arrays: vectors n x k, eigenvalues
///         vector k, sq_distance_row_means vector n, X n x d (points only).
///         Landmark (approximation "landmark"): landmarks m x d (points
///         only), landmark_pseudoinverse k x m, landmark_sq_distance_means
///         vector m, eigenvalues vector k.
///   pca   n in [2, ...]; d in [1, ...]; k in [1, min(n, d)]; whiten true or
///         false; standardize, if present, true or false; feature_names, if
///         present, an array of d strings; components_orientation "k x d"
///         (required from version 2; "d x k" if present in version 1).
///         Arrays: mean vector d, scale vector d, eigenvalues vector k,
///         components k x d (from version 2) or d x k (version 1).
///   ca    rows, cols in [2, ...]; k in [1, min(rows, cols) - 1]. Arrays:
///         row_standard rows x k, column_standard cols x k,
///         principal_inertias vector k.
/// An array's shape mismatch reads
///   PATH: field 'arrays.coefficients': expected shape (n, k) = (20, 2), found (20, 3)
///   PATH: field 'arrays.eigenvalues': expected length k = 2, found 3
///   PATH: field 'arrays.eigenvalues': expected a vector of length k = 2
///         (format version 3 stores vectors 1-D), found shape (1, 2)
/// After this check, every read of these fields with ManifestFields (or
/// .at(...).get<T>() into the types above) succeeds.
/// Whether the listed files exist and hold those shapes is Model's business.
Json parse_manifest(const std::string& text, const std::string& path);

}  // namespace kembed::io
