"""scikit-learn-style estimators that run the kembed binary on .npy files.

Each fit writes X to a temporary directory owned by the estimator, runs
``mpirun -np n_ranks kembed <method> ...`` there and keeps the model
directory for ``transform`` and ``inverse_transform``; the directory is
removed with the estimator. Parameters carry scikit-learn's names; the
last three (``n_ranks``, ``launcher``, ``kembed``) say how kembed is run.
With scikit-learn installed they are scikit-learn estimators (its base
classes, input checks and ``check_estimator``; see ``_sklearn``).
"""
import csv
import os
import shutil
import tempfile
import weakref

import numpy as np

from ._runner import Launcher
from ._sklearn import (BaseEstimator, TransformerMixin, check_fitted, check_non_negative,
                       is_sparse, validate)
from .results import load, read_matrix

# scikit-learn's eigen_solver / svd_solver names, and kembed's own, to --solver.
_SOLVERS = {"auto": "auto", "dense": "evd", "full": "evd", "arpack": "krylov",
            "randomized": "krylov", "evd": "evd", "evr": "evr", "krylov": "krylov",
            "elpa": "elpa"}

# kembed's --storage of the n x n matrix (kpca and mds).
_STORAGES = ("auto", "full", "lower", "none")


class _KembedEstimator(BaseEstimator):
    """Runs one kembed method per fit in a temporary directory the estimator owns.

    ``__init__`` only stores the parameters (scikit-learn's rule); the
    directory is made by the first fit. Pickling (and ``copy.deepcopy``)
    carries the fitted result directory's files, so a copy transforms on its
    own after the original is gone.
    """
    _method = None

    def __init__(self, n_ranks=1, launcher=None, kembed=None):
        self.n_ranks = n_ranks
        self.launcher = launcher
        self.kembed = kembed

    # -- input
    # Whether fit and transform take scipy sparse X (written as a .npz file).
    _accepts_sparse = False

    def _check_X(self, X, reset):
        """X validated as scikit-learn does; a fit needs two samples or more."""
        return validate(self, X, reset, min_samples=2 if reset else 1,
                        accept_sparse=self._accepts_sparse)

    # -- running kembed
    def _run(self, args):
        Launcher(self.n_ranks, self.launcher, self.kembed).run(args, cwd=self._dir())

    def _dir(self):
        if getattr(self, "_workdir", None) is None:
            self._workdir = tempfile.mkdtemp(prefix="kembed-")
            weakref.finalize(self, shutil.rmtree, self._workdir, True)
        return self._workdir

    def _run_fit(self, args):
        """Runs a fit; a failed one leaves no copy of X behind and no model."""
        try:
            self._run(args)
        except BaseException:
            self._discard_fit()
            raise

    def _discard_fit(self):
        if getattr(self, "_workdir", None) is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
        self.result_ = None

    def _new_fit_dir(self):
        # A refit starts from a fresh directory: kembed never mixes two fits.
        if getattr(self, "_workdir", None) is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
        return self._dir()

    def _write(self, name, X):
        """X as a file for kembed: NAME.npy, or NAME.npz (scipy CSR, stored) when sparse."""
        path = os.path.join(self._dir(), name)
        if is_sparse(X):
            import scipy.sparse
            path = os.path.splitext(path)[0] + ".npz"
            scipy.sparse.save_npz(path, scipy.sparse.csr_matrix(X, dtype=np.float64),
                                  compressed=False)
            return path
        np.save(path, np.ascontiguousarray(X, dtype=np.float64))
        return path

    def _fresh_output(self, name):
        path = os.path.join(self._dir(), name)
        shutil.rmtree(path, ignore_errors=True)
        return path

    def _model(self):
        check_fitted(self, "result_")
        return os.path.join(self.result_.path, "model")

    def _solver_args(self):
        solver = getattr(self, "eigen_solver", None) or getattr(self, "svd_solver", "auto")
        if solver not in _SOLVERS:
            raise ValueError(f"unknown solver {solver!r}: one of {sorted(_SOLVERS)}")
        args = ["--solver", _SOLVERS[solver]]
        seed = getattr(self, "random_state", None)
        if seed is not None:
            if not isinstance(seed, (int, np.integer)):
                raise ValueError("random_state must be an int or None (kembed's --seed)")
            args += ["--seed", int(seed)]
        tol = getattr(self, "tol", 0)
        if tol:
            args += ["--tol", tol]
        return args

    def _common_args(self, k):
        args = ["--components", k, "--quiet"] + self._solver_args()
        precision = getattr(self, "precision", "double")
        if precision not in ("double", "single"):
            raise ValueError(f"precision must be 'double' or 'single', got {precision!r}")
        if precision == "single":
            args += ["--precision", "single"]
        storage = getattr(self, "storage", None)
        if storage is not None:
            if storage not in _STORAGES:
                raise ValueError(f"The 'storage' parameter of {type(self).__name__} must be a "
                                 f"str among {{{', '.join(map(repr, _STORAGES))}}}. "
                                 f"Got {storage!r} instead.")
            if storage != "auto":
                args += ["--storage", storage]
        return args

    def fit_transform(self, X, y=None):
        """Fits and returns the training embedding (n x k)."""
        return self.fit(X, y).embedding_

    def _fitted(self, out):
        self.result_ = load(out)
        self.embedding_ = self.result_.embedding_
        self.eigenvalues_ = self.result_.eigenvalues_
        self.explained_variance_ratio_ = self.result_.explained_variance_ratio_
        self.n_components_ = self.result_.n_components_
        self.report_ = self.result_.report
        return self

    # -- pickling and deep copies carry the fitted files, not the directory's name
    def __getstate__(self):
        state = super().__getstate__() if hasattr(super(), "__getstate__") else None
        state = dict(state if isinstance(state, dict) else self.__dict__)
        state.pop("_workdir", None)
        result = state.get("result_")
        if result is not None and os.path.isdir(result.path):
            state["_fit_files"] = _pack(result.path)
        return state

    def __setstate__(self, state):
        state = dict(state)
        files = state.pop("_fit_files", None)
        parent = getattr(super(), "__setstate__", None)
        if parent is not None:
            parent(state)
        else:
            self.__dict__.update(state)
        self._workdir = None
        if files is not None:
            path = os.path.join(self._dir(), "fit")
            _unpack(files, path)
            self.result_.path = path


class _KembedTransformer(_KembedEstimator, TransformerMixin):
    """An estimator whose saved model places new samples (``kembed transform``)."""

    def transform(self, X):
        """Projects new samples with the fitted model (``kembed transform``)."""
        model = self._model()
        X = self._check_X(X, reset=False)
        inp = self._write("transform_input.npy", X)
        out = self._fresh_output("transform")
        self._run(["transform", "--model", model, "--input", inp, "--output-dir", out,
                   "--quiet"])
        return read_matrix(os.path.join(out, "embedding.csv"))


class KernelPCA(_KembedTransformer):
    """Kernel PCA (``kembed kpca``) with scikit-learn's KernelPCA parameters.

    ``eigen_solver``: auto, dense (ScaLAPACK evd), arpack or randomized (both
    kembed's block Krylov solver), or kembed's evd, evr, krylov, elpa.
    ``inverse_transform`` needs ``fit_inverse_transform=True`` and uses
    ``kembed preimage --method ridge`` (kernel ridge regression with ``alpha``).
    ``precision`` (not in scikit-learn): "double", or "single" to store the
    n x n kernel as float32 (``--precision single``: half the memory, block
    Krylov solver only, eigenvalues to about 1e-9 relative of double).
    ``storage`` (not in scikit-learn, ``--storage``): "auto" (kembed's choice:
    lower blocks, or matrix-free where nothing stored fits the memory limit),
    "full", "lower", or "none" (matrix-free: the kernel recomputed from the
    points in every product, O(n d) memory; Krylov solver, not with a
    precomputed kernel).
    """
    _method = "kpca"

    def __init__(self, n_components=None, *, kernel="linear", gamma=None, degree=3, coef0=1,
                 alpha=1.0, fit_inverse_transform=False, eigen_solver="auto", tol=0,
                 random_state=None, precision="double", storage="auto", n_ranks=1,
                 launcher=None, kembed=None):
        super().__init__(n_ranks, launcher, kembed)
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.alpha = alpha
        self.fit_inverse_transform = fit_inverse_transform
        self.eigen_solver = eigen_solver
        self.tol = tol
        self.random_state = random_state
        self.precision = precision
        self.storage = storage

    def fit(self, X, y=None):
        X = self._check_X(X, reset=True)
        if self.n_components is None:
            raise ValueError("KernelPCA needs n_components: kembed computes only the top k "
                             "eigenpairs of the n x n kernel matrix")
        if self.fit_inverse_transform and self.kernel == "precomputed":
            raise ValueError("cannot fit_inverse_transform with a precomputed kernel")
        self._new_fit_dir()
        inp = self._write("X.npy", X)
        out = self._fresh_output("fit")
        args = ["kpca", "--input", inp, "--output-dir", out, "--kernel", self.kernel,
                "--degree", self.degree, "--coef0", self.coef0]
        if self.gamma is not None:
            args += ["--gamma", self.gamma]
        if self.fit_inverse_transform:
            args += ["--fit-inverse", "--alpha", self.alpha]
        self._run_fit(args + self._common_args(self.n_components))
        self._fitted(out)
        self.eigenvectors_ = self.result_.eigenvectors_
        self.dual_coef_ = self.result_.dual_coef_
        self.X_fit_ = self.result_.X_fit_
        return self

    def inverse_transform(self, X):
        """Maps embeddings (m x k) back to input space with the learned ridge map."""
        if not self.fit_inverse_transform:
            raise RuntimeError("inverse_transform needs KernelPCA(fit_inverse_transform=True)")
        model = self._model()
        emb = self._write("inverse_input.npy", _as_2d(X))
        out = self._fresh_output("inverse")
        self._run(["preimage", "--model", model, "--embedding", emb, "--method", "ridge",
                   "--output-dir", out, "--quiet"])
        return read_matrix(os.path.join(out, "preimages.csv"))


class PCA(_KembedTransformer):
    """PCA (``kembed pca``) with scikit-learn's PCA parameters.

    ``n_components``: an int, a float in (0, 1) (kembed's ``--variance``),
    or None for min(n, d). ``standardize`` (not in scikit-learn) divides each
    centered column by its standard deviation first. ``components_`` is k x d.
    ``score``, ``score_samples``, ``get_covariance`` and ``get_precision``:
    the probabilistic PCA model as scikit-learn defines it;
    ``log_likelihood_`` is the training data's mean log-likelihood
    (run.json), ``score(X_train)``. A scipy sparse X is fitted without being
    densified (written as a CSR .npz; kembed centers it implicitly, with its
    Krylov solver: ``svd_solver`` "auto", "arpack" or "randomized").
    """
    _method = "pca"
    _accepts_sparse = True

    def __init__(self, n_components=None, *, whiten=False, svd_solver="auto", tol=0,
                 random_state=None, standardize=False, n_ranks=1, launcher=None, kembed=None):
        super().__init__(n_ranks, launcher, kembed)
        self.n_components = n_components
        self.whiten = whiten
        self.svd_solver = svd_solver
        self.tol = tol
        self.random_state = random_state
        self.standardize = standardize

    def fit(self, X, y=None):
        X = self._check_X(X, reset=True)
        self._new_fit_dir()
        inp = self._write("X.npy", X)
        out = self._fresh_output("fit")
        nc = self.n_components
        variance = isinstance(nc, float) and 0 < nc < 1
        args = ["pca", "--input", inp, "--output-dir", out]
        common = self._common_args(0 if variance else (min(X.shape) if nc is None else nc))
        if variance:
            common = common[2:]  # --variance replaces --components
            args += ["--variance", nc]
        if self.whiten:
            args.append("--whiten")
        if self.standardize:
            args.append("--standardize")
        self._run_fit(args + common)
        self._fitted(out)
        r = self.result_
        self.components_ = r.components_
        self.explained_variance_ = r.explained_variance_
        self.mean_ = r.mean_
        self.scale_ = r.scale_
        self.singular_values_ = r.singular_values_
        self.noise_variance_ = r.noise_variance_
        self.log_likelihood_ = self.report_.get("log_likelihood")
        self.n_samples_ = X.shape[0]
        return self

    def score_samples(self, X):
        """Each sample's log-likelihood under the probabilistic PCA model (n,).

        ``kembed transform --score`` (scikit-learn's ``PCA.score_samples``);
        with ``standardize=True``, of the standardized samples.
        """
        model = self._model()
        X = self._check_X(X, reset=False)
        inp = self._write("score_input.npy", X)
        out = self._fresh_output("score")
        self._run(["transform", "--model", model, "--input", inp, "--output-dir", out,
                   "--score", "--quiet"])
        return np.load(os.path.join(out, "score_samples.npy")).ravel()

    def score(self, X, y=None):
        """The mean log-likelihood of the samples (scikit-learn's ``PCA.score``)."""
        return float(np.mean(self.score_samples(X)))

    def get_covariance(self):
        """The model's d x d covariance C (model/covariance.npy, written for d <= 4096).

        With ``whiten=True`` kembed's C is the unwhitened model's, where
        scikit-learn 1.2.1 rescales it (see docs/commands/pca.md).
        """
        return self._model_matrix("covariance")

    def get_precision(self):
        """The inverse of ``get_covariance()`` (model/precision.npy; absent when C is singular)."""
        return self._model_matrix("precision")

    def _model_matrix(self, name):
        check_fitted(self, "result_")
        matrix = self.result_.model_arrays.get(name)
        if matrix is None:
            note = self.report_.get("covariance_note") or self.report_.get("log_likelihood_note")
            raise ValueError(f"this PCA model has no {name} matrix" + (f": {note}" if note else ""))
        return np.array(matrix, dtype=np.float64)

    def inverse_transform(self, X):
        """x = mean + scale * (Z W) with W = components_ (k x d), undoing whitening.

        Computed here from the model (k x d numbers; no MPI run needed).
        """
        check_fitted(self, "components_")
        Z = _as_2d(X)
        if Z.shape[1] != self.components_.shape[0]:
            raise ValueError(f"X has {Z.shape[1]} columns, the model {self.components_.shape[0]} "
                             f"components")
        if self.whiten:
            Z = Z * np.sqrt(self.explained_variance_)
        return self.mean_ + (Z @ self.components_) * self.scale_


class TruncatedSVD(_KembedTransformer):
    """Truncated SVD, or LSA (``kembed pca --no-center``), with scikit-learn's parameters.

    X, dense or scipy sparse, is written as a CSR .npz and never centered or
    densified; the top ``n_components`` singular triplets come from kembed's
    block Krylov solver, converged to ``tol`` (0: kembed's default) whatever
    ``algorithm``; ``n_iter``, ``n_oversamples`` and
    ``power_iteration_normalizer`` (scikit-learn's randomized solver) are
    accepted and unused. ``components_`` (k x d), ``singular_values_``,
    ``explained_variance_`` (the variance of each column of X V) and
    ``explained_variance_ratio_`` mean what they mean in scikit-learn; the
    signs follow kembed's rule (largest |entry| of each score column
    positive).
    """
    _method = "pca"
    _accepts_sparse = True

    def __init__(self, n_components=2, *, algorithm="randomized", n_iter=5, n_oversamples=10,
                 power_iteration_normalizer="auto", random_state=None, tol=0.0, n_ranks=1,
                 launcher=None, kembed=None):
        super().__init__(n_ranks, launcher, kembed)
        self.n_components = n_components
        self.algorithm = algorithm
        self.n_iter = n_iter
        self.n_oversamples = n_oversamples
        self.power_iteration_normalizer = power_iteration_normalizer
        self.random_state = random_state
        self.tol = tol

    def fit(self, X, y=None):
        import scipy.sparse
        if self.algorithm not in ("randomized", "arpack"):
            raise ValueError(f"algorithm must be 'randomized' or 'arpack', got {self.algorithm!r}")
        X = self._check_X(X, reset=True)
        self._new_fit_dir()
        inp = self._write("X.npz", scipy.sparse.csr_matrix(X))
        out = self._fresh_output("fit")
        args = ["pca", "--input", inp, "--output-dir", out, "--no-center", "--components",
                self.n_components, "--quiet", "--solver", "krylov"]
        if self.random_state is not None:
            if not isinstance(self.random_state, (int, np.integer)):
                raise ValueError("random_state must be an int or None (kembed's --seed)")
            args += ["--seed", int(self.random_state)]
        if self.tol:
            args += ["--tol", self.tol]
        self._run_fit(args)
        self._fitted(out)
        r = self.result_
        self.components_ = r.components_
        self.explained_variance_ = r.explained_variance_
        self.singular_values_ = r.singular_values_
        return self

    def inverse_transform(self, X):
        """Back to the input space: X components_ (scikit-learn's TruncatedSVD)."""
        check_fitted(self, "components_")
        Z = _as_2d(X)
        if Z.shape[1] != self.components_.shape[0]:
            raise ValueError(f"X has {Z.shape[1]} columns, the model {self.components_.shape[0]} "
                             f"components")
        return Z @ self.components_


class ClassicalMDS(_KembedTransformer):
    """Classical (Torgerson-Gower) MDS (``kembed mds``).

    ``dissimilarity="euclidean"`` (or kembed's sqeuclidean, manhattan,
    cosine): X holds points; ``"precomputed"``: X is the n x n distance
    matrix (``symmetrize`` averages it with its transpose). ``precision="single"``
    stores B as float32 (points only; see KernelPCA). ``transform``
    places new points (or, precomputed, rows of distances to the training
    points) with Gower's formula. There is no inverse transform.
    ``storage``: "auto", "full", "lower" or "none" (``--storage``; "none":
    -1/2 D^(2) recomputed from the points in every product, points only; see
    KernelPCA). ``add``: "none", "cailliez" (R's ``cmdscale(add = TRUE)``:
    the smallest c that makes d + c, off the diagonal, Euclidean; True means
    "cailliez") or "lingoes" (d^2 + 2c); the constant is ``additive_constant_``
    (0 without ``add``, as R's ``ac``) and ``transform`` applies it.
    """
    _method = "mds"

    def __init__(self, n_components=2, *, dissimilarity="euclidean", eigen_solver="auto", tol=0,
                 random_state=None, symmetrize=False, precision="double", storage="auto",
                 add="none", n_ranks=1, launcher=None, kembed=None):
        super().__init__(n_ranks, launcher, kembed)
        self.n_components = n_components
        self.add = add
        self.dissimilarity = dissimilarity
        self.eigen_solver = eigen_solver
        self.tol = tol
        self.random_state = random_state
        self.symmetrize = symmetrize
        self.precision = precision
        self.storage = storage

    def fit(self, X, y=None):
        X = self._check_X(X, reset=True)
        self._new_fit_dir()
        inp = self._write("X.npy", X)
        out = self._fresh_output("fit")
        if self.dissimilarity == "precomputed":
            args = ["mds", "--distances", inp]
            if self.symmetrize:
                args.append("--symmetrize")
        else:
            args = ["mds", "--input", inp, "--metric", self.dissimilarity]
        add = {True: "cailliez", False: "none"}.get(self.add, self.add)
        if add != "none":
            args += ["--add", str(add)]
        self._run_fit(args + ["--output-dir", out] + self._common_args(self.n_components))
        self._fitted(out)
        self.spectrum_ = self.result_.spectrum_
        self.additive_constant_ = float(self.report_.get("additive_constant", 0.0))
        return self

    def inverse_transform(self, X):
        raise NotImplementedError("classical MDS has no inverse map from the embedding "
                                  "back to points or distances")


class Isomap(_KembedTransformer):
    """Isomap (``kembed isomap``) with scikit-learn's Isomap parameters.

    ``n_neighbors`` (``--neighbors``, the point itself not counted, as
    scikit-learn) or ``radius`` (``--radius``); ``metric``: "minkowski" with
    ``p`` = 2 or 1, "euclidean", "sqeuclidean", "manhattan" ("cityblock",
    "l1") or "cosine". ``path_method``: "auto", "D" or "FW" give the same
    geodesic distances; kembed computes them by Dijkstra. ``eigen_solver``:
    auto, dense, arpack, or kembed's evd, evr, krylov, elpa. ``connect`` (not
    in scikit-learn, default True as scikit-learn >= 1.2 always joins): join a
    disconnected neighbourhood graph by the c - 1 shortest edges between its
    components (``--connect``; scikit-learn adds one edge per pair of
    components, so with three or more the geodesics may differ); False makes
    a disconnected graph an error. ``transform`` places new points through
    their nearest training points. ``n_landmarks`` (not in scikit-learn):
    landmark Isomap (``--approx landmark --landmarks M``): shortest paths from
    M landmarks only, drawn from ``random_state`` (``--seed``), their
    classical MDS and every point triangulated from its geodesic distances to
    them; ``eigen_solver`` must stay "auto" and ``tol`` 0, ``eigenvalues_``
    are the landmarks' scaled by n / M, and there is no ``spectrum_`` or
    reconstruction error. Attributes: ``embedding_``,
    ``eigenvalues_``, ``explained_variance_ratio_``, ``spectrum_``,
    ``reconstruction_error_`` (``reconstruction_error()``), ``report_``.
    """
    _method = "isomap"

    def __init__(self, *, n_neighbors=5, radius=None, n_components=2, eigen_solver="auto",
                 tol=0, path_method="auto", metric="minkowski", p=2, connect=True,
                 n_landmarks=None, random_state=None, n_ranks=1, launcher=None, kembed=None):
        super().__init__(n_ranks, launcher, kembed)
        self.n_landmarks = n_landmarks
        self.random_state = random_state
        self.n_neighbors = n_neighbors
        self.radius = radius
        self.n_components = n_components
        self.eigen_solver = eigen_solver
        self.tol = tol
        self.path_method = path_method
        self.metric = metric
        self.p = p
        self.connect = connect

    def _metric(self):
        metric = self.metric
        if metric == "minkowski":
            if self.p not in (1, 2):
                raise ValueError(f"Isomap: kembed supports metric='minkowski' with p=1 or p=2, "
                                 f"got p={self.p!r}")
            return "euclidean" if self.p == 2 else "manhattan"
        names = {"euclidean": "euclidean", "l2": "euclidean", "sqeuclidean": "sqeuclidean",
                 "manhattan": "manhattan", "cityblock": "manhattan", "l1": "manhattan",
                 "cosine": "cosine"}
        if metric not in names:
            raise ValueError(f"Isomap: unknown metric {metric!r}: one of "
                             f"{sorted(names) + ['minkowski']}")
        return names[metric]

    def fit(self, X, y=None):
        X = self._check_X(X, reset=True)
        if self.path_method not in ("auto", "D", "FW"):
            raise ValueError(f"Isomap: path_method must be 'auto', 'D' or 'FW', got "
                             f"{self.path_method!r}")
        if self.n_neighbors is not None and self.radius is not None:
            raise ValueError("Isomap: give n_neighbors or radius, not both (set the other "
                             "to None)")
        if self.n_neighbors is None and self.radius is None:
            raise ValueError("Isomap: n_neighbors or radius is needed")
        metric = self._metric()
        self._new_fit_dir()
        inp = self._write("X.npy", X)
        out = self._fresh_output("fit")
        args = ["isomap", "--input", inp, "--output-dir", out, "--metric", metric]
        if self.radius is not None:
            args += ["--radius", self.radius]
        else:
            args += ["--neighbors", self.n_neighbors]
        if self.connect:
            args.append("--connect")
        if self.n_landmarks is not None:
            args += ["--approx", "landmark", "--landmarks", self.n_landmarks]
        self._run_fit(args + ["--components", self.n_components, "--quiet"]
                      + self._solver_args())
        self._fitted(out)
        self.spectrum_ = self.result_.spectrum_
        self.reconstruction_error_ = self.report_.get("reconstruction_error")
        return self

    def reconstruction_error(self):
        """sqrt(||B||_F^2 - sum_k lambda_k^2) / n, as scikit-learn's Isomap defines it."""
        check_fitted(self, "result_")
        return self.reconstruction_error_


# scikit-learn's affinity names to kembed's --affinity.
_AFFINITIES = {"nearest_neighbors": "knn", "knn": "knn", "rbf": "rbf"}


class SpectralEmbedding(_KembedTransformer):
    """Laplacian eigenmaps (``kembed spectral``) with scikit-learn's parameters.

    ``affinity``: "nearest_neighbors" (the default, as scikit-learn; kembed's
    ``--affinity knn``, with ``n_neighbors`` counting the point itself,
    default max(n/10, 1)) or "rbf" (``gamma``, default 1/d). ``eigen_solver``:
    None or "auto" (kembed's choice), "arpack" or "lobpcg" (kembed's block
    Krylov solver), "dense"/"evd" (rbf only); ``eigen_tol``: "auto" or the
    Krylov relative residual. Unlike scikit-learn, which only warns, a
    disconnected graph is an error (the embedding is then not defined).
    ``transform`` (which scikit-learn lacks) places new points by the Nystrom
    extension of the normalized affinity (``kembed transform``; a training
    point gets its embedding back). Attributes:
    ``embedding_`` (n x k, scikit-learn's signs), ``eigenvalues_`` (the
    normalized Laplacian's 1 - mu of the kept components),
    ``affinity_eigenvalues_`` (mu), ``n_neighbors_``, ``report_``.
    """
    _method = "spectral"

    def __init__(self, n_components=2, *, affinity="nearest_neighbors", gamma=None,
                 random_state=None, eigen_solver=None, eigen_tol="auto", n_neighbors=None,
                 n_ranks=1, launcher=None, kembed=None):
        super().__init__(n_ranks, launcher, kembed)
        self.n_components = n_components
        self.affinity = affinity
        self.gamma = gamma
        self.random_state = random_state
        self.eigen_solver = eigen_solver
        self.eigen_tol = eigen_tol
        self.n_neighbors = n_neighbors

    def _more_tags(self):
        # scikit-learn's check_estimator: the checks that kembed's answer to a
        # disconnected graph fails, each with the reason.
        disconnected = ("its data are two far-apart clusters of 15 points: their knn graph "
                        "is disconnected, which kembed refuses (scikit-learn only warns; the "
                        "embedding is then not defined)")
        return {"_xfail_checks": {"check_pipeline_consistency": disconnected,
                                  "check_estimators_pickle": disconnected,
                                  "check_transformer_general": disconnected,
                                  "check_transformer_preserve_dtypes": disconnected}}

    def _solver_args(self):
        solver = {None: "auto", "lobpcg": "krylov", "amg": "krylov"}.get(self.eigen_solver,
                                                                         self.eigen_solver)
        if solver not in _SOLVERS:
            raise ValueError(f"unknown eigen_solver {self.eigen_solver!r}: None, 'lobpcg', "
                             f"or one of {sorted(_SOLVERS)}")
        args = ["--solver", _SOLVERS[solver]]
        if self.random_state is not None:
            if not isinstance(self.random_state, (int, np.integer)):
                raise ValueError("random_state must be an int or None (kembed's --seed)")
            args += ["--seed", int(self.random_state)]
        if not (isinstance(self.eigen_tol, str) and self.eigen_tol == "auto") and self.eigen_tol:
            args += ["--tol", self.eigen_tol]
        return args

    def fit(self, X, y=None):
        X = self._check_X(X, reset=True)
        if self.affinity not in _AFFINITIES:
            raise ValueError(f"SpectralEmbedding: affinity must be 'nearest_neighbors' or "
                             f"'rbf', got {self.affinity!r}")
        affinity = _AFFINITIES[self.affinity]
        self._new_fit_dir()
        inp = self._write("X.npy", X)
        out = self._fresh_output("fit")
        args = ["spectral", "--input", inp, "--output-dir", out, "--affinity", affinity]
        if affinity == "rbf" and self.gamma is not None:
            args += ["--gamma", self.gamma]
        if affinity == "knn" and self.n_neighbors is not None:
            args += ["--neighbors", self.n_neighbors]
        self._run_fit(args + ["--components", self.n_components, "--quiet"]
                      + self._solver_args())
        self._fitted(out)
        self.affinity_eigenvalues_ = self.result_.affinity_eigenvalues_
        self.n_neighbors_ = self.report_.get("neighbors") if affinity == "knn" else None
        return self


class CA(_KembedTransformer):
    """Correspondence analysis (``kembed ca``) of an I x J table of counts.

    Attribute names follow the ``prince`` package where it has them:
    ``row_coordinates_`` (I x k principal coordinates, also ``embedding_``),
    ``column_coordinates_`` (J x k), ``eigenvalues_`` (the principal
    inertias), ``total_inertia_``, ``percentage_of_variance_``,
    ``cumulative_percentage_of_variance_``, ``row_masses_``, ``col_masses_``,
    ``row_contributions_``, ``column_contributions_``,
    ``row_cosine_similarities_``, ``column_cosine_similarities_``; and kembed's
    own: ``singular_values_``, ``row_standard_coordinates_``,
    ``column_standard_coordinates_``, ``row_inertias_``, ``column_inertias_``,
    ``chi_square_``, ``report_``. ``transform`` places supplementary rows (new
    I' x J tables of counts) at their principal coordinates. ``route``
    (``--route``): "auto", "rows" or "columns"; ``drop_empty``
    (``--drop-empty``) leaves all-zero rows and columns out instead of failing.
    """
    _method = "ca"

    def __init__(self, n_components=2, *, eigen_solver="auto", tol=0, random_state=None,
                 route="auto", drop_empty=False, n_ranks=1, launcher=None, kembed=None):
        super().__init__(n_ranks, launcher, kembed)
        self.n_components = n_components
        self.eigen_solver = eigen_solver
        self.tol = tol
        self.random_state = random_state
        self.route = route
        self.drop_empty = drop_empty

    def _more_tags(self):
        # A table of counts; check_estimator's integer data of this check has all-zero
        # rows, which CA refuses (their profiles are undefined; see drop_empty).
        return {"requires_positive_X": True,
                "_xfail_checks": {"check_estimators_dtypes":
                                  "its integer tables have all-zero rows, whose profiles "
                                  "are undefined; CA refuses them (drop_empty=True leaves "
                                  "them out)"}}

    def _check_X(self, X, reset):
        X = super()._check_X(X, reset)
        check_non_negative(X, "CA")
        return X

    def fit(self, X, y=None):
        X = self._check_X(X, reset=True)
        if self.route not in ("auto", "rows", "columns"):
            raise ValueError(f"CA: route must be 'auto', 'rows' or 'columns', got {self.route!r}")
        most = min(X.shape) - 1
        if not 1 <= self.n_components <= most:
            raise ValueError(f"n_components={self.n_components} must be between 1 and "
                             f"min(n_samples, n_features) - 1 = {most} for CA (n_samples = "
                             f"{X.shape[0]}, n_features = {X.shape[1]})")
        self._new_fit_dir()
        inp = self._write("X.npy", X)
        out = self._fresh_output("fit")
        args = ["ca", "--input", inp, "--output-dir", out, "--route", self.route,
                "--components", self.n_components, "--quiet"]
        if self.drop_empty:
            args.append("--drop-empty")
        self._run_fit(args + self._solver_args())
        self.result_ = load(out)
        self.report_ = r = self.result_.report
        rows, cols = _ca_table(out, "rows.csv"), _ca_table(out, "columns.csv")
        k = len(r["principal_inertias"])
        self.n_components_ = k
        self.eigenvalues_ = np.array(r["principal_inertias"], dtype=float)
        self.singular_values_ = np.sqrt(self.eigenvalues_)
        self.total_inertia_ = float(r["total_inertia"])
        self.chi_square_ = float(r["chi_square"])
        self.percentage_of_variance_ = np.array(r["percentages"], dtype=float)
        self.cumulative_percentage_of_variance_ = np.cumsum(self.percentage_of_variance_)
        self.explained_variance_ratio_ = self.percentage_of_variance_ / 100
        for side, table in (("row", rows), ("column", cols)):
            setattr(self, f"{side}_coordinates_", _columns(table, "pc", k))
            setattr(self, f"{side}_standard_coordinates_", _columns(table, "std", k))
            setattr(self, f"{side}_contributions_", _columns(table, "ctr", k))
            setattr(self, f"{side}_cosine_similarities_", _columns(table, "cos2_", k))
            setattr(self, f"{side}_inertias_", table["inertia"])
        self.row_masses_, self.col_masses_ = rows["mass"], cols["mass"]
        self.embedding_ = self.row_coordinates_
        return self


def _ca_table(out, name):
    """rows.csv or columns.csv of a CA result: each numeric column by its header name."""
    with open(os.path.join(out, name), newline="") as f:
        header, *rows = list(csv.reader(f))
    # The first column holds the row or column labels; the others are numbers.
    return {n: np.array([float(r[i]) for r in rows]) for i, n in enumerate(header) if i > 0}


def _columns(table, prefix, k):
    return np.column_stack([table[f"{prefix}{j}"] for j in range(1, k + 1)])


def _as_2d(X):
    """An embedding (or other matrix) given to an inverse map, as float64 n x k."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"expected a 2-D array, got shape {X.shape}")
    return X


def _pack(path):
    """Every file under ``path``, by its relative name, as bytes."""
    files = {}
    for root, _, names in os.walk(path):
        for name in names:
            full = os.path.join(root, name)
            with open(full, "rb") as f:
                files[os.path.relpath(full, path)] = f.read()
    return files


def _unpack(files, path):
    for rel, data in files.items():
        full = os.path.join(path, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)
