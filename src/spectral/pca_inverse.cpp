#include "kembed/spectral/pca_inverse.hpp"

#include <cmath>
#include <string>

#include "kembed/core/error.hpp"
#include "kembed/distribute/read_distributed.hpp"
#include "kembed/linalg/scalapack.hpp"

namespace kembed::spectral {

PcaProjection read_pca_projection(const io::Model& model, const Comm& comm) {
  // The manifest was validated field by field when the model was opened;
  // the typed accessors still name the file and field if anything is off.
  PcaProjection p;
  collectively(comm, [&] {
    p.d = model.integer("d", 1, io::kMaxModelDimension);
    p.k = static_cast<int>(model.integer("k", 1, p.d));
    p.whiten = model.flag("whiten");
    // open() accepted 1 (axes as columns, d x k), 2 or 3 (as rows, k x d).
    p.axes_as_rows = model.integer("format_version", 1, io::kModelFormatVersion) >=
                     io::kPcaRowsModelFormatVersion;
    // Written since kembed scores samples (pca_likelihood.hpp); open()
    // checked that it is a number >= 0 when present.
    if (model.has("noise_variance")) p.noise_variance = model.number("noise_variance");
  });
  p.mean = model.vector(comm, "mean", p.d);
  p.scale = model.vector(comm, "scale", p.d);
  p.explained_variance = model.vector(comm, "eigenvalues", p.k);
  return p;
}

DistMatrix pca_inverse_transform(const PcaProjection& model, io::MatrixFile& components,
                                 const DistMatrix& z, int block_size) {
  const BlacsGrid& grid = z.grid();
  const std::int64_t m = z.rows();
  const std::int64_t c = z.cols();
  std::string error;
  if (c < 1 || c > model.k)
    error = "the scores have " + std::to_string(c) + " columns; the model has " +
            std::to_string(model.k) + " components";
  else
    error = model_shape_error(model, components);
  agree(grid.comm(), error);

  const int nb = block_size;
  DistMatrix u(grid, components.rows(), components.cols(), nb, nb);
  distribute::read_block_cyclic(components, u);
  // Scores back to unwhitened units: a whitened column was divided by sqrt(lambda_j).
  DistMatrix scores(grid, m, c, nb, nb);
  copy(z, 0, 0, m, c, scores, 0, 0);
  if (model.whiten)
    for (int lj = 0; lj < scores.local_cols(); ++lj) {
      const double s = std::sqrt(model.explained_variance[scores.col_dist().to_global(lj)]);
      for (int li = 0; li < scores.local_rows(); ++li) scores.local(li, lj) *= s;
    }
  // The first c axes: rows of a format-2 array (c x d), columns of a format-1 one (d x c).
  const bool rows = model.axes_as_rows;
  DistMatrix axes(grid, rows ? c : model.d, rows ? model.d : c, nb, nb);
  copy(u, 0, 0, axes.rows(), axes.cols(), axes, 0, 0);
  DistMatrix x(grid, m, model.d, nb, nb);
  scalapack::gemm('N', rows ? 'N' : 'T', 1.0, scores, axes, 0.0, x);
  // Undo the standardization and the centering of transform.
  for (int lj = 0; lj < x.local_cols(); ++lj) {
    const std::int64_t j = x.col_dist().to_global(lj);
    for (int li = 0; li < x.local_rows(); ++li)
      x.local(li, lj) = model.mean[j] + model.scale[j] * x.local(li, lj);
  }
  return x;
}

}  // namespace kembed::spectral
