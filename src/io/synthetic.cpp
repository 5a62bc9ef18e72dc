#include "kembed/io/synthetic.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "io/row_ranges.hpp"
#include "kembed/core/error.hpp"
#include "kembed/core/splitmix64.hpp"

namespace kembed::io {

namespace {

constexpr std::uint64_t golden_gamma = SplitMix64::kGoldenGamma;
constexpr double pi = 3.14159265358979323846;
constexpr double shape_noise = 0.05;
constexpr int blob_centers = 3;
constexpr double blob_box = 10.0;

/// The random stream of one row: a SplitMix64 generator keyed by (seed, row).
class RowStream {
 public:
  RowStream(std::uint64_t seed, std::int64_t row)
      : state_(mix64(seed * golden_gamma ^ mix64(static_cast<std::uint64_t>(row) + 1))) {}

  /// Uniform in the open interval (0, 1).
  double uniform() {
    state_ += golden_gamma;
    return (static_cast<double>(mix64(state_) >> 11) + 0.5) * 0x1.0p-53;
  }
  /// Standard normal (Box-Muller; the second value of a pair is kept).
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double radius = std::sqrt(-2.0 * std::log(uniform()));
    const double angle = 2.0 * pi * uniform();
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }

 private:
  std::uint64_t state_;
  double spare_ = 0;
  bool has_spare_ = false;
};

/// Blob centers, blob_centers x cols, from the seed alone (stream of row -1).
std::vector<double> blob_center_table(const SyntheticSpec& spec) {
  RowStream stream(spec.seed, -1);
  std::vector<double> centers(static_cast<std::size_t>(blob_centers * spec.cols));
  for (double& c : centers) c = blob_box * (2.0 * stream.uniform() - 1.0);
  return centers;
}

/// Writes row `i` into out[0 .. cols).
void fill_row(const SyntheticSpec& spec, const std::vector<double>& centers, std::int64_t i, double* out) {
  RowStream rng(spec.seed, i);
  const std::int64_t d = spec.cols;
  std::int64_t shape = 0;  // columns filled by the shape itself
  switch (spec.dataset) {
    case Dataset::gaussian:
      for (std::int64_t j = 0; j < d; ++j) out[j] = rng.normal();
      return;
    case Dataset::blobs: {
      const double* center = centers.data() + (i % blob_centers) * d;
      for (std::int64_t j = 0; j < d; ++j) out[j] = center[j] + rng.normal();
      return;
    }
    case Dataset::circles: {
      const double radius = i % 2 == 0 ? 1.0 : 0.5;
      const double t = 2.0 * pi * rng.uniform();
      out[0] = radius * std::cos(t);
      out[1] = radius * std::sin(t);
      shape = 2;
      break;
    }
    case Dataset::moons: {
      const double t = pi * rng.uniform();
      out[0] = i % 2 == 0 ? std::cos(t) : 1.0 - std::cos(t);
      out[1] = i % 2 == 0 ? std::sin(t) : 0.5 - std::sin(t);
      shape = 2;
      break;
    }
    case Dataset::swissroll: {
      const double t = 1.5 * pi * (1.0 + 2.0 * rng.uniform());
      const double h = 21.0 * rng.uniform();
      out[0] = t * std::cos(t);
      out[1] = h;
      out[2] = t * std::sin(t);
      shape = 3;
      break;
    }
  }
  for (std::int64_t j = 0; j < shape; ++j) out[j] += shape_noise * rng.normal();
  for (std::int64_t j = shape; j < d; ++j) out[j] = shape_noise * rng.normal();
}

/// A generated matrix behind the MatrixFile interface: rows are computed on demand.
class SyntheticMatrix final : public MatrixFile {
 public:
  SyntheticMatrix(Comm comm, const SyntheticSpec& spec)
      : MatrixFile(spec.describe(), spec.rows, spec.cols), comm_(std::move(comm)), spec_(spec) {}

  std::string format() const override { return "generated"; }

  std::vector<double> read_rows(const std::vector<RowRange>& ranges) override {
    std::vector<double> values;
    collectively(comm_, [&] {
      const std::string bad = check_row_ranges(ranges, rows_, path_);
      if (!bad.empty()) throw Error(bad);
      values.reserve(static_cast<std::size_t>(total_rows(ranges) * cols_));
      for (const RowRange& r : ranges) {
        const std::vector<double> block = synthetic_rows(spec_, r);
        values.insert(values.end(), block.begin(), block.end());
      }
    });
    return values;
  }

 private:
  Comm comm_;  ///< private duplicate, for agreeing on errors
  SyntheticSpec spec_;
};

}  // namespace

Dataset parse_dataset(const std::string& name) {
  if (name == "gaussian") return Dataset::gaussian;
  if (name == "blobs") return Dataset::blobs;
  if (name == "circles") return Dataset::circles;
  if (name == "moons") return Dataset::moons;
  if (name == "swissroll") return Dataset::swissroll;
  throw Error("unknown data set '" + name + "' (expected blobs, circles, moons, swissroll or gaussian)");
}

std::string dataset_name(Dataset dataset) {
  switch (dataset) {
    case Dataset::gaussian: return "gaussian";
    case Dataset::blobs: return "blobs";
    case Dataset::circles: return "circles";
    case Dataset::moons: return "moons";
    case Dataset::swissroll: return "swissroll";
  }
  return "unknown";
}

std::int64_t min_cols(Dataset dataset) {
  switch (dataset) {
    case Dataset::circles:
    case Dataset::moons: return 2;
    case Dataset::swissroll: return 3;
    default: return 1;
  }
}

std::int64_t default_cols(Dataset dataset) { return dataset == Dataset::swissroll ? 3 : 2; }

void SyntheticSpec::validate() const {
  const std::string name = dataset_name(dataset);
  if (rows < 1) throw Error("--rows must be at least 1 for a generated data set");
  if (cols < min_cols(dataset))
    throw Error("--cols " + std::to_string(cols) + " is too small for " + name + " (at least " +
                std::to_string(min_cols(dataset)) + ")");
  if (rows > std::numeric_limits<std::int64_t>::max() / 16 / cols)
    throw Error("--rows " + std::to_string(rows) + " --cols " + std::to_string(cols) + " is too large");
}

std::string SyntheticSpec::describe() const {
  return "generated:" + dataset_name(dataset) + "(rows=" + std::to_string(rows) +
         ",cols=" + std::to_string(cols) + ",seed=" + std::to_string(seed) + ")";
}

std::vector<double> synthetic_rows(const SyntheticSpec& spec, IndexRange range) {
  const std::vector<double> centers =
      spec.dataset == Dataset::blobs ? blob_center_table(spec) : std::vector<double>();
  std::vector<double> values(static_cast<std::size_t>(range.size() * spec.cols));
  for (std::int64_t i = range.begin; i < range.end; ++i)
    fill_row(spec, centers, i, values.data() + (i - range.begin) * spec.cols);
  return values;
}

std::unique_ptr<MatrixFile> synthetic_matrix(const Comm& comm, const SyntheticSpec& spec) {
  collectively(comm, [&] { spec.validate(); });
  return std::make_unique<SyntheticMatrix>(comm.dup(), spec);
}

IndexRange block_of_rows(std::int64_t rows, int rank, int ranks) {
  // The first rows % ranks ranks own one row more; no product can overflow.
  const std::int64_t base = rows / ranks, extra = rows % ranks;
  const std::int64_t begin = rank * base + std::min<std::int64_t>(rank, extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

}  // namespace kembed::io
