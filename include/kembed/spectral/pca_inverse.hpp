#pragma once
/// @file PCA's inverse transform: from component scores back to input space.
#include <cstdint>

#include "kembed/io/matrix_file.hpp"
#include "kembed/io/model.hpp"
#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/spectral/pca.hpp"

namespace kembed::spectral {

/// Collective: mean, scale, explained variance and whitening of a pca model,
/// with its shape checked (an agreed error names the model).
PcaProjection read_pca_projection(const io::Model& model, const Comm& comm);

/// Collective: the m x d reconstructions X = mean + scale ⊙ (Z' U_cᵀ) of the
/// m x c scores `z` (the first c <= k components, block-cyclic), where
/// Z' = Z diag(sqrt(explained variance)) when the model whitened and Z
/// otherwise, and U_c the first c of the model's d x k axes (`components`,
/// read block-cyclically); one pdgemm. With c = k = d this returns the
/// input of transform exactly (up to round-off). A wrong shape is an agreed
/// error. @pre z is on the grid the result should use
DistMatrix pca_inverse_transform(const PcaProjection& model, io::MatrixFile& components,
                                 const DistMatrix& z, int block_size);

}  // namespace kembed::spectral
