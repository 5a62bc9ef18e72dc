"""The estimators and load() against numpy references computed here."""
import json
import os

import numpy as np
import pytest

import kembed
from conftest import align_signs, circles
from kembed.results import read_table


def rbf(X, Y, gamma):
    sq = (X * X).sum(1)[:, None] + (Y * Y).sum(1)[None, :] - 2 * X @ Y.T
    return np.exp(-gamma * np.maximum(sq, 0))


def top_eigh(S, k):
    w, V = np.linalg.eigh(S)
    order = np.argsort(w)[::-1][:k]
    return w[order], V[:, order]


def largest_entry_positive(V):
    """kembed's documented sign rule: each column's entry of largest magnitude is positive."""
    idx = np.argmax(np.abs(V), axis=0)
    return V * np.sign(V[idx, np.arange(V.shape[1])])


def test_kernel_pca_matches_dense_eigendecomposition(ranks):
    X, _ = circles(120)
    gamma, k = 5.0, 3
    kp = kembed.KernelPCA(n_components=k, kernel="rbf", gamma=gamma, n_ranks=ranks)
    Z = kp.fit_transform(X)
    n = len(X)
    J = np.eye(n) - 1.0 / n
    lam, V = top_eigh(J @ rbf(X, X, gamma) @ J, k)
    np.testing.assert_allclose(kp.eigenvalues_, lam, rtol=1e-10)
    expected = largest_entry_positive(V) * np.sqrt(lam)
    np.testing.assert_allclose(Z, expected, atol=1e-8 * np.abs(expected).max())
    assert kp.eigenvectors_.shape == (n, k)
    np.testing.assert_allclose(kp.eigenvectors_.T @ kp.eigenvectors_, np.eye(k), atol=1e-10)
    # A training sample projects onto its own training embedding.
    np.testing.assert_allclose(kp.transform(X[:10]), Z[:10], atol=1e-8)


def test_single_precision_matches_dense_eigendecomposition(ranks):
    # float32 storage: eigenvalues within 1e-6 relative of numpy's double eigh
    # (kembed measures about 1e-9), the same for classical MDS of the points.
    X, _ = circles(120)
    gamma, k = 5.0, 3
    kp = kembed.KernelPCA(n_components=k, kernel="rbf", gamma=gamma, precision="single",
                          n_ranks=ranks).fit(X)
    n = len(X)
    J = np.eye(n) - 1.0 / n
    lam, _ = top_eigh(J @ rbf(X, X, gamma) @ J, k)
    np.testing.assert_allclose(kp.eigenvalues_, lam, rtol=1e-6)
    assert kp.report_["precision"] == "single"
    mds = kembed.ClassicalMDS(n_components=2, precision="single", n_ranks=ranks).fit(X)
    D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    lam_mds, _ = top_eigh(-0.5 * J @ D2 @ J, 2)
    np.testing.assert_allclose(mds.eigenvalues_, lam_mds, rtol=1e-6)
    with pytest.raises(ValueError, match="precision"):
        kembed.KernelPCA(n_components=2, precision="half").fit(X)


def test_matrix_free_storage_matches_stored_fit(ranks):
    # storage="none" (--storage none): the kernel, or -1/2 D^(2), recomputed from the
    # points in every product; the same eigenvalues (1e-10 relative) and embedding (up to
    # sign) as the default stored fit, for kernel PCA and classical MDS, and a model that
    # transforms new points as the stored fit's does.
    X, _ = circles(120)
    Y = X[:9] * 1.1 + 0.05
    for make in (lambda s: kembed.KernelPCA(n_components=3, kernel="rbf", gamma=5.0,
                                            storage=s, n_ranks=ranks),
                 lambda s: kembed.ClassicalMDS(n_components=2, storage=s, n_ranks=ranks)):
        stored, free = make("auto").fit(X), make("none").fit(X)
        assert stored.get_params()["storage"] == "auto"
        key = "kernel_storage" if isinstance(free, kembed.KernelPCA) else "matrix_storage"
        assert free.report_[key] == "none"
        np.testing.assert_allclose(free.eigenvalues_, stored.eigenvalues_, rtol=1e-10)
        scale = np.abs(stored.embedding_).max()
        signs = np.sign(np.sum(stored.embedding_ * free.embedding_, axis=0))
        np.testing.assert_allclose(free.embedding_ * signs, stored.embedding_, atol=1e-8 * scale)
        np.testing.assert_allclose(free.transform(Y) * signs, stored.transform(Y),
                                   atol=1e-8 * scale)
    for Est in (kembed.KernelPCA, kembed.ClassicalMDS):
        with pytest.raises(ValueError, match="'storage' parameter of " + Est.__name__):
            Est(n_components=2, storage="dense").fit(X)


def test_kernel_pca_ridge_inverse_transform_is_shrunk_projection(blobs, ranks):
    # Linear kernel: the ridge pre-image of x is mean + sum_j l_j/(l_j+alpha) u_j u_j^T (x - mean).
    X, alpha = blobs, 3.0
    kp = kembed.KernelPCA(n_components=3, kernel="linear", fit_inverse_transform=True,
                          alpha=alpha, n_ranks=ranks)
    kp.fit(X)
    mean = X.mean(0)
    _, s, Vt = np.linalg.svd(X - mean, full_matrices=False)
    lam, U = s[:3] ** 2, Vt[:3].T
    Y = X[:7] + 0.1
    expected = mean + ((Y - mean) @ U) * (lam / (lam + alpha)) @ U.T
    np.testing.assert_allclose(kp.inverse_transform(kp.transform(Y)), expected, atol=1e-9)


def test_pca_against_covariance_eigenvectors(blobs, ranks):
    X, k = blobs, 3
    pca = kembed.PCA(n_components=k, standardize=True, n_ranks=ranks).fit(X)
    mean, sd = X.mean(0), X.std(0, ddof=1)
    Xs = (X - mean) / sd
    lam, U = top_eigh(np.cov(Xs, rowvar=False), k)
    assert pca.components_.shape == (k, X.shape[1])
    np.testing.assert_allclose(pca.explained_variance_, lam, rtol=1e-12)
    np.testing.assert_allclose(pca.explained_variance_ratio_, lam / X.shape[1], rtol=1e-12)
    np.testing.assert_allclose(pca.components_, align_signs(pca.components_.T, U).T, atol=1e-12)
    np.testing.assert_allclose(pca.embedding_, Xs @ pca.components_.T, atol=1e-12)
    # Rank-k reconstruction: the orthogonal projection onto the k axes.
    Zt = pca.transform(X)
    np.testing.assert_allclose(pca.inverse_transform(Zt), mean + (Xs @ U @ U.T) * sd, atol=1e-10)


def test_pca_full_rank_inverse_transform_returns_input(blobs, ranks):
    pca = kembed.PCA(n_components=blobs.shape[1], whiten=True, standardize=True, n_ranks=ranks)
    Z = pca.fit_transform(blobs)
    np.testing.assert_allclose(Z.var(0, ddof=1), 1.0, rtol=1e-10)  # whitened
    np.testing.assert_allclose(pca.inverse_transform(Z), blobs, atol=1e-10)


def test_pca_variance_fraction(blobs):
    pca = kembed.PCA(n_components=0.9).fit(blobs)
    lam = np.sort(np.linalg.eigvalsh(np.cov(blobs, rowvar=False)))[::-1]
    expected_k = int(np.argmax(np.cumsum(lam) / lam.sum() > 0.9)) + 1
    assert pca.n_components_ == expected_k


def test_classical_mds_reproduces_euclidean_distances(ranks):
    rng = np.random.default_rng(1)
    P = rng.normal(size=(25, 3))
    D = np.sqrt(((P[:, None] - P[None]) ** 2).sum(-1))
    mds = kembed.ClassicalMDS(n_components=3, dissimilarity="precomputed", n_ranks=ranks)
    Y = mds.fit_transform(D)
    DY = np.sqrt(((Y[:, None] - Y[None]) ** 2).sum(-1))
    np.testing.assert_allclose(DY, D, atol=1e-9)
    # From the points themselves: the same embedding.
    np.testing.assert_allclose(kembed.ClassicalMDS(3, n_ranks=ranks).fit_transform(P), Y,
                               atol=1e-9)


def test_classical_mds_keeps_negative_eigenvalues():
    rng = np.random.default_rng(2)
    n = 20
    D = rng.uniform(1, 2, size=(n, n))
    D = (D + D.T) / 2
    np.fill_diagonal(D, 0)
    mds = kembed.ClassicalMDS(2, dissimilarity="precomputed", eigen_solver="dense").fit(D)
    J = np.eye(n) - 1.0 / n
    B = -0.5 * J @ (D ** 2) @ J
    expected = np.sort(np.linalg.eigvalsh(B))[::-1]
    np.testing.assert_allclose(mds.spectrum_, expected, atol=1e-10 * abs(expected).max())
    assert mds.spectrum_.min() < 0


def test_classical_mds_additive_constants_against_numpy(ranks):
    # Manhattan distances are not Euclidean: B has negative eigenvalues.
    rng = np.random.default_rng(3)
    P = rng.uniform(size=(24, 4))
    D = np.abs(P[:, None] - P[None]).sum(-1)
    n = len(D)
    J = np.eye(n) - 1.0 / n
    B2, B1 = -0.5 * J @ (D ** 2) @ J, -0.5 * J @ D @ J
    # Cailliez: the largest real eigenvalue of [[0, 2 B2], [-I, -4 B1]].
    Z = np.block([[np.zeros((n, n)), 2 * B2], [-np.eye(n), -4 * B1]])
    e = np.linalg.eigvals(Z)
    c = e[np.abs(e.imag) <= 1e-8 * np.abs(e).max()].real.max()
    # Lingoes: minus the smallest eigenvalue of B2, added to d^2 as 2c.
    lingoes = -np.linalg.eigvalsh(B2).min()
    off = 1 - np.eye(n)
    for add, constant, corrected in (
            ("cailliez", c, (D + c * off) ** 2),
            (True, c, (D + c * off) ** 2),
            ("lingoes", lingoes, D ** 2 + 2 * lingoes * off)):
        mds = kembed.ClassicalMDS(2, dissimilarity="precomputed", add=add,
                                  n_ranks=ranks).fit(D)
        assert abs(mds.additive_constant_ - constant) <= 1e-9 * constant
        values, vectors = np.linalg.eigh(-0.5 * J @ corrected @ J)
        expected = largest_entry_positive(vectors[:, ::-1][:, :2] * np.sqrt(values[::-1][:2]))
        np.testing.assert_allclose(largest_entry_positive(mds.embedding_), expected,
                                   atol=1e-8 * abs(expected).max())
    assert kembed.ClassicalMDS(2, dissimilarity="precomputed").fit(D).additive_constant_ == 0.0


def test_kembed_errors_become_exceptions_with_kembeds_message(blobs):
    with pytest.raises(kembed.KembedError, match="exceeds the number of samples"):
        kembed.KernelPCA(n_components=100, kernel="rbf").fit(blobs)
    with pytest.raises(kembed.KembedError, match="cannot start"):
        kembed.PCA(2, kembed="/nonexistent/kembed", launcher="").fit(blobs)


class _Table:
    """The part of a pandas DataFrame that the estimators read: named columns."""

    def __init__(self, **columns):
        self._columns = {k: np.asarray(v) for k, v in columns.items()}
        self.columns = list(self._columns)
        self.dtypes = [c.dtype for c in self._columns.values()]

    def __getitem__(self, name):
        return self._columns[name]

    def __array__(self, dtype=None):
        return np.column_stack([self._columns[k] for k in self.columns]).astype(dtype)


def test_non_numeric_column_is_named(blobs):
    table = _Table(x=blobs[:, 0], city=np.array(["Basel"] * len(blobs), dtype=object),
                   y=blobs[:, 1])
    for estimator in (kembed.PCA(2), kembed.KernelPCA(2, kernel="rbf"), kembed.ClassicalMDS(2)):
        with pytest.raises(ValueError, match="column 'city' of X is not numeric"):
            estimator.fit(table)
    numeric = _Table(x=blobs[:, 0], y=blobs[:, 1], z=blobs[:, 2])
    assert kembed.PCA(2, n_ranks=1).fit(numeric).embedding_.shape == (len(blobs), 2)
    with pytest.raises(ValueError, match="X is not numeric"):
        kembed.PCA(2).fit([["a", "b"], ["c", "d"]])


def test_failed_fit_removes_its_copy_of_x_at_once(blobs):
    pca = kembed.PCA(2, n_ranks=1).fit(blobs)
    first = pca._workdir
    assert os.path.isfile(os.path.join(first, "X.npy"))
    # kembed refuses 100 components of 40 samples: the refit fails.
    with pytest.raises(kembed.KembedError):
        pca.set_params(n_components=100).fit(blobs)
    assert pca._workdir is None and not os.path.exists(first)
    assert pca.result_ is None
    with pytest.raises(kembed.NotFittedError, match="not fitted"):
        pca.transform(blobs)
    # The same estimator fits again afterwards.
    assert pca.set_params(n_components=2).fit(blobs).embedding_.shape == (40, 2)


def test_load_gives_scikit_learn_shapes(blobs, tmp_path):
    np.save(tmp_path / "X.npy", blobs)
    launcher = kembed.Launcher(2, os.environ["KEMBED_LAUNCHER"])
    launcher.run(["pca", "--input", tmp_path / "X.npy", "-k", "2", "-o", tmp_path / "out",
                  "--quiet"])
    res = kembed.load(tmp_path / "out")
    assert res.method == "pca" and res.components_.shape == (2, 5)
    assert res.embedding_.shape == (40, 2) and isinstance(res.report, dict)
    np.testing.assert_allclose(res.embedding_, (blobs - res.mean_) @ res.components_.T,
                               atol=1e-10)
    total = np.var(blobs, axis=0, ddof=1).sum()
    np.testing.assert_allclose(res.explained_variance_ratio_, res.eigenvalues_ / total,
                               rtol=1e-12)


def test_components_csv_and_feature_names_and_format_1(blobs, tmp_path):
    names = ["a", "b", "c", "d", "e"]
    with open(tmp_path / "X.csv", "w") as f:
        f.write(",".join(names) + "\n")
        for row in blobs:
            f.write(",".join(repr(float(v)) for v in row) + "\n")
    launcher = kembed.Launcher(2, os.environ["KEMBED_LAUNCHER"])
    launcher.run(["pca", "--input", tmp_path / "X.csv", "-k", "2", "-o", tmp_path / "out",
                  "--quiet"])
    res = kembed.load(tmp_path / "out")
    assert list(res.feature_names_in_) == names
    assert res.manifest["format_version"] == 3
    # Format 3 saves vectors 1-D, as scikit-learn keeps them.
    for name in ("mean", "scale", "eigenvalues"):
        assert res.model_arrays[name].shape == (res.manifest["arrays"][name]["length"],)
    header, ids, table = read_table(tmp_path / "out" / "components.csv")
    assert header == ["component"] + names and ids == [["c1"], ["c2"]]
    np.testing.assert_array_equal(table, res.components_)
    # Unit orthogonal rows spanning the top covariance eigenvectors.
    U = np.linalg.eigh(np.cov(blobs, rowvar=False))[1][:, ::-1][:, :2]
    np.testing.assert_allclose(res.components_, align_signs(res.components_.T, U).T, atol=1e-10)
    # The same model in the version-1 layout (axes as d x k columns) loads the same.
    model = tmp_path / "out" / "model"
    m = res.manifest
    m["format_version"] = 1
    del m["components_orientation"]
    np.save(model / "components.npy", np.ascontiguousarray(res.components_.T))
    m["arrays"]["components"].update(rows=5, cols=2)
    with open(model / "manifest.json", "w") as f:
        json.dump(m, f)
    old = kembed.load(tmp_path / "out")
    np.testing.assert_array_equal(old.components_, res.components_)


def test_against_scikit_learn(ranks):
    sklearn = pytest.importorskip("sklearn")
    from sklearn.decomposition import PCA as SkPCA
    from sklearn.decomposition import KernelPCA as SkKernelPCA
    X, _ = circles(150)
    ours = kembed.KernelPCA(n_components=2, kernel="rbf", gamma=10.0, n_ranks=ranks)
    theirs = SkKernelPCA(n_components=2, kernel="rbf", gamma=10.0, eigen_solver="dense")
    Z, Zs = ours.fit_transform(X), theirs.fit_transform(X)
    signs = np.sign((Z * Zs).sum(0))
    np.testing.assert_allclose(Z, Zs * signs, atol=1e-8)
    np.testing.assert_allclose(ours.eigenvalues_, theirs.eigenvalues_, rtol=1e-10)
    Y = X[:5] * 1.1
    np.testing.assert_allclose(ours.transform(Y), theirs.transform(Y) * signs, atol=1e-8)

    rng = np.random.default_rng(4)
    B = rng.normal(size=(60, 6)) @ rng.normal(size=(6, 6))
    p, q = kembed.PCA(n_components=3, n_ranks=ranks).fit(B), SkPCA(n_components=3).fit(B)
    np.testing.assert_allclose(p.explained_variance_, q.explained_variance_, rtol=1e-10)
    np.testing.assert_allclose(p.explained_variance_ratio_, q.explained_variance_ratio_,
                               rtol=1e-10)
    np.testing.assert_allclose(p.components_, align_signs(p.components_.T, q.components_.T).T,
                               atol=1e-10)
    np.testing.assert_allclose(p.noise_variance_, q.noise_variance_, rtol=1e-10)
    np.testing.assert_allclose(p.singular_values_, q.singular_values_, rtol=1e-10)
    assert sklearn.__version__


def swiss_roll(n=150, seed=0):
    """Points on a swiss roll (scikit-learn's make_swiss_roll recipe, noise-free)."""
    rng = np.random.default_rng(seed)
    t = 1.5 * np.pi * (1 + 2 * rng.uniform(size=n))
    return np.c_[t * np.cos(t), 21 * rng.uniform(size=n), t * np.sin(t)]


@pytest.mark.parametrize("n_ranks", [1, 2])
def test_isomap_against_scikit_learn(n_ranks):
    pytest.importorskip("sklearn", reason="python3-sklearn is not installed")
    from sklearn.manifold import Isomap as SkIsomap
    X = swiss_roll()
    ours = kembed.Isomap(n_neighbors=8, n_components=2, n_ranks=n_ranks).fit(X)
    theirs = SkIsomap(n_neighbors=8, n_components=2, eigen_solver="dense").fit(X)
    signs = np.sign((ours.embedding_ * theirs.embedding_).sum(0))
    scale = np.abs(theirs.embedding_).max()
    np.testing.assert_allclose(ours.embedding_, theirs.embedding_ * signs, atol=1e-10 * scale)
    np.testing.assert_allclose(ours.reconstruction_error(), theirs.reconstruction_error(),
                               rtol=1e-10)
    Y = X[:6] + 0.3
    np.testing.assert_allclose(ours.transform(Y), theirs.transform(Y) * signs,
                               atol=1e-10 * scale)
    assert ours.n_features_in_ == 3 and ours.embedding_.shape == (150, 2)


def test_landmark_isomap_against_scikit_learn():
    # Every point a landmark: landmark Isomap is Isomap (the landmarks' B is
    # the n x n B), so scikit-learn's dense Isomap is the reference to 1e-10.
    # With 40 of 150 landmarks the estimator passes the options and reads the
    # landmark result files (its accuracy is test_landmark_isomap's: on this
    # sparse roll the geodesics are far from planar, Procrustes error 0.06);
    # training points transform to their fitted coordinates.
    pytest.importorskip("sklearn", reason="python3-sklearn is not installed")
    from sklearn.manifold import Isomap as SkIsomap
    X = swiss_roll()
    theirs = SkIsomap(n_neighbors=8, n_components=2, eigen_solver="dense").fit(X)
    scale = np.abs(theirs.embedding_).max()
    every = kembed.Isomap(n_neighbors=8, n_landmarks=150, n_ranks=2).fit(X)
    signs = np.sign((every.embedding_ * theirs.embedding_).sum(0))
    np.testing.assert_allclose(every.embedding_, theirs.embedding_ * signs, atol=1e-10 * scale)
    few = kembed.Isomap(n_neighbors=8, n_landmarks=40, random_state=3, n_ranks=2).fit(X)
    assert few.report_["approximation"]["landmarks"] == 40
    assert few.report_["approximation"]["seed"] == 3
    np.testing.assert_allclose(few.explained_variance_ratio_,
                               few.report_["explained_variance_ratio"], rtol=1e-12)
    assert few.embedding_.shape == (150, 2) and few.spectrum_ is None
    np.testing.assert_allclose(few.transform(X), few.embedding_, atol=1e-10 * scale)


@pytest.mark.parametrize("n_ranks", [1, 2])
def test_spectral_embedding_against_scikit_learn(n_ranks):
    # scikit-learn's arpack solve stops near 1e-10 here: compared to 1e-8 of the largest
    # entry, up to each column's sign and scale (a diffusion map is defined up to both).
    pytest.importorskip("sklearn", reason="python3-sklearn is not installed")
    from sklearn.manifold import SpectralEmbedding as SkSpectral
    X = swiss_roll(200, seed=1)
    for params in (dict(affinity="nearest_neighbors", n_neighbors=10),
                   dict(affinity="rbf", gamma=0.05)):
        ours = kembed.SpectralEmbedding(n_components=2, n_ranks=n_ranks, **params).fit(X)
        theirs = SkSpectral(n_components=2, random_state=0, **params)
        Zs = theirs.fit_transform(X)
        Z = ours.embedding_
        scale = np.linalg.norm(Zs, axis=0) / np.linalg.norm(Z, axis=0)
        signs = np.sign((Z * Zs).sum(0))
        np.testing.assert_allclose(Z * scale * signs, Zs, atol=1e-8 * np.abs(Zs).max(),
                                   err_msg=str(params))
        np.testing.assert_allclose(ours.eigenvalues_ + ours.affinity_eigenvalues_, 1.0,
                                   rtol=1e-14)
    assert ours.n_neighbors_ is None
    knn = kembed.SpectralEmbedding(n_neighbors=10, n_ranks=n_ranks).fit(X)
    assert knn.n_neighbors_ == 10 and knn.report_["affinity"] == "knn"


@pytest.mark.parametrize("n_ranks", [1, 2])
def test_spectral_embedding_transform_is_the_nystrom_extension(n_ranks):
    # The training points come back at their embedding (rbf and knn); new points match
    # the Nystrom extension computed here with numpy: W without its diagonal, the
    # eigenvectors v of M = D^-1/2 W D^-1/2, y(x) = sum_i w_i v_i / sqrt(d_i) / (mu d(x)).
    X = swiss_roll(120, seed=3)
    Y = swiss_roll(7, seed=4)
    for params in (dict(affinity="rbf", gamma=0.05), dict(n_neighbors=10)):
        ours = kembed.SpectralEmbedding(n_components=2, n_ranks=n_ranks, **params).fit(X)
        Z = ours.embedding_
        scale = np.abs(Z).max()
        np.testing.assert_allclose(ours.transform(X), Z, atol=1e-9 * scale, err_msg=str(params))
    ours = kembed.SpectralEmbedding(n_components=2, affinity="rbf", gamma=0.05,
                                    n_ranks=n_ranks).fit(X)
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    W = np.exp(-0.05 * sq)
    np.fill_diagonal(W, 0.0)
    d = W.sum(1)
    mu, V = np.linalg.eigh(W / np.sqrt(np.outer(d, d)))
    mu, V = mu[::-1][1:3], V[:, ::-1][:, 1:3]
    V *= np.sign((V / np.sqrt(d)[:, None] * ours.embedding_).sum(0))  # the fit's signs
    Wy = np.exp(-0.05 * ((Y[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    want = Wy @ (V / np.sqrt(d)[:, None]) / mu / Wy.sum(1)[:, None]
    np.testing.assert_allclose(ours.transform(Y), want, atol=1e-10 * np.abs(want).max())


def ca_reference(N):
    """CA by numpy's SVD of the standardized residuals D_r^-1/2 (P - r c^T) D_c^-1/2."""
    P = N / N.sum()
    r, c = P.sum(1), P.sum(0)
    S = (P - np.outer(r, c)) / np.sqrt(np.outer(r, c))
    U, s, Vt = np.linalg.svd(S, full_matrices=False)
    F = U * s / np.sqrt(r)[:, None]      # row principal coordinates
    G = Vt.T * s / np.sqrt(c)[:, None]   # column principal coordinates
    return r, c, s, F, G, (S ** 2).sum()


@pytest.mark.parametrize("n_ranks", [1, 2])
def test_ca_against_numpy_svd(n_ranks):
    rng = np.random.default_rng(5)
    N = rng.integers(1, 30, size=(9, 6)).astype(float)
    r, c, s, F, G, total = ca_reference(N)
    k = 3
    for route in ("auto", "rows", "columns"):
        ca = kembed.CA(n_components=k, route=route, n_ranks=n_ranks).fit(N)
        np.testing.assert_allclose(ca.eigenvalues_, s[:k] ** 2, rtol=1e-10)
        np.testing.assert_allclose(ca.singular_values_, s[:k], rtol=1e-10)
        np.testing.assert_allclose(ca.total_inertia_, total, rtol=1e-12)
        np.testing.assert_allclose(ca.chi_square_, total * N.sum(), rtol=1e-12)
        np.testing.assert_allclose(ca.percentage_of_variance_, 100 * s[:k] ** 2 / total,
                                   rtol=1e-10)
        np.testing.assert_allclose(ca.row_masses_, r, rtol=1e-14)
        np.testing.assert_allclose(ca.col_masses_, c, rtol=1e-14)
        signs = np.sign((ca.row_coordinates_ * F[:, :k]).sum(0))
        np.testing.assert_allclose(ca.row_coordinates_, F[:, :k] * signs, atol=1e-10)
        np.testing.assert_allclose(ca.column_coordinates_, G[:, :k] * signs, atol=1e-10)
        np.testing.assert_allclose(ca.row_standard_coordinates_, F[:, :k] * signs / s[:k],
                                   atol=1e-9)
        np.testing.assert_array_equal(ca.fit_transform(N), ca.row_coordinates_)
        # Contributions of each axis sum to 1 over the rows (and columns); row cos2 of
        # all axes to 1 when every axis is kept.
        np.testing.assert_allclose(ca.row_contributions_.sum(0), 1.0, rtol=1e-10)
        np.testing.assert_allclose(ca.column_contributions_.sum(0), 1.0, rtol=1e-10)
    # Supplementary rows by the transition formula f = (row profile) G / s.
    new = rng.integers(0, 20, size=(4, 6)).astype(float)
    expected = (new / new.sum(1, keepdims=True)) @ G[:, :k] / s[:k] * signs
    np.testing.assert_allclose(ca.transform(new), expected, atol=1e-10)
    with pytest.raises(ValueError, match="Negative values in data passed to CA"):
        kembed.CA().fit(N - 2)


@pytest.mark.parametrize("n_ranks", [1, 2])
def test_pca_likelihood_against_scikit_learn(n_ranks):
    # score, score_samples, get_covariance and get_precision of the probabilistic PCA model
    # (kembed pca's model/covariance.npy and precision.npy, transform --score) to 1e-10.
    pytest.importorskip("sklearn", reason="python3-sklearn is not installed")
    from sklearn.decomposition import PCA as SkPCA
    rng = np.random.default_rng(11)
    X = rng.normal(size=(70, 6)) @ rng.normal(size=(6, 6)) + 2.0
    Y = rng.normal(size=(9, 6)) @ rng.normal(size=(6, 6))
    ours = kembed.PCA(n_components=3, n_ranks=n_ranks).fit(X)
    theirs = SkPCA(n_components=3).fit(X)
    np.testing.assert_allclose(ours.score_samples(Y), theirs.score_samples(Y), rtol=1e-10)
    np.testing.assert_allclose(ours.score(Y), theirs.score(Y), rtol=1e-10)
    np.testing.assert_allclose(ours.log_likelihood_, theirs.score(X), rtol=1e-10)
    C, P = ours.get_covariance(), ours.get_precision()
    np.testing.assert_allclose(C, theirs.get_covariance(), rtol=1e-10, atol=1e-12 * abs(C).max())
    np.testing.assert_allclose(P, theirs.get_precision(), rtol=1e-10, atol=1e-12 * abs(P).max())
    np.testing.assert_allclose(P @ C, np.eye(6), atol=1e-10)
    with pytest.raises(ValueError, match="X has 5 features, but PCA is expecting 6"):
        ours.score_samples(Y[:, :5])


def sparse_counts(n, d, seed):
    """A scipy CSR matrix of counts, about a quarter of its entries stored."""
    import scipy.sparse
    rng = np.random.default_rng(seed)
    dense = rng.poisson(0.4, size=(n, d)).astype(float) * (rng.uniform(size=(n, d)) < 0.6)
    dense[:, 0] += np.arange(n) % 3  # a column with its own structure
    return scipy.sparse.csr_matrix(dense)


def test_sparse_pca_is_the_pca_of_the_dense_matrix(ranks):
    """PCA of a scipy sparse X (kembed reads the .npz and centers implicitly)
    against numpy's eigendecomposition of the dense covariance."""
    X = sparse_counts(90, 14, 5)
    D = X.toarray()
    p = kembed.PCA(n_components=3, n_ranks=ranks).fit(X)
    assert p.report_["input"]["format"] == "npz"
    assert "sparse" in p.report_["input_storage"]
    Dc = D - D.mean(0)
    w, V = top_eigh(Dc.T @ Dc / (len(D) - 1), 3)
    np.testing.assert_allclose(p.explained_variance_, w, rtol=1e-10)
    np.testing.assert_allclose(p.mean_, D.mean(0), atol=1e-14)
    Z = largest_entry_positive(Dc @ V)
    np.testing.assert_allclose(p.embedding_, Z, atol=1e-9)
    # New samples, sparse or dense, project alike.
    Y = sparse_counts(7, 14, 6)
    np.testing.assert_allclose(p.transform(Y), p.transform(Y.toarray()), atol=1e-12)
    np.testing.assert_allclose(p.transform(Y), (Y.toarray() - D.mean(0)) @ p.components_.T,
                               atol=1e-10)


def test_truncated_svd_is_the_svd_of_x(ranks):
    """kembed.TruncatedSVD (pca --no-center) against numpy's SVD of X itself,
    with scikit-learn's definitions of the explained variance and its ratio."""
    X = sparse_counts(80, 12, 7)
    D = X.toarray()
    t = kembed.TruncatedSVD(n_components=3, n_ranks=ranks).fit(X)
    U, s, Vt = np.linalg.svd(D, full_matrices=False)
    np.testing.assert_allclose(t.singular_values_, s[:3], rtol=1e-10)
    np.testing.assert_allclose(np.abs(t.components_), np.abs(Vt[:3]), atol=1e-10)
    Z = D @ t.components_.T
    np.testing.assert_allclose(t.embedding_, Z, atol=1e-9)
    np.testing.assert_allclose(t.explained_variance_, Z.var(0), rtol=1e-10)
    np.testing.assert_allclose(t.explained_variance_ratio_, Z.var(0) / D.var(0).sum(), rtol=1e-10)
    # Dense input takes the same path; transform is X V.
    np.testing.assert_allclose(kembed.TruncatedSVD(3).fit(D).singular_values_, s[:3], rtol=1e-10)
    Y = sparse_counts(5, 12, 8)
    np.testing.assert_allclose(t.transform(Y), Y.toarray() @ t.components_.T, atol=1e-10)
    np.testing.assert_allclose(t.inverse_transform(t.transform(Y)),
                               Y.toarray() @ Vt[:3].T @ Vt[:3], atol=1e-10)
