#pragma once
/// @file Synthetic data sets generated row by row, identical whatever the
/// number of ranks: row i depends only on (seed, i).
///
/// Random numbers: row i of a data set with seed S draws from its own
/// SplitMix64 stream whose state starts at mix64(S * 0x9E3779B97F4A7C15 ^
/// mix64(i + 1)) (mix64 is SplitMix64's finalizer); each draw adds the golden
/// gamma 0x9E3779B97F4A7C15 to the state and returns mix64(state). Uniforms
/// are ((x >> 11) + 0.5) / 2^53, in (0, 1); standard normals come from the
/// Box-Muller transform, both values of each pair used in turn. The blob
/// centers use the same scheme on a stream of their own (row index -1).
///
/// The data sets (label c of row i is i mod the number of classes, so classes
/// are balanced and interleaved; labels are not written):
///  - gaussian  D columns of independent N(0, 1).
///  - blobs     3 centers with coordinates uniform in [-10, 10] in all D
///              columns (from the seed only); row = center(i mod 3) + N(0, 1)
///              in every column (scikit-learn's make_blobs defaults).
///  - circles   2-D: t uniform in [0, 2 pi), radius 1 (c = 0) or 0.5 (c = 1),
///              (r cos t, r sin t) + N(0, 0.05^2) per coordinate.
///  - moons     2-D: t uniform in [0, pi); c = 0: (cos t, sin t), c = 1:
///              (1 - cos t, 0.5 - sin t); + N(0, 0.05^2) per coordinate.
///  - swissroll 3-D: t = 1.5 pi (1 + 2 u), h = 21 v (u, v uniform);
///              (t cos t, h, t sin t) + N(0, 0.05^2) per coordinate.
/// --cols D for circles, moons and swissroll must be at least the shape's
/// dimension (2, 2, 3); columns beyond it are pure noise N(0, 0.05^2), so
/// the shape lies in the first coordinates of R^D and the kernel distances
/// change only by that small noise. Default D: 2, except 3 for swissroll.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kembed/io/matrix_file.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::io {

enum class Dataset { gaussian, blobs, circles, moons, swissroll };

/// Parses a data-set name; anything else throws Error listing the names.
Dataset parse_dataset(const std::string& name);
std::string dataset_name(Dataset dataset);
/// Columns of the shape itself (circles 2, moons 2, swissroll 3, others 1:
/// blobs and gaussian are defined in any dimension).
std::int64_t min_cols(Dataset dataset);
/// The default --cols: 3 for swissroll, 2 otherwise.
std::int64_t default_cols(Dataset dataset);

/// A generated n x d matrix, fully described by these four values.
struct SyntheticSpec {
  Dataset dataset = Dataset::gaussian;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::uint64_t seed = 0;
  /// Throws Error when rows < 1, cols < min_cols(dataset) or rows * cols
  /// does not fit in 64-bit byte counts.
  void validate() const;
  /// "generated:NAME(rows=N,cols=D,seed=S)", the path shown in reports.
  std::string describe() const;
};

/// Serial, pure: the values of rows [range.begin, range.end) row-major.
/// @pre 0 <= range.begin <= range.end <= spec.rows, spec valid.
std::vector<double> synthetic_rows(const SyntheticSpec& spec, IndexRange range);

/// Collective: a MatrixFile (format "generated") whose read_rows computes the
/// requested rows in memory on the rank that asks; no file is involved.
/// Validation errors are agreed.
std::unique_ptr<MatrixFile> synthetic_matrix(const Comm& comm, const SyntheticSpec& spec);

/// The contiguous block of rows that rank r of P owns: n / P rows each, one
/// more for the first n mod P ranks, in rank order.
IndexRange block_of_rows(std::int64_t rows, int rank, int ranks);

}  // namespace kembed::io
