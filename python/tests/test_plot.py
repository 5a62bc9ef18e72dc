"""kembed-plot writes non-trivial pictures, coloured and labelled as asked."""
import os

import numpy as np
import pytest

import kembed
from kembed import plot
from conftest import circles



def run(args, ranks=2):
    kembed.Launcher(ranks, os.environ["KEMBED_LAUNCHER"]).run([str(a) for a in args])


def colours(png):
    import matplotlib.image as mpimg
    img = mpimg.imread(png)
    return img, len(np.unique((img[..., :3] * 255).astype(np.uint8).reshape(-1, 3), axis=0))


def test_kpca_pictures_with_labels(tmp_path):
    X, labels = circles(300)
    np.save(tmp_path / "X.npy", X)
    (tmp_path / "labels.txt").write_text("".join(f"ring{l}\n" for l in labels))
    run(["kpca", "--input", tmp_path / "X.npy", "--kernel", "rbf", "--gamma", 5, "-k", 2,
         "-o", tmp_path / "out", "--quiet"])
    # What the picture is for: the first component separates the two rings.
    z1 = kembed.load(tmp_path / "out").embedding_[:, 0]
    assert z1[labels == 0].max() < z1[labels == 1].min() or \
        z1[labels == 1].max() < z1[labels == 0].min()
    assert plot.main([str(tmp_path / "out"), "--color-by", str(tmp_path / "labels.txt")]) == 0
    out = tmp_path / "out-plots"
    for name in ("embedding.png", "spectrum.png"):
        assert (out / name).stat().st_size > 10_000
    img, n_colours = colours(out / "embedding.png")
    assert img.shape[0] > 400 and img.shape[1] > 400 and n_colours > 50
    # The result directory itself is left as kembed wrote it.
    assert not (tmp_path / "out" / "embedding.png").exists()
    with pytest.raises(SystemExit, match="299 labels for 300 points"):
        (tmp_path / "short.txt").write_text("".join(f"{l}\n" for l in labels[1:]))
        plot.main([str(tmp_path / "out"), "--color-by", str(tmp_path / "short.txt")])


def test_mds_of_named_points_with_density_and_negative_eigenvalues(tmp_path):
    rng = np.random.default_rng(5)
    n = 12
    names = [f"city{i}" for i in range(n)]
    P = rng.normal(size=(n, 3))
    with open(tmp_path / "P.csv", "w") as f:
        f.write("name,a,b,c\n")
        for name, row in zip(names, P):
            f.write(name + "," + ",".join(f"{v:.17g}" for v in row) + "\n")
    # Manhattan distances are not Euclidean: B has negative eigenvalues.
    run(["mds", "--input", tmp_path / "P.csv", "--id-column", "name", "--metric", "manhattan",
         "-k", 2, "--solver", "evd", "-o", tmp_path / "mds", "--quiet"], ranks=1)
    res = kembed.load(tmp_path / "mds")
    assert res.ids == names and res.spectrum_.min() < 0
    # density_above=5 forces the density shading on these 12 points.
    plot.main([str(tmp_path / "mds"), "--density-above", "5", "--output-dir",
               str(tmp_path / "pics")])
    for name in ("embedding.png", "spectrum.png"):
        assert (tmp_path / "pics" / name).stat().st_size > 10_000
