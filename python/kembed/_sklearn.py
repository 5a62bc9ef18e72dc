"""scikit-learn's estimator base classes and input checks, or stand-ins without it.

With scikit-learn importable the estimators derive from its ``BaseEstimator``
and ``TransformerMixin`` and validate input with ``sklearn.utils.validation``
(its messages, ``n_features_in_``, ``feature_names_in_``), so ``clone``,
``Pipeline``, ``GridSearchCV`` and ``check_estimator`` see ordinary
estimators. Without it the package still imports and runs: the stand-ins below
give the parameter protocol and the same checks with the same messages.
"""
import inspect

import numpy as np

try:
    from sklearn.base import BaseEstimator, TransformerMixin
    from sklearn.exceptions import NotFittedError
    from sklearn.utils import validation as _validation
    HAVE_SKLEARN = True
except ImportError:  # the numpy-only install
    HAVE_SKLEARN = False

    class NotFittedError(ValueError, AttributeError):
        """Raised by a method that needs a fitted estimator (scikit-learn's name)."""

    class BaseEstimator:
        """get_params / set_params / repr from the signature of ``__init__``."""

        @classmethod
        def _get_param_names(cls):
            sig = inspect.signature(cls.__init__)
            return sorted(p.name for p in sig.parameters.values()
                          if p.name != "self" and p.kind != p.VAR_KEYWORD)

        def get_params(self, deep=True):
            return {name: getattr(self, name) for name in self._get_param_names()}

        def set_params(self, **params):
            valid = self._get_param_names()
            for name, value in params.items():
                if name not in valid:
                    raise ValueError(f"Invalid parameter {name!r} for estimator {self}. "
                                     f"Valid parameters are: {valid!r}.")
                setattr(self, name, value)
            return self

        def __repr__(self):
            args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
            return f"{type(self).__name__}({args})"

    class TransformerMixin:
        """fit_transform as fit(X).transform(X)."""

        def fit_transform(self, X, y=None, **fit_params):
            return self.fit(X, y, **fit_params).transform(X)


def check_fitted(estimator, attribute):
    """Raises NotFittedError (scikit-learn's message) unless ``attribute`` is set."""
    if getattr(estimator, attribute, None) is None:
        raise NotFittedError(f"This {type(estimator).__name__} instance is not fitted yet. "
                             "Call 'fit' with appropriate arguments before using this "
                             "estimator.")


def validate(estimator, X, reset, min_samples=1, accept_sparse=False):
    """X as a float64 n x d array, checked as scikit-learn checks it.

    ``reset``: fit records ``n_features_in_`` (and ``feature_names_in_`` of a
    DataFrame); later calls check X against them. Before scikit-learn's own
    checks, a table's first non-numeric column and a non-numeric X are named.
    ``accept_sparse``: a scipy sparse X comes back as a float64 CSR matrix
    (kembed reads it from a .npz file) instead of being refused.
    """
    _name_non_numeric(X)
    if HAVE_SKLEARN:
        kwargs = dict(dtype=np.float64, ensure_min_samples=min_samples, reset=reset,
                      accept_sparse="csr" if accept_sparse else False)
        if hasattr(_validation, "validate_data"):  # scikit-learn >= 1.6
            return _validation.validate_data(estimator, X, **kwargs)
        return estimator._validate_data(X, **kwargs)
    if accept_sparse and is_sparse(X):
        X = X.tocsr().astype(np.float64)
        _check_counts(estimator, X.shape, min_samples)
        if not np.isfinite(X.data).all():
            raise ValueError("Input X contains NaN or infinity.")
        _record_features(estimator, X.shape[1], reset)
        return X
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"Expected 2D array, got {X.ndim}D array instead. Reshape your data "
                         "either using array.reshape(-1, 1) if your data has a single feature "
                         "or array.reshape(1, -1) if it contains a single sample.")
    _check_counts(estimator, X.shape, min_samples)
    if not np.isfinite(X).all():
        what = "NaN" if np.isnan(X).any() else "infinity or a value too large for dtype('float64')"
        raise ValueError(f"Input X contains {what}.")
    _record_features(estimator, X.shape[1], reset)
    return X


def is_sparse(X):
    """Whether X is a scipy sparse matrix or array (scipy need not be installed)."""
    try:
        import scipy.sparse
    except ImportError:
        return False
    return scipy.sparse.issparse(X)


def _check_counts(estimator, shape, min_samples):
    """scikit-learn's checks of the sample and feature counts of an n x d X."""
    whom = type(estimator).__name__
    if shape[0] < min_samples:
        raise ValueError(f"Found array with {shape[0]} sample(s) (shape={shape}) while a "
                         f"minimum of {min_samples} is required by {whom}.")
    if shape[1] < 1:
        raise ValueError(f"Found array with 0 feature(s) (shape={shape}) while a minimum "
                         f"of 1 is required by {whom}.")


def _record_features(estimator, n_features, reset):
    """``reset``: records n_features_in_; else checks X's feature count against it."""
    if reset:
        estimator.n_features_in_ = n_features
    elif n_features != estimator.n_features_in_:
        raise ValueError(f"X has {n_features} features, but {type(estimator).__name__} is "
                         f"expecting {estimator.n_features_in_} features as input.")


def check_non_negative(X, whom):
    """Refuses negative entries with scikit-learn's message ("Negative values in data passed to")."""
    if HAVE_SKLEARN:
        _validation.check_non_negative(X, whom)
    elif X.size and X.min() < 0:
        raise ValueError(f"Negative values in data passed to {whom}")


def _name_non_numeric(X):
    columns = getattr(X, "columns", None)
    if columns is not None and hasattr(X, "dtypes"):
        # A table (a pandas DataFrame): name the first column that is not numbers.
        for name in columns:
            try:
                np.asarray(X[name], dtype=np.float64)
            except (TypeError, ValueError) as e:
                raise ValueError(f"column {name!r} of X is not numeric ({X[name].dtype}): "
                                 f"{e}") from None
        return
    if hasattr(X, "dtype") and getattr(X.dtype, "kind", "O") not in "OUS":
        return  # numbers already (or a sparse matrix, left to the checks)
    arr = np.asarray(X)
    if arr.dtype.kind in "OUS":
        try:
            arr.astype(np.float64)
        except (TypeError, ValueError) as e:
            # The same exception type as numpy's, so callers matching it still do.
            raise type(e)(f"X is not numeric: {e}") from None
