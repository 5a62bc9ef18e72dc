"""scikit-learn-style estimators that run the kembed binary on .npy files.

Each fit writes X to a temporary directory owned by the estimator, runs
``mpirun -np n_ranks kembed <method> ...`` there and keeps the model
directory for ``transform`` and ``inverse_transform``; the directory is
removed with the estimator. Parameters carry scikit-learn's names; the
last three (``n_ranks``, ``launcher``, ``kembed``) say how kembed is run.
"""
import os
import shutil
import tempfile
import weakref

import numpy as np

from ._runner import Launcher
from .results import load, read_matrix

# scikit-learn's eigen_solver / svd_solver names, and kembed's own, to --solver.
_SOLVERS = {"auto": "auto", "dense": "evd", "full": "evd", "arpack": "krylov",
            "randomized": "krylov", "evd": "evd", "evr": "evr", "krylov": "krylov",
            "elpa": "elpa"}

# kembed's --storage of the n x n matrix (kpca and mds).
_STORAGES = ("auto", "full", "lower", "none")


class _KembedEstimator:
    _method = None

    def __init__(self, n_ranks=1, launcher=None, kembed=None):
        self.n_ranks = n_ranks
        self.launcher = launcher
        self.kembed = kembed
        self._workdir = None

    # -- scikit-learn's parameter protocol (enough for clone() and grid search).
    @classmethod
    def _param_names(cls):
        import inspect
        sig = inspect.signature(cls.__init__)
        return [p for p in sig.parameters if p != "self"]

    def get_params(self, deep=True):
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        for name, value in params.items():
            if name not in self._param_names():
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}")
            setattr(self, name, value)
        return self

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    # -- running kembed
    def _run(self, args):
        Launcher(self.n_ranks, self.launcher, self.kembed).run(args, cwd=self._dir())

    def _dir(self):
        if self._workdir is None:
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
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
        self.result_ = None

    def _new_fit_dir(self):
        # A refit starts from a fresh directory: kembed never mixes two fits.
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
        return self._dir()

    def _write(self, name, X):
        path = os.path.join(self._dir(), name)
        np.save(path, np.ascontiguousarray(_as_2d(X), dtype=np.float64))
        return path

    def _fresh_output(self, name):
        path = os.path.join(self._dir(), name)
        shutil.rmtree(path, ignore_errors=True)
        return path

    def _model(self):
        if getattr(self, "result_", None) is None:
            raise RuntimeError(f"this {type(self).__name__} is not fitted yet: call fit first")
        return os.path.join(self.result_.path, "model")

    def _common_args(self, k):
        args = ["--components", k, "--quiet"]
        solver = getattr(self, "eigen_solver", None) or getattr(self, "svd_solver", "auto")
        if solver not in _SOLVERS:
            raise ValueError(f"unknown solver {solver!r}: one of {sorted(_SOLVERS)}")
        args += ["--solver", _SOLVERS[solver]]
        seed = getattr(self, "random_state", None)
        if seed is not None:
            if not isinstance(seed, (int, np.integer)):
                raise ValueError("random_state must be an int or None (kembed's --seed)")
            args += ["--seed", int(seed)]
        tol = getattr(self, "tol", 0)
        if tol:
            args += ["--tol", tol]
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
        return self.fit(X).embedding_

    def transform(self, X):
        """Projects new samples with the fitted model (``kembed transform``)."""
        inp = self._write("transform_input.npy", X)
        out = self._fresh_output("transform")
        self._run(["transform", "--model", self._model(), "--input", inp, "--output-dir", out,
                   "--quiet"])
        return read_matrix(os.path.join(out, "embedding.csv"))

    def _fitted(self, out):
        self.result_ = load(out)
        self.embedding_ = self.result_.embedding_
        self.eigenvalues_ = self.result_.eigenvalues_
        self.explained_variance_ratio_ = self.result_.explained_variance_ratio_
        self.n_components_ = self.result_.n_components_
        self.report_ = self.result_.report
        return self


class KernelPCA(_KembedEstimator):
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
        X = _as_2d(X)
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
        self.n_features_in_ = X.shape[1]
        return self

    def inverse_transform(self, X):
        """Maps embeddings (m x k) back to input space with the learned ridge map."""
        if not self.fit_inverse_transform:
            raise RuntimeError("inverse_transform needs KernelPCA(fit_inverse_transform=True)")
        emb = self._write("inverse_input.npy", X)
        out = self._fresh_output("inverse")
        self._run(["preimage", "--model", self._model(), "--embedding", emb, "--method", "ridge",
                   "--output-dir", out, "--quiet"])
        return read_matrix(os.path.join(out, "preimages.csv"))


class PCA(_KembedEstimator):
    """PCA (``kembed pca``) with scikit-learn's PCA parameters.

    ``n_components``: an int, a float in (0, 1) (kembed's ``--variance``),
    or None for min(n, d). ``standardize`` (not in scikit-learn) divides each
    centered column by its standard deviation first. ``components_`` is k x d.
    """
    _method = "pca"

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
        X = _as_2d(X)
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
        self.n_features_in_ = X.shape[1]
        self.n_samples_ = X.shape[0]
        return self

    def inverse_transform(self, X):
        """x = mean + scale * (Z W) with W = components_ (k x d), undoing whitening.

        Computed here from the model (k x d numbers; no MPI run needed).
        """
        Z = _as_2d(X)
        if getattr(self, "components_", None) is None:
            raise RuntimeError("this PCA is not fitted yet: call fit first")
        if Z.shape[1] != self.components_.shape[0]:
            raise ValueError(f"X has {Z.shape[1]} columns, the model {self.components_.shape[0]} "
                             f"components")
        if self.whiten:
            Z = Z * np.sqrt(self.explained_variance_)
        return self.mean_ + (Z @ self.components_) * self.scale_


class ClassicalMDS(_KembedEstimator):
    """Classical (Torgerson-Gower) MDS (``kembed mds``).

    ``dissimilarity="euclidean"`` (or kembed's sqeuclidean, manhattan,
    cosine): X holds points; ``"precomputed"``: X is the n x n distance
    matrix (``symmetrize`` averages it with its transpose). ``precision="single"``
    stores B as float32 (points only; see KernelPCA). ``transform``
    places new points (or, precomputed, rows of distances to the training
    points) with Gower's formula. There is no inverse transform.
    ``storage``: "auto", "full", "lower" or "none" (``--storage``; "none":
    -1/2 D^(2) recomputed from the points in every product, points only; see
    KernelPCA).
    """
    _method = "mds"

    def __init__(self, n_components=2, *, dissimilarity="euclidean", eigen_solver="auto", tol=0,
                 random_state=None, symmetrize=False, precision="double", storage="auto",
                 n_ranks=1, launcher=None, kembed=None):
        super().__init__(n_ranks, launcher, kembed)
        self.n_components = n_components
        self.dissimilarity = dissimilarity
        self.eigen_solver = eigen_solver
        self.tol = tol
        self.random_state = random_state
        self.symmetrize = symmetrize
        self.precision = precision
        self.storage = storage

    def fit(self, X, y=None):
        X = _as_2d(X)
        self._new_fit_dir()
        inp = self._write("X.npy", X)
        out = self._fresh_output("fit")
        if self.dissimilarity == "precomputed":
            args = ["mds", "--distances", inp]
            if self.symmetrize:
                args.append("--symmetrize")
        else:
            args = ["mds", "--input", inp, "--metric", self.dissimilarity]
        self._run_fit(args + ["--output-dir", out] + self._common_args(self.n_components))
        self._fitted(out)
        self.spectrum_ = self.result_.spectrum_
        self.n_features_in_ = X.shape[1]
        return self

    def inverse_transform(self, X):
        raise NotImplementedError("classical MDS has no inverse map from the embedding "
                                  "back to points or distances")


def _as_2d(X):
    columns = getattr(X, "columns", None)
    if columns is not None and hasattr(X, "dtypes"):
        # A table (a pandas DataFrame): name the first column that is not numbers.
        for name in columns:
            try:
                np.asarray(X[name], dtype=np.float64)
            except (TypeError, ValueError) as e:
                raise ValueError(f"column {name!r} of X is not numeric ({X[name].dtype}): {e}") from None
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise ValueError(f"X is not numeric: {e}") from None
    if X.ndim != 2:
        raise ValueError(f"expected a 2-D array, got shape {X.shape}")
    return X
