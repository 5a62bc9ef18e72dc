"""`pip install ./python` works offline, as the README says: into a fresh
virtual environment with no package index, the wheel built by the in-tree
backend installs the package and its kembed-plot script."""
import os
import subprocess
import sys
import zipfile

import pytest

PYTHON_DIR = os.path.join(os.path.dirname(__file__), "..")


def _venv(tmp_path):
    venv = tmp_path / "venv"
    try:
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                       check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as e:
        pytest.fail("python3 -m venv failed (Debian: python3-venv): " + e.stderr)
    return venv / "bin"


def test_offline_pip_install(tmp_path):
    bin_dir = _venv(tmp_path)
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    done = subprocess.run([str(bin_dir / "pip"), "install", "--no-index", os.path.abspath(PYTHON_DIR)],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    # Imported from the environment, not from the source tree.
    where = subprocess.run([str(bin_dir / "python"), "-c", "import kembed; print(kembed.__file__)"],
                           capture_output=True, text=True, check=True, cwd=tmp_path).stdout.strip()
    assert where.startswith(str(tmp_path)), where
    assert (bin_dir / "kembed-plot").exists()
    help_text = subprocess.run([str(bin_dir / "kembed-plot"), "--help"], capture_output=True,
                               text=True, cwd=tmp_path)
    assert help_text.returncode == 0 and "RESULT" in help_text.stdout.upper(), help_text.stderr


def test_wheel_lists_every_module(tmp_path):
    sys.path.insert(0, os.path.join(PYTHON_DIR, "build_backend"))
    try:
        import kembed_build
    finally:
        sys.path.pop(0)
    name = kembed_build.build_wheel(str(tmp_path))
    with zipfile.ZipFile(tmp_path / name) as whl:
        names = set(whl.namelist())
        record = whl.read("kembed-0.1.0.dist-info/RECORD").decode().splitlines()
    sources = {f"kembed/{f}" for f in os.listdir(os.path.join(PYTHON_DIR, "kembed")) if f.endswith(".py")}
    assert sources <= names
    # RECORD names every file of the wheel exactly once.
    assert sorted(line.split(",")[0] for line in record) == sorted(names)
