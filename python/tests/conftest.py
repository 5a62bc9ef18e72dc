"""Shared setup: the kembed binary under test and small data sets.

KEMBED_BINARY (set by the CTest entry) names the binary; KEMBED_LAUNCHER the
MPI launcher; KEMBED_TEST_RANKS the rank count of the estimator tests (2).
"""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

RANKS = int(os.environ.get("KEMBED_TEST_RANKS", "2"))


@pytest.fixture(scope="session", autouse=True)
def _kembed_binary():
    if not os.environ.get("KEMBED_BINARY"):
        pytest.exit("set KEMBED_BINARY to the kembed binary under test", returncode=2)
    os.environ.setdefault("KEMBED_LAUNCHER", "mpirun --oversubscribe --timeout 60")


@pytest.fixture
def ranks():
    return RANKS


@pytest.fixture
def blobs():
    """40 points in 5 dimensions with unequal scales (a well-separated spectrum)."""
    rng = np.random.default_rng(7)
    return rng.normal(size=(40, 5)) * np.array([3.0, 2.0, 1.0, 0.5, 0.25]) + np.arange(5)


def circles(n=200, seed=3):
    """Two noisy concentric circles (radii 1 and 0.3) and their labels."""
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % 2
    r = np.where(labels == 0, 1.0, 0.3)
    t = rng.uniform(0, 2 * np.pi, n)
    X = np.c_[r * np.cos(t), r * np.sin(t)] + rng.normal(scale=0.02, size=(n, 2))
    return X, labels


def align_signs(A, B):
    """B with each column's sign flipped to agree with A's (eigenvector signs are a convention)."""
    s = np.sign(np.sum(A * B, axis=0))
    s[s == 0] = 1
    return B * s
