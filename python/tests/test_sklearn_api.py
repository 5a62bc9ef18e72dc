"""The estimators inside scikit-learn: its estimator contract, clone, pickle, Pipeline, GridSearchCV.

The contract runs scikit-learn's own ``check_estimator`` on every estimator
(up to 60 kembed runs each, one rank run directly as an MPI singleton to keep
it short; the checks left out are listed below with the reason); the tests skip, with the reason, only where python3-sklearn is not
installed. Without scikit-learn the package must import and fit all the same.
"""
import gc
import os
import pickle
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import kembed
from conftest import align_signs, circles

sklearn = pytest.importorskip("sklearn", reason="python3-sklearn is not installed: the "
                              "scikit-learn contract cannot be checked")


def direct(Est, **params):
    """One rank, the binary run directly (MPI singleton): the fastest start."""
    return Est(n_ranks=1, launcher="", **params)


CONTRACT = [
    direct(kembed.PCA, n_components=2),
    direct(kembed.KernelPCA, n_components=2, kernel="rbf"),
    direct(kembed.ClassicalMDS, n_components=2),
    direct(kembed.Isomap, n_neighbors=5),
    direct(kembed.SpectralEmbedding, n_components=2, n_neighbors=5),
    direct(kembed.CA, n_components=1),  # check data with 2 columns: 1 axis
    direct(kembed.TruncatedSVD, n_components=1),
]

# Checks left out of this test (beside the ones each estimator marks itself in its
# _more_tags, with their reasons there), to keep the CTest entry test_python within its
# 300 s on a loaded machine:
SKIPPED = {
    # 20 single-row transforms, one kembed start each (7 s per estimator on the loaded
    # 2-core VM); test_transform_of_parts_is_transform_of_whole asserts the same property
    # (a row's transform does not depend on the others in its batch) with 3 runs.
    "check_methods_subset_invariance",
}
# Checks of the input handling that every estimator shares (_KembedEstimator._check_X,
# kembed._sklearn.validate): run on PCA, and on CA whose input check adds to it; 21
# kembed starts per estimator spared on the others.
SHARED_INPUT_CHECKS = {"check_estimators_dtypes", "check_transformer_data_not_an_array",
                       "check_dtype_object", "check_fit_score_takes_y"}
INPUT_CHECKED_ON = ("PCA", "CA")


def _run_checks(index):
    """scikit-learn's checks of CONTRACT[index]: (passed, marked, seconds, failure)."""
    import traceback
    from sklearn.utils._testing import SkipTest
    from sklearn.utils.estimator_checks import check_estimator
    started, passed, marked = time.time(), [], []
    for est, check in check_estimator(CONTRACT[index], generate_only=True):
        name = getattr(check, "func", check).__name__
        if name in SKIPPED or (name in SHARED_INPUT_CHECKS and
                               type(CONTRACT[index]).__name__ not in INPUT_CHECKED_ON):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                check(est)
            passed.append(name)
        except SkipTest:
            marked.append(name)
        except Exception:
            return passed, marked, time.time() - started, f"{name}: {traceback.format_exc()}"
        finally:
            # A worker ends without running exit handlers: remove what the checks left.
            CONTRACT[index]._discard_fit()
            gc.collect()
    return passed, marked, time.time() - started, None


@pytest.fixture(scope="module")
def contract_results():
    # Two worker processes (CTest gives this test two cores): the checks start kembed
    # about 60 times per estimator, 0.4 s a start on the loaded 2-core VM (see
    # Launcher.run), mostly MPI's and the libraries' loading.
    import concurrent.futures
    import multiprocessing
    started = time.time()
    # "spawn": a forked worker would hold copies of this process's estimators, and
    # collecting them would remove their (this process's) model directories.
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        results = list(pool.map(_run_checks, range(len(CONTRACT))))
    print(f"\ncheck_estimator on {len(CONTRACT)} estimators: {time.time() - started:.1f} s")
    return results


@pytest.mark.parametrize("index", range(len(CONTRACT)),
                         ids=[type(e).__name__ for e in CONTRACT])
def test_check_estimator(index, contract_results):
    passed, marked, seconds, failure = contract_results[index]
    print(f"{type(CONTRACT[index]).__name__}: {len(passed)} checks passed, {len(marked)} marked "
          f"({', '.join(marked) or 'none'}) in {seconds:.1f} s")
    assert failure is None, failure
    assert len(passed) >= 20


def test_transform_of_parts_is_transform_of_whole():
    X, _ = circles(40)
    for est in (direct(kembed.PCA, n_components=2), direct(kembed.Isomap, n_neighbors=6),
                direct(kembed.KernelPCA, n_components=2, kernel="rbf", gamma=3.0),
                direct(kembed.ClassicalMDS), direct(kembed.CA, n_components=1),
                direct(kembed.SpectralEmbedding, affinity="rbf", gamma=1.0)):
        Y = X - X.min() + 0.1 if isinstance(est, kembed.CA) else X
        est.fit(Y)
        whole = est.transform(Y[::-1])[::-1]
        parts = np.vstack([est.transform(Y[:13]), est.transform(Y[13:])])
        np.testing.assert_allclose(parts, whole, atol=1e-12, err_msg=type(est).__name__)


def test_clone_pickle_and_params():
    from sklearn.base import clone
    X, _ = circles(60)
    kp = kembed.KernelPCA(n_components=2, kernel="rbf", gamma=4.0, n_ranks=1)
    assert kp.get_params()["gamma"] == 4.0
    assert kp.set_params(gamma=5.0) is kp and kp.gamma == 5.0
    with pytest.raises(ValueError, match="Invalid parameter"):
        kp.set_params(gama=1.0)
    fresh = clone(kp)
    assert fresh.get_params() == kp.get_params() and not hasattr(fresh, "embedding_")
    with pytest.raises(kembed.NotFittedError, match="not fitted"):
        fresh.transform(X)
    Z = kp.fit_transform(X)
    copy = pickle.loads(pickle.dumps(kp))
    assert copy._workdir != kp._workdir
    del kp  # the copy carries its own model files
    np.testing.assert_allclose(copy.transform(X), Z, atol=1e-10)
    assert copy.n_features_in_ == 2
    with pytest.raises(ValueError, match="X has 3 features, but KernelPCA is expecting 2"):
        copy.transform(np.c_[X, X[:, :1]])


def test_pipeline_and_grid_search():
    # Two circles are not linearly separable; kernel PCA with the right gamma makes
    # them so. GridSearchCV must find gamma that separates them (accuracy 1).
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline
    X, y = circles(80)
    pipe = Pipeline([("kpca", kembed.KernelPCA(n_components=2, kernel="rbf", n_ranks=1)),
                     ("clf", LogisticRegression())])
    search = GridSearchCV(pipe, {"kpca__gamma": [0.01, 5.0]}, cv=2).fit(X, y)
    assert search.best_params_ == {"kpca__gamma": 5.0}
    assert search.best_score_ == 1.0
    low = search.cv_results_["mean_test_score"][0]
    assert low < 0.9  # a nearly linear kernel cannot separate the circles
    assert search.predict(X[:5]).tolist() == y[:5].tolist()
    feature_counts = search.best_estimator_["kpca"].n_features_in_
    assert feature_counts == 2


def test_package_works_without_scikit_learn(tmp_path):
    # A child interpreter where `import sklearn` fails: the package imports, fits and
    # validates with the same messages through its own stand-ins.
    code = r"""
import sys, importlib.abc
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "sklearn" or name.startswith("sklearn."):
            raise ImportError("no scikit-learn here")
sys.meta_path.insert(0, Block())
import numpy as np, kembed
from kembed import _sklearn
assert not _sklearn.HAVE_SKLEARN
X = np.random.default_rng(0).normal(size=(30, 4))
p = kembed.PCA(2, n_ranks=1, launcher="")
try:
    p.transform(X)
except kembed.NotFittedError as e:
    assert "not fitted" in str(e)
else:
    raise AssertionError("no NotFittedError")
Z = p.fit_transform(X)
assert p.n_features_in_ == 4 and Z.shape == (30, 2)
assert p.get_params()["n_components"] == 2 and "PCA(" in repr(p)
for bad, msg in ((X[:, :3], "X has 3 features, but PCA is expecting 4"),
                 (np.full((2, 4), np.nan), "Input X contains NaN")):
    try:
        p.transform(bad)
    except ValueError as e:
        assert msg in str(e), str(e)
    else:
        raise AssertionError(msg)
try:
    kembed.PCA(1).fit(X[:1])
except ValueError as e:
    assert "1 sample(s)" in str(e)
print("ok")
"""
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), ".."))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
