"""Pictures of a kembed result: embedding.png and spectrum.png.

    kembed-plot RESULT_DIR [--color-by LABELS] [--output-dir DIR (default RESULT_DIR-plots)]
    python3 -m kembed.plot RESULT_DIR ...

embedding.png: the first two components (one component: against the row
number), coloured by ``--color-by`` (a file with one label per row, a
``FILE:COLUMN`` of a CSV with a header, or a column of the run's CSV input),
shaded by point density when n is large, and labelled with the row ids when
embedding.csv has them (``--id-column``) and n is small.
spectrum.png: the eigenvalues and their cumulative explained variance; for
MDS with the whole spectrum (spectrum.csv), the negative eigenvalues too.
Needs matplotlib; kembed itself does not.
"""
import argparse
import csv
import os
import sys

import numpy as np

from .results import load


def _read_labels(spec, result, n):
    path, column = spec, None
    if not os.path.isfile(path) and ":" in spec:
        path, column = spec.rsplit(":", 1)
    if not os.path.isfile(path):
        # A column of the CSV the run read.
        source = (result.report.get("input") or {}).get("path")
        if not source or not os.path.isfile(source):
            raise SystemExit(f"kembed-plot: --color-by {spec!r}: no such file, and the run's "
                             f"input is not a readable file to take a column from")
        path, column = source, spec
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r]
    if column is not None:
        header = rows[0]
        if column not in header:
            raise SystemExit(f"kembed-plot: {path}: no column {column!r} (columns: "
                             f"{', '.join(header)})")
        j = header.index(column)
        labels = [r[j] for r in rows[1:]]
    else:
        labels = [r[-1] for r in rows]
        if len(labels) == n + 1:  # a header line
            labels = labels[1:]
    if len(labels) != n:
        raise SystemExit(f"kembed-plot: {path}: {len(labels)} labels for {n} points")
    return labels


def plot_embedding(result, path, labels=None, density_above=5000, label_max=200, title=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    Z = result.embedding_
    n, k = Z.shape
    x, y = (Z[:, 0], Z[:, 1]) if k >= 2 else (np.arange(n), Z[:, 0])
    fig, ax = plt.subplots(figsize=(6.4, 5.6), dpi=120)
    size = max(2.0, min(30.0, 3000.0 / max(n, 1)))
    if n > density_above:
        # Too many points to see: shade by density, labels (if any) drawn faintly on top.
        hb = ax.hexbin(x, y, gridsize=80, bins="log", cmap="Greys", mincnt=1)
        fig.colorbar(hb, ax=ax, label="points per cell (log)")
        size, alpha = 1.0, 0.15
    else:
        alpha = 0.8
    if labels is not None:
        classes = sorted(set(labels), key=_natural)
        cmap = plt.get_cmap("tab10" if len(classes) <= 10 else "viridis")
        for i, c in enumerate(classes):
            mask = np.array([lab == c for lab in labels])
            color = cmap(i if len(classes) <= 10 else i / max(len(classes) - 1, 1))
            ax.scatter(x[mask], y[mask], s=size, alpha=alpha, color=color, label=str(c),
                       linewidths=0)
        if len(classes) <= 20:
            ax.legend(title="label", markerscale=max(1.0, 20.0 / size) ** 0.5, fontsize=8)
    elif n <= density_above:
        ax.scatter(x, y, s=size, alpha=alpha, color="tab:blue", linewidths=0)
    ids = result.ids
    if ids is not None and n <= label_max:
        for xi, yi, name in zip(x, y, ids):
            ax.annotate(str(name if not isinstance(name, list) else " ".join(name)), (xi, yi),
                        xytext=(3, 3), textcoords="offset points", fontsize=7)
    ratio = result.explained_variance_ratio_
    names = [f"component {j + 1}" for j in range(2)]
    if ratio is not None:
        names = [f"{nm} ({100 * r:.1f}%)" for nm, r in zip(names, ratio[:2])]
    ax.set_xlabel(names[0] if k >= 2 else "row")
    ax.set_ylabel(names[1] if k >= 2 else names[0])
    if result.method == "mds":
        ax.set_aspect("equal", adjustable="datalim")
    ax.set_title(title or f"kembed {result.method or ''}: n = {n}")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def plot_spectrum(result, path, title=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kept = result.eigenvalues_
    spectrum = result.spectrum_ if result.spectrum_ is not None else kept
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    idx = np.arange(1, len(spectrum) + 1)
    colors = ["tab:blue" if j < len(kept) else ("tab:red" if v < 0 else "lightsteelblue")
              for j, v in enumerate(spectrum)]
    ax.bar(idx, spectrum, color=colors, width=0.8)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xlabel("eigenvalue index")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_ylabel("eigenvalue")
    negative = spectrum[spectrum < 0]
    if len(negative):
        ax.text(0.98, 0.95, f"{len(negative)} negative eigenvalues (red), most negative "
                f"{negative.min():.3g}: not Euclidean", transform=ax.transAxes, ha="right",
                va="top", fontsize=8, color="tab:red")
    ratio = result.explained_variance_ratio_
    if ratio is not None:
        ax2 = ax.twinx()
        ax2.plot(np.arange(1, len(ratio) + 1), np.cumsum(ratio), "o-", color="tab:orange",
                 markersize=3)
        ax2.set_ylim(0, 1.05)
        ax2.set_ylabel("cumulative explained variance ratio", color="tab:orange")
    ax.set_title(title or f"kembed {result.method or ''}: spectrum "
                 f"({len(kept)} kept{', all n shown' if result.spectrum_ is not None else ''})")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _natural(value):
    try:
        return (0, float(value), "")
    except ValueError:
        return (1, 0.0, value)


def main(argv=None):
    p = argparse.ArgumentParser(prog="kembed-plot", description=__doc__.split("\n\n")[0])
    p.add_argument("result_dir", help="a kembed --output-dir")
    p.add_argument("--color-by", help="labels: FILE (one per row), FILE:COLUMN, or a column "
                   "of the run's CSV input")
    p.add_argument("--output-dir", help="where to write the pictures (default: RESULT_DIR-plots; "
                   "not RESULT_DIR itself, which kembed would then no longer replace)")
    p.add_argument("--density-above", type=int, default=5000,
                   help="shade by point density above this many points (5000)")
    p.add_argument("--label-max", type=int, default=200,
                   help="write row ids next to the points up to this many points (200)")
    p.add_argument("--title", help="title of embedding.png")
    args = p.parse_args(argv)
    result = load(args.result_dir)
    if result.embedding_ is None:
        raise SystemExit(f"kembed-plot: {args.result_dir}: no embedding.csv")
    out = args.output_dir or os.path.normpath(args.result_dir) + "-plots"
    os.makedirs(out, exist_ok=True)
    labels = _read_labels(args.color_by, result, len(result.embedding_)) if args.color_by else None
    emb_png, spec_png = os.path.join(out, "embedding.png"), os.path.join(out, "spectrum.png")
    plot_embedding(result, emb_png, labels, args.density_above, args.label_max, args.title)
    written = [emb_png]
    if result.eigenvalues_ is not None:
        plot_spectrum(result, spec_png)
        written.append(spec_png)
    for w in written:
        print(w)
    return 0


if __name__ == "__main__":
    sys.exit(main())
