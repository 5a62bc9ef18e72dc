"""kembed from Python: load results, and run kembed with scikit-learn-style estimators.

    import kembed
    res = kembed.load("results/example")          # res.embedding_, res.eigenvalues_, ...
    Z = kembed.KernelPCA(n_components=2, kernel="rbf", gamma=10.0, n_ranks=2).fit_transform(X)

kembed itself is found through KEMBED_BINARY or PATH, and started with
``mpirun -np n_ranks`` (KEMBED_LAUNCHER, or the ``launcher`` parameter).
"""
from ._runner import KembedError, Launcher
from ._sklearn import NotFittedError
from .estimators import (CA, PCA, ClassicalMDS, Isomap, KernelPCA, SpectralEmbedding,
                         TruncatedSVD)
from .results import Result, load

__version__ = "0.1.0"
__all__ = ["load", "Result", "KernelPCA", "PCA", "ClassicalMDS", "Isomap", "SpectralEmbedding",
           "TruncatedSVD", "CA", "KembedError", "NotFittedError", "Launcher"]
