"""A kembed result directory as numpy arrays with scikit-learn's names and shapes."""
import csv
import json
import os

import numpy as np


class Result:
    """What ``load`` returns. Attributes (absent ones are None):

    - ``embedding_`` (n x k), ``ids`` (row ids of ``--id-column``, or None)
    - ``eigenvalues_`` (k,), ``explained_variance_ratio_`` (k,)
    - ``report``: run.json as a dict; ``method``: kembed's command ("kpca",
      "pca", "mds", "isomap", "spectral", "ca", ...)
    - ``manifest`` and ``model_arrays`` (every ``model/*.npy`` by its name)
    - PCA: ``components_`` (k x d, scikit-learn's orientation),
      ``explained_variance_``, ``mean_``, ``scale_``, ``whiten``,
      ``singular_values_``, ``noise_variance_``, ``feature_names_in_`` (the
      input's header names as an array of str, or None without a header)
    - kernel PCA: ``eigenvectors_`` (n x k unit vectors), ``dual_coef_``
      (n x d inverse-map weights when fitted with --fit-inverse), ``X_fit_``
    - spectral: ``eigenvalues_`` holds the normalized Laplacian's 1 - mu,
      ``affinity_eigenvalues_`` mu (no explained variance)
    - MDS and Isomap: ``spectrum_`` (all n eigenvalues, negative ones included, when
      spectrum.csv was written)
    """

    def __init__(self, path):
        self.path = path
        self.ids = None
        self.embedding_ = None
        self.eigenvalues_ = None
        self.explained_variance_ratio_ = None
        self.report = {}
        self.method = None
        self.manifest = None
        self.model_arrays = {}
        self.components_ = None
        self.explained_variance_ = None
        self.mean_ = None
        self.scale_ = None
        self.whiten = None
        self.singular_values_ = None
        self.noise_variance_ = None
        self.feature_names_in_ = None
        self.eigenvectors_ = None
        self.dual_coef_ = None
        self.X_fit_ = None
        self.spectrum_ = None
        self.affinity_eigenvalues_ = None

    @property
    def n_components_(self):
        return None if self.eigenvalues_ is None else len(self.eigenvalues_)

    def __repr__(self):
        shape = None if self.embedding_ is None else self.embedding_.shape
        return f"kembed.Result(method={self.method!r}, embedding {shape}, path={self.path!r})"


def read_table(path):
    """A kembed CSV: (header, leading id columns as lists of str, numeric columns n x k).

    Columns named c1, c2, ... (and x1, ... of preimages.csv) are numbers; any
    columns before them are ids (``--id-column``), kept as strings. In
    components.csv the first column, "component", holds the row labels
    c1, c2, ... and every other column (named after a feature) is numeric.
    """
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise ValueError(f"{path}: empty file")
    header = rows[0]
    if header[:1] == ["component"]:
        first = 1
    else:
        first = next((i for i, h in enumerate(header)
                      if (h[:1] in ("c", "x") and h[1:].isdigit())
                      or h in ("eigenvalue", "explained_variance_ratio")), 0)
    ids = [r[:first] for r in rows[1:]]
    try:
        data = np.array([[float(v) for v in r[first:]] for r in rows[1:]], dtype=float)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    return header, ids, data.reshape(len(rows) - 1, len(header) - first)


def read_matrix(path):
    """The numeric columns of a kembed CSV as an n x k array."""
    return read_table(path)[2]


def load(result_dir):
    """Reads a kembed result directory (``--output-dir``) into a ``Result``."""
    if not os.path.isdir(result_dir):
        raise FileNotFoundError(f"{result_dir}: not a directory")
    res = Result(result_dir)
    run_json = os.path.join(result_dir, "run.json")
    if os.path.exists(run_json):
        with open(run_json) as f:
            res.report = json.load(f)
        res.method = res.report.get("method")

    emb = os.path.join(result_dir, "embedding.csv")
    if os.path.exists(emb):
        header, ids, res.embedding_ = read_table(emb)
        if ids and ids[0]:
            res.ids = [r[0] for r in ids] if len(ids[0]) == 1 else ids
    eig = os.path.join(result_dir, "eigenvalues.csv")
    if os.path.exists(eig):
        header, _, values = read_table(eig)
        res.eigenvalues_ = values[:, 0].copy()
        if header[-1] == "affinity_eigenvalue":  # spectral: 1 - mu, then mu
            res.affinity_eigenvalues_ = values[:, -1].copy()
        elif "explained_variance_ratio" in header:  # the landmark fits have a column between
            res.explained_variance_ratio_ = values[:, header.index("explained_variance_ratio")].copy()
        elif values.shape[1] > 1:
            res.explained_variance_ratio_ = values[:, 1].copy()
    spec = os.path.join(result_dir, "spectrum.csv")
    if os.path.exists(spec):
        res.spectrum_ = read_matrix(spec)[:, 0].copy()

    model_dir = os.path.join(result_dir, "model")
    if os.path.isdir(model_dir):
        _load_model(res, model_dir)
    return res


def _load_model(res, model_dir):
    with open(os.path.join(model_dir, "manifest.json")) as f:
        res.manifest = json.load(f)
    m = res.manifest
    res.method = res.method or m.get("method")
    for name, entry in m.get("arrays", {}).items():
        res.model_arrays[name] = np.load(os.path.join(model_dir, entry["file"]))
    a = res.model_arrays
    k = int(m.get("k", 0))
    eig = a.get("eigenvalues")
    if eig is not None and res.eigenvalues_ is None:
        res.eigenvalues_ = eig.ravel().copy()

    if res.method == "pca":
        res.components_ = _components_k_by_d(a["components"], m)
        res.explained_variance_ = eig.ravel().copy() if eig is not None else res.eigenvalues_
        res.mean_ = a["mean"].ravel().copy()
        res.scale_ = a["scale"].ravel().copy() if "scale" in a else np.ones_like(res.mean_)
        res.whiten = bool(m.get("whiten", False))
        if "feature_names" in m:
            res.feature_names_in_ = np.array(m["feature_names"], dtype=object)
        n = int(m.get("n", 0))
        if res.report.get("singular_values") is not None:
            # run.json's, which hold also without centering (truncated SVD),
            # where the explained variances are not lambda / (n - 1).
            res.singular_values_ = np.asarray(res.report["singular_values"], dtype=float)
        elif n > 1:
            res.singular_values_ = np.sqrt(res.explained_variance_ * (n - 1))
        res.noise_variance_ = res.report.get("noise_variance")
    elif res.method == "kpca":
        coef = a.get("coefficients")
        if coef is not None and eig is not None:
            # a_j = v_j / sqrt(lambda_j): back to unit eigenvectors.
            res.eigenvectors_ = coef * np.sqrt(eig.ravel()[:k])
        res.dual_coef_ = a.get("inverse_weights")
        res.X_fit_ = a.get("X")


def _components_k_by_d(comp, manifest):
    """PCA axes as k x d whatever orientation the model stored them in."""
    k, d = int(manifest["k"]), int(manifest["d"])
    # Formats 2 and 3 store the axes as rows (k x d) and say so; format 1 as
    # columns (d x k), without the key. Vectors (1-D from format 3, 1 x k
    # before) are read with ravel(), so every version loads the same.
    version = manifest.get("format_version", 1)
    orientation = manifest.get("components_orientation", "k x d" if version >= 2 else "d x k")
    if orientation.replace(" ", "") == "kxd":
        return np.array(comp, dtype=float).reshape(k, d)
    return np.array(comp, dtype=float).reshape(d, k).T.copy()
