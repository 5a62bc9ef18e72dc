#!/usr/bin/python3
"""Scaling report of kembed runs: one CSV table and one PNG plot.

    python3 jobs/report.py [--output DIR] [--mode auto|strong|weak] DIR...

Reads every run.json under the given directories (recursively) and writes
DIR/scaling.csv (one row per run: method, mode, ranks, grid, n, d, k, solver,
time per phase, total, speedup, parallel efficiency, peak memory per rank) and
DIR/scaling.png (time per phase against ranks on log-log axes with the ideal
line, and the parallel efficiency; legends below the axes, off the data),
DIR being --output (created with its parents if missing) or the first directory.

Runs are grouped by study (the DIR they were found under), method, k, the
solver that ran (run.json's solver_used: with --solver auto it depends on n
and k, and the solvers' times are not comparable) and, for strong scaling, n.
Within a group, with P0 the smallest rank count and T the total time:
  strong (same n):        speedup = T(P0) / T(P),  efficiency = speedup * P0 / P
  weak (n grows with P):  efficiency = T(P0) / T(P), speedup = efficiency * P / P0
--mode auto (the default) calls a group weak when all its runs have different
n growing with the rank count, and strong otherwise.

The table needs only the Python standard library; the plot needs matplotlib
(Debian: python3-matplotlib). Without it the CSV is written and the script
exits with status 3 saying what is missing.
"""
import argparse
import csv
import json
import os
import sys



def find_runs(dirs):
    runs = []
    for top in dirs:
        if not os.path.isdir(top):
            sys.exit(f"report: error: '{top}' is not a directory")
        for here, subdirs, files in os.walk(top):
            subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
            if "run.json" not in files:
                continue
            path = os.path.join(here, "run.json")
            try:
                with open(path) as f:
                    report = json.load(f)
                runs.append(parse_run(report, here, top))
            except (OSError, ValueError, KeyError, TypeError) as e:
                sys.exit(f"report: error: {path}: {e}")
    return runs


def parse_run(r, where, study):
    grid = r.get("grid", {})
    return {
        "study": study,
        "dir": where,
        "method": r["method"],
        "ranks": int(r["ranks"]),
        "grid": f'{grid.get("nprow", "?")}x{grid.get("npcol", "?")}',
        "n": int(r.get("n", r.get("input", {}).get("rows", 0))),
        "d": r.get("d", r.get("input", {}).get("cols", "")),
        "k": r.get("components", ""),
        # Older run.json files have no solver_used: the solver asked is the one that ran.
        "solver": r.get("solver_used") or r.get("solver", ""),
        "solver_asked": r.get("solver", ""),
        "times": {p: float(t) for p, t in r["time_seconds"].items()},
        "total": float(r["time_seconds_total"]),
        "memory": int(r.get("peak_memory_bytes_per_rank_max", 0)),
    }


def assign_modes(runs, forced):
    groups = {}
    for run in runs:
        groups.setdefault((run["study"], run["method"], str(run["k"]), run["solver"]), []).append(run)
    result = {}
    for key, members in groups.items():
        members.sort(key=lambda r: (r["ranks"], r["n"]))
        ns = [r["n"] for r in members]
        weak = len(members) > 1 and len(set(ns)) == len(ns) and ns == sorted(ns) and \
            len({r["ranks"] for r in members}) == len(members)
        mode = forced if forced != "auto" else ("weak" if weak else "strong")
        if mode == "weak":
            result[key + ("weak",)] = members
        else:  # strong: one group per n
            for n in sorted(set(ns)):
                result[key + (f"n={n}",)] = [r for r in members if r["n"] == n]
        for r in members:
            r["mode"] = mode
    for members in result.values():
        base = members[0]
        for r in members:
            ratio = base["total"] / r["total"] if r["total"] > 0 else float("nan")
            if r["mode"] == "strong":
                r["speedup"] = ratio
                r["efficiency"] = ratio * base["ranks"] / r["ranks"]
            else:
                r["efficiency"] = ratio
                r["speedup"] = ratio * r["ranks"] / base["ranks"]
    return result


def phases_of(runs):
    """Phases in the order run.json lists them (the pipeline's), first seen first."""
    phases = []
    for r in runs:
        for p in r["times"]:
            if p not in phases:
                phases.append(p)
    return phases


def write_csv(path, runs, phases):
    fields = ["study", "method", "mode", "ranks", "grid", "n", "d", "k", "solver", "solver_asked"] + \
        [f"time_{p}_s" for p in phases] + \
        ["time_total_s", "speedup", "efficiency", "peak_memory_bytes_per_rank", "dir"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(fields)
        for r in sorted(runs, key=lambda r: (r["study"], r["method"], r["mode"], str(r["k"]), r["solver"], r["ranks"], r["n"])):
            w.writerow([r["study"], r["method"], r["mode"], r["ranks"], r["grid"], r["n"], r["d"], r["k"], r["solver"],
                        r["solver_asked"]] +
                       [f'{r["times"][p]:.6g}' if p in r["times"] else "" for p in phases] +
                       [f'{r["total"]:.6g}', f'{r["speedup"]:.4f}', f'{r["efficiency"]:.4f}', r["memory"], r["dir"]])


def make_figure(groups, phases):
    """The report's figure: time per phase and parallel efficiency, legends below the axes.

    Colour is the phase, marker and line style the group (study, method, k,
    solver, n or weak), so each legend has one entry per phase or per group
    instead of one per pair."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    fig, (ax_t, ax_e) = plt.subplots(1, 2, figsize=(12, 5.5))
    markers = "os^vD<>ph*"
    styles = ["-", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1))]
    studies = {key[0] for key in groups}
    colour = {p: f"C{i % 10}" for i, p in enumerate(phases)}
    colour["total"] = "k"
    for g, (key, members) in enumerate(sorted(groups.items())):
        study, method, k, solver, which = key
        label = (f"{os.path.basename(os.path.normpath(study))}: " if len(studies) > 1 else "") + \
            f"{method} k={k} {solver} {which if which != 'weak' else ''} ({members[0]['mode']})".replace("  ", " ")
        marker, style = markers[g % len(markers)], styles[g % len(styles)]
        ranks = [r["ranks"] for r in members]
        for phase in phases + ["total"]:
            times = [r["total"] if phase == "total" else r["times"].get(phase, float("nan")) for r in members]
            if not any(t > 0 for t in times):
                continue
            ax_t.plot(ranks, times, marker=marker, linestyle=style, color=colour[phase],
                      linewidth=2.5 if phase == "total" else 1.2)
        base = members[0]
        if members[0]["mode"] == "strong":
            ideal = [base["total"] * base["ranks"] / p for p in ranks]
        else:
            ideal = [base["total"] for _ in ranks]
        ax_t.plot(ranks, ideal, color="0.5", linestyle="--", linewidth=1)
        # Black: here too the marker and line style name the group, as in the time plot.
        ax_e.plot(ranks, [r["efficiency"] for r in members], marker=marker, linestyle=style, color="k",
                  label=label)
    ax_t.set_xscale("log", base=2)
    ax_t.set_yscale("log")
    ax_t.set_xlabel("MPI ranks")
    ax_t.set_ylabel("time (s, max over ranks)")
    ax_t.set_title("time per phase")
    ax_t.grid(True, which="both", alpha=0.3)
    ax_e.axhline(1.0, color="0.5", linestyle="--", linewidth=1)
    ax_e.set_xscale("log", base=2)
    ax_e.set_ylim(0, 1.2 * max(1.0, max(r["efficiency"] for m in groups.values() for r in m)))
    ax_e.set_xlabel("MPI ranks")
    ax_e.set_ylabel("parallel efficiency")
    ax_e.set_title("parallel efficiency (markers: groups)")
    ax_e.grid(True, which="both", alpha=0.3)
    ticks = sorted({r["ranks"] for m in groups.values() for r in m})
    for ax in (ax_t, ax_e):
        ax.set_xticks(ticks)
        ax.set_xticklabels([str(t) for t in ticks])
    # Below the axes, so no legend ever hides a point or a line.
    handles = [Line2D([], [], color=colour[p], linewidth=2.5 if p == "total" else 1.2, label=p)
               for p in phases + ["total"]]
    handles.append(Line2D([], [], color="0.5", linestyle="--", linewidth=1, label="ideal"))
    ax_t.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.14), fontsize=8,
                ncol=min(len(handles), 4), frameon=False)
    ax_e.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), fontsize=8, ncol=1, frameon=False)
    fig.suptitle("kembed scaling")
    fig.tight_layout()
    return fig


def plot(path, groups, phases):
    import matplotlib.pyplot as plt

    fig = make_figure(groups, phases)
    # bbox_inches="tight" keeps the legends below the axes inside the image.
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="+", metavar="DIR", help="directories searched for run.json")
    parser.add_argument("--output", "-o", help="where scaling.csv and scaling.png go (default: the first DIR)")
    parser.add_argument("--mode", choices=["auto", "strong", "weak"], default="auto")
    args = parser.parse_args()
    out = args.output or args.dirs[0]
    runs = find_runs(args.dirs)
    if not runs:
        sys.exit(f"report: error: no run.json under {', '.join(args.dirs)}")
    groups = assign_modes(runs, args.mode)
    phases = phases_of(runs)
    try:
        os.makedirs(out, exist_ok=True)  # with its parents: --output may name a new tree
    except OSError as e:
        sys.exit(f"report: error: cannot create the output directory '{out}': {e}")
    csv_path = os.path.join(out, "scaling.csv")
    write_csv(csv_path, runs, phases)
    print(f"report: {len(runs)} runs -> {csv_path}")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("report: error: the plot needs matplotlib (Debian: apt-get install python3-matplotlib); "
              f"{csv_path} was written", file=sys.stderr)
        return 3
    png_path = os.path.join(out, "scaling.png")
    plot(png_path, groups, phases)
    print(f"report: plot -> {png_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
