#!/usr/bin/env bash
# Isomap and Laplacian eigenmaps end to end with their phases, beside
# scikit-learn's Isomap(n_neighbors=K, eigen_solver='arpack') and
# SpectralEmbedding(affinity='rbf') on the same file (issue 15), and the knn
# affinity, kembed spectral --affinity knn (sparse rows, LOBPCG with the
# graph's multigrid) beside SpectralEmbedding(affinity='nearest_neighbors',
# n_neighbors=K) (issue 42), and landmark Isomap (--approx landmark
# --landmarks M, issue 40; scikit-learn has none: its embedding is compared
# with exact kembed Isomap's by Procrustes, rotation and shift, as
# ||Y_landmark Q + c - Y_exact||_F / ||Y_exact - mean||_F, when both ran):
# a swiss roll (kembed generate, d = 3), K = 10,
# k = 2, one run. Embeddings are compared up to the sign and scale of each
# column (max |difference| / max |entry|); each kembed run's time and peak
# memory (one rank, /usr/bin/time) are kept in its .time file.
#
#   bench/manifold.sh [--rows N] [--ranks P] [--neighbors K] [--landmarks M]
#                     [--methods "isomap spectral knn landmark"] [--no-sklearn] [--out DIR]
#                     [--max-memory-per-rank BYTES]
# --max-memory-per-rank goes to the landmark run: with 2GB at n = 10^6 and
# M = 1000 it recomputes the geodesics (stored, they need about 4.6 GB per
# rank on 2 ranks; kembed plan isomap --approx landmark says which).
# Issue 40's targets, for example:
#   bench/manifold.sh --rows 40000 --methods "isomap landmark" --no-sklearn
#   bench/manifold.sh --rows 1000000 --methods landmark --no-sklearn
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kembed=${KEMBED:-$root/build/kembed}
rows=16000; ranks=2; neighbors=10; landmarks=1000; sklearn=1; out=$root/results/bench-manifold
memory=()
methods="isomap spectral knn"
while [ $# -gt 0 ]; do
  case $1 in
    --rows) rows=$2; shift 2 ;; --ranks) ranks=$2; shift 2 ;; --neighbors) neighbors=$2; shift 2 ;;
    --landmarks) landmarks=$2; shift 2 ;;
    --max-memory-per-rank) memory=(--max-memory-per-rank "$2"); shift 2 ;;
    --no-sklearn) sklearn=0; shift ;; --out) out=$2; shift 2 ;; --methods) methods=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
mkdir -p "$out"
data=$out/swissroll-$rows.npy
[ -f "$data" ] || mpirun --oversubscribe -np "$ranks" "$kembed" generate --dataset swissroll \
  --rows "$rows" --cols 3 --seed 1 --output "$data" --quiet
run() {  # name, kembed arguments...
  local name=$1; shift
  /usr/bin/time -f "%e s, %M KB max RSS (one rank)" -o "$out/$name.time" \
    mpirun --oversubscribe -np "$ranks" "$kembed" "$@" --input "$data" -k 2 --output-dir "$out/$name" --quiet
}
want() { case " $methods " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
want isomap && run isomap isomap --neighbors "$neighbors"
want spectral && run spectral spectral --affinity rbf
want knn && run knn spectral --affinity knn --neighbors "$neighbors"
want landmark && run landmark isomap --neighbors "$neighbors" --approx landmark --landmarks "$landmarks" \
  ${memory[@]+"${memory[@]}"}
py=/usr/bin/python3
if [ "$sklearn" = 1 ] && $py -c "import sklearn" 2>/dev/null; then
  # scikit-learn as users run it: its BLAS on both cores.
  OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2 $py - "$data" "$neighbors" "$out" "$methods" <<'PY'
import sys, time, numpy as np
from sklearn.manifold import Isomap, SpectralEmbedding
path, k_nn, out, methods = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split()
x = np.load(path)
fits = {
    "isomap": lambda: Isomap(n_neighbors=k_nn, n_components=2, eigen_solver="arpack"),
    "spectral": lambda: SpectralEmbedding(n_components=2, affinity="rbf", random_state=0),
    "knn": lambda: SpectralEmbedding(n_components=2, affinity="nearest_neighbors",
                                     n_neighbors=k_nn, random_state=0),
}
for m in [m for m in methods if m in fits]:
    t0 = time.perf_counter()
    y = fits[m]().fit_transform(x)
    np.save(f"{out}/sklearn-{m}.npy", y)
    open(f"{out}/sklearn-{m}.time", "w").write("%.2f" % (time.perf_counter() - t0))
PY
fi
$py - "$out" "$rows" "$ranks" "$methods" <<'PY'
import json, os, sys, numpy as np
out, n, p, methods = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
print(f"n = {n}, d = 3, K = 10, k = 2, kembed on {p} ranks")
print("| method | kembed total s | kembed phases s | products | peak RSS one rank | scikit-learn s | max abs diff / max abs (up to sign and scale) |")
print("|---|---|---|---|---|---|---|")
for m in methods:
    r = json.load(open(f"{out}/{m}/run.json"))
    phases = ", ".join(f"{k} {v:.2f}" for k, v in r["time_seconds"].items() if v >= 0.01)
    y = np.loadtxt(f"{out}/{m}/embedding.csv", delimiter=",", skiprows=1)
    products = r.get("krylov", r.get("lobpcg", {})).get("block_products", "-")
    if "lobpcg" in r:
        products = f"{products} ({r['lobpcg']['iterations']} lobpcg iterations)"
    rss = open(f"{out}/{m}.time").read().split(",")[-1].strip().split(" max")[0]
    sk, diff = "-", "-"
    if m == "landmark" and "isomap" in methods:
        e = np.loadtxt(f"{out}/isomap/embedding.csv", delimiter=",", skiprows=1)
        e = e - e.mean(axis=0)
        a = y - y.mean(axis=0)
        u, _, vt = np.linalg.svd(a.T @ e)
        diff = "%.1e (Procrustes vs exact)" % (np.linalg.norm(a @ (u @ vt) - e) / np.linalg.norm(e))
    elif os.path.exists(f"{out}/sklearn-{m}.npy"):
        s = np.load(f"{out}/sklearn-{m}.npy")
        sk = open(f"{out}/sklearn-{m}.time").read()
        s = s * ((s * y).sum(axis=0) / (s * s).sum(axis=0))  # sign and scale per column
        diff = "%.1e" % (np.abs(s - y).max() / np.abs(s).max())
    name = {"knn": "spectral (knn)", "spectral": "spectral (rbf)",
            "landmark": "isomap --approx landmark"}.get(m, m)
    print(f"| {name} | {r['time_seconds_total']:.2f} | {phases} | {products} | {rss} | {sk} | {diff} |")
PY
