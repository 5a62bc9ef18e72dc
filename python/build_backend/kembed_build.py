"""PEP 517 build backend for the kembed Python package, standard library only.

The package is pure Python, so a wheel is a zip of python/kembed plus its
metadata. With no build requirements, `pip install ./python` works offline:
pip's isolated build environment has nothing to download (setuptools'
backend would be fetched from the package index).

Metadata comes from pyproject.toml's [project] table (PEP 621 fields that
the package uses: name, version, description, readme, requires-python,
license, dependencies, optional-dependencies, scripts).
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

try:
    import tomllib  # Python >= 3.11
except ModuleNotFoundError:  # pragma: no cover - older Pythons with tomli installed
    import tomli as tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Fixed timestamp: the same sources give the same wheel bytes.
ZIP_DATE = (2020, 1, 1, 0, 0, 0)


def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def _dist_name(project):
    return re.sub(r"[-_.]+", "_", project["name"]).lower()


def _metadata(project):
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
    ]
    if "description" in project:
        lines.append(f"Summary: {project['description']}")
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    license_ = project.get("license", {})
    if "text" in license_:
        lines.append(f"License: {license_['text']}")
    for requirement in project.get("dependencies", []):
        lines.append(f"Requires-Dist: {requirement}")
    for extra, requirements in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        for requirement in requirements:
            lines.append(f'Requires-Dist: {requirement}; extra == "{extra}"')
    body = ""
    readme = project.get("readme")
    if readme:
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(ROOT, readme), encoding="utf-8") as f:
            body = "\n" + f.read()
    return "\n".join(lines) + "\n" + body


def _entry_points(project):
    scripts = project.get("scripts", {})
    if not scripts:
        return None
    return "[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in scripts.items())


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _package_files():
    """(archive path, bytes) of every .py file under python/kembed, sorted."""
    out = []
    package = os.path.join(ROOT, "kembed")
    for directory, subdirs, files in os.walk(package):
        subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                full = os.path.join(directory, name)
                with open(full, "rb") as f:
                    out.append((os.path.relpath(full, ROOT).replace(os.sep, "/"), f.read()))
    return out


def _write_wheel(wheel_directory, contents):
    project = _project()
    dist = _dist_name(project)
    info = f"{dist}-{project['version']}.dist-info"
    entries = list(contents)
    entries.append((f"{info}/METADATA", _metadata(project).encode()))
    entries.append((f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: kembed_build\n"
                    b"Root-Is-Purelib: true\nTag: py3-none-any\n"))
    entry_points = _entry_points(project)
    if entry_points:
        entries.append((f"{info}/entry_points.txt", entry_points.encode()))
    record = [_record_line(path, data) for path, data in entries]
    record.append(f"{info}/RECORD,,")
    entries.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode()))

    name = f"{dist}-{project['version']}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as whl:
        for path, data in entries:
            item = zipfile.ZipInfo(path, ZIP_DATE)
            item.external_attr = 0o644 << 16
            item.compress_type = zipfile.ZIP_DEFLATED
            whl.writestr(item, data)
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _package_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # A .pth file puts python/ on sys.path: edits to python/kembed take effect at once.
    pth = (ROOT + "\n").encode()
    return _write_wheel(wheel_directory, [("kembed_editable.pth", pth)])


def build_sdist(sdist_directory, config_settings=None):
    project = _project()
    base = f"{_dist_name(project)}-{project['version']}"
    name = f"{base}.tar.gz"
    members = ["pyproject.toml", "README.md", "build_backend/kembed_build.py"]
    members += [path for path, _ in _package_files()]
    pkg_info = _metadata(project).encode()
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for path in members:
            tar.add(os.path.join(ROOT, path), arcname=f"{base}/{path}")
        item = tarfile.TarInfo(f"{base}/PKG-INFO")
        item.size = len(pkg_info)
        tar.addfile(item, io.BytesIO(pkg_info))
    return name
