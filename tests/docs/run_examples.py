#!/usr/bin/env python3
"""Runs the examples of the README and the documentation, as written.

Runnable examples are
- fenced blocks of language `console`: each line that starts with `$ ` is a
  command (a line ending in a backslash continues it), the other lines are
  output, shown to the reader and not compared;
- inline code in the rows of a Markdown table whose header row says
  "runnable": each cell's code that starts with `kembed ` or `mpirun `.

Each page runs in its own fresh directory, in document order, which holds
docs/data/*.csv (also as docs/data/) and configs/ of the source tree, with the kembed under test
first in PATH, the Python package python/ on PYTHONPATH, and `mpirun` standing for the MPI launcher given (with
--oversubscribe, so that 2 ranks run on any machine). Every command must exit
0 within --timeout seconds.

The README is held to more: no other fenced block may hold a kembed or
mpirun command line (so each command it shows is run here), it keeps
`scripts/run` and `scripts/test` as its first commands, and it has at most
250 lines.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`{]*|\{[^}]*\})?.*$")
COMMAND_START = re.compile(r"^\s*(\$\s+)?(kembed|mpirun)\s")


def blocks(lines):
    """(language, first line number, body lines) of each fenced block."""
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang, start = m.group(2), (m.group(3) or "").strip("{}"), i + 1
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i])
            i += 1
        yield lang, start, body
        i += 1


def console_commands(body, first_line):
    """(line number, command) of each `$ ` line of a console block."""
    out, current, line_no = [], None, 0
    for offset, line in enumerate(body):
        text = line.strip()
        if current is not None:
            current += "\n" + text
        elif text.startswith("$ "):
            current, line_no = text[2:], first_line + 1 + offset
        else:
            continue
        if current.endswith("\\"):
            continue
        out.append((line_no, current))
        current = None
    return out


def table_commands(lines):
    """(line number, command) of the code in the rows of 'runnable' tables."""
    out, runnable = [], False
    for n, line in enumerate(lines, 1):
        if not line.lstrip().startswith("|"):
            runnable = False
            continue
        if not runnable and re.search(r"\brunnable\b", line, re.I) and n > 1 and \
                not lines[n - 2].lstrip().startswith("|"):
            runnable = True
            continue
        if runnable:
            for code in re.findall(r"`([^`]+)`", line):
                if re.match(r"(kembed|mpirun)\s", code):
                    out.append((n, code))
    return out


def examples(path):
    """The commands of one Markdown file, in document order, and fence lines."""
    lines = open(path, encoding="utf-8").read().split("\n")
    commands, in_fences = [], set()
    other_blocks = []
    for lang, start, body in blocks(lines):
        in_fences.update(range(start, start + len(body) + 2))
        if lang == "console":
            commands += console_commands(body, start)
        else:
            other_blocks.append((lang, start, body))
    commands += [(n, c) for n, c in table_commands(lines) if n not in in_fences]
    commands.sort()
    return lines, commands, other_blocks


def check_readme(path, lines, other_blocks):
    problems = []
    for lang, start, body in other_blocks:
        for offset, line in enumerate(body):
            if COMMAND_START.match(line):
                problems.append(f"{path}:{start + 1 + offset}: a command in a `{lang or 'plain'}` block, "
                                "which the documentation tests do not run; show it in a console block "
                                f"(`$ ` prompt) or a runnable table: {line.strip()}")
    first = [ln.strip() for _, _, body in blocks(lines) for ln in body if ln.strip()][:2]
    if [f.split()[0] for f in first] != ["scripts/run", "scripts/test"]:
        problems.append(f"{path}: the first commands must be scripts/run and scripts/test, found {first}")
    if len(lines) - (lines[-1] == "") > 250:
        problems.append(f"{path}: {len(lines)} lines; the README keeps to 250")
    return problems


def prepare(workdir, root, kembed, mpiexec, plot):
    # The launcher by its full path: the wrapper below is `mpirun` itself.
    mpiexec = shutil.which(mpiexec) or mpiexec
    bindir = os.path.join(workdir, ".bin")
    os.makedirs(bindir)
    os.symlink(os.path.abspath(kembed), os.path.join(bindir, "kembed"))
    with open(os.path.join(bindir, "mpirun"), "w") as f:
        f.write(f'#!/bin/sh\nexec "{mpiexec}" --oversubscribe "$@"\n')
    os.chmod(os.path.join(bindir, "mpirun"), 0o755)
    if plot and os.path.exists(plot):
        os.symlink(os.path.abspath(plot), os.path.join(bindir, "kembed-plot"))
    # The Python examples use Debian's numpy and matplotlib.
    if os.path.exists("/usr/bin/python3"):
        os.symlink("/usr/bin/python3", os.path.join(bindir, "python3"))
    data = os.path.join(root, "docs", "data")
    for name in sorted(os.listdir(data)):
        shutil.copy(os.path.join(data, name), workdir)
    # The configs name their data as seen from the top of the source tree.
    shutil.copytree(data, os.path.join(workdir, "docs", "data"))
    shutil.copytree(os.path.join(root, "configs"), os.path.join(workdir, "configs"))
    return bindir


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kembed", required=True, help="the kembed binary under test")
    ap.add_argument("--mpiexec", default="mpirun", help="the MPI launcher (mpirun)")
    ap.add_argument("--plot", help="kembed-plot of the build (optional)")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."),
                    help="the source tree")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per command")
    ap.add_argument("--list", action="store_true", help="list the commands, run nothing")
    ap.add_argument("files", nargs="*", help="Markdown files (default: README.md and docs/**/*.md)")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    files = args.files or [os.path.join(root, "README.md")] + sorted(
        os.path.join(d, f) for d, _, fs in os.walk(os.path.join(root, "docs"))
        for f in fs if f.endswith(".md") and "/data" not in d and "/_" not in d)

    failures, count, started = [], 0, time.time()
    for path in files:
        rel = os.path.relpath(path, root)
        lines, commands, other_blocks = examples(path)
        if os.path.basename(path) == "README.md" and os.path.dirname(os.path.abspath(path)) == root:
            failures += check_readme(rel, lines, other_blocks)
        if args.list:
            for n, c in commands:
                print(f"{rel}:{n}: {c}")
            continue
        if not commands:
            continue
        workdir = tempfile.mkdtemp(prefix="kembed-docs-")
        try:
            bindir = prepare(workdir, root, args.kembed, args.mpiexec, args.plot)
            env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""),
                       PYTHONPATH=os.path.join(root, "python"), MPLBACKEND="Agg")
            for n, command in commands:
                count += 1
                t = time.time()
                try:
                    proc = subprocess.run(["bash", "-c", command], cwd=workdir, env=env,
                                          stdin=subprocess.DEVNULL,
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                          text=True, timeout=args.timeout)
                    status, output = proc.returncode, proc.stdout
                except subprocess.TimeoutExpired as e:
                    status, output = f"timeout after {args.timeout:.0f} s", e.stdout or ""
                    if isinstance(output, bytes):
                        output = output.decode(errors="replace")
                print(f"{rel}:{n}: {'ok' if status == 0 else 'FAILED'} ({time.time() - t:.1f} s) {command}",
                      flush=True)
                if status != 0:
                    failures.append(f"{rel}:{n}: `{command}` exited {status}:\n{output.rstrip()}")
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    if not args.list:
        print(f"{count} commands from {len(files)} files in {time.time() - started:.1f} s")
    for f in failures:
        print(f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
