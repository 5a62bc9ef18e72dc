"""The command-line reference, generated from the kembed binary's own help.

``{kembed-cli-reference}`` runs ``kembed --help``, reads the command names
from it, and writes one section per command with the text of
``kembed <command> --help``, so the reference is the binary's and cannot
drift from it. The binary is $KEMBED_BINARY, or build/kembed beside docs/
(scripts/docs and CMake set KEMBED_BINARY). Without it the build fails and
says how to make one.
"""
import os
import re
import subprocess

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.errors import ExtensionError

_cache = {}


def _binary(app):
    path = os.environ.get("KEMBED_BINARY") or os.path.join(app.srcdir, "..", "build", "kembed")
    path = os.path.abspath(path)
    if not os.access(path, os.X_OK):
        raise ExtensionError(
            f"kembed binary not found at {path}: build it (cmake --build build --target kembed) "
            "or set KEMBED_BINARY; the command-line reference is generated from its --help")
    return path


def _help(app, *args):
    """The output of `kembed ARGS --help` (standard output, exit status 0)."""
    key = args
    if key not in _cache:
        env = dict(os.environ)
        # A singleton MPI process; no leak report from a sanitizer build.
        env.setdefault("ASAN_OPTIONS", "detect_leaks=0")
        env.setdefault("OMPI_MCA_btl", "self")
        env.setdefault("OMPI_MCA_pml", "ob1")
        proc = subprocess.run([_binary(app), *args, "--help"], capture_output=True, text=True,
                              env=env, timeout=120)
        if proc.returncode != 0:
            raise ExtensionError(f"`kembed {' '.join(args)} --help` exited {proc.returncode}: "
                                 f"{proc.stderr.strip()}")
        _cache[key] = proc.stdout.rstrip() + "\n"
    return _cache[key]


def commands(app):
    """The command names `kembed --help` lists, in its order."""
    names = []
    listing = False
    for line in _help(app).splitlines():
        if line.strip() == "commands:":
            listing = True
            continue
        m = re.match(r"^  ([a-z][a-z-]*)\s+\S", line)
        if listing and m:
            names.append(m.group(1))
        elif listing and names:
            break
    if not names:
        raise ExtensionError("found no commands in `kembed --help`")
    return names


class CliReference(Directive):
    has_content = False

    def run(self):
        env = self.state.document.settings.env
        app = env.app
        env.note_dependency(_binary(app))
        text = _help(app)
        out = [nodes.literal_block(text, text)]
        for name in commands(app):
            section = nodes.section(ids=[f"cli-{name}"], names=[f"kembed {name}"])
            section += nodes.title("", "", nodes.literal(f"kembed {name}", f"kembed {name}"))
            body = _help(app, name)
            section += nodes.literal_block(body, body)
            out.append(section)
        return out


def setup(app):
    app.add_directive("kembed-cli-reference", CliReference)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
