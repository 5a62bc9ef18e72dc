#!/usr/bin/env bash
# PCA of a sparse CSR matrix with implicit centering (issue 39): kembed pca on
# a scipy .npz beside the same computation in scipy, one run each, on the
# same file.
#
#   bench/sparse.sh [--rows 1000000] [--cols 20000] [--density 0.01] [--k 50]
#                   [--ranks 2] [--dir DIR] [--no-peer]
#
# Data: a counts-like CSR matrix (each row has density x cols entries, one
# column drawn in each stratum of 1/density columns, values 1 + Poisson(1)),
# written by numpy/scipy (Debian python3-scipy, /usr/bin/python3) with
# scipy.sparse.save_npz(compressed=False), seed 1.
# kembed: `kembed pca -i X.npz -k K --solver krylov` on --ranks ranks; time is
# the wall clock of the whole mpirun, peak memory the largest resident size
# over the ranks (/usr/bin/time -v), beside the rank's share of the CSR arrays
# (12 bytes per stored entry: int32 column, float64 value).
# Peer: scikit-learn 1.4's PCA(svd_solver="arpack") on a sparse matrix is
# ARPACK (scipy.sparse.linalg.svds) on the implicitly centered operator;
# Debian's scikit-learn (1.2.1) refuses sparse input to PCA, so the peer runs
# that computation with scipy directly: svds(LinearOperator(X - 1 mu^T), k),
# loading the file included, BLAS on --ranks threads.
# Agreement: the largest relative difference of the k explained variances.
# Scratch data go to DIR (default results/bench-sparse), replaced only when
# this script created it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kembed=${KEMBED:-$root/build/kembed}
rows=1000000; cols=20000; density=0.01; k=50; ranks=2; peer=1; dir=$root/results/bench-sparse
while [ $# -gt 0 ]; do
  case $1 in
    --rows) rows=$2; shift 2 ;; --cols) cols=$2; shift 2 ;; --density) density=$2; shift 2 ;;
    --k) k=$2; shift 2 ;; --ranks) ranks=$2; shift 2 ;; --dir) dir=$2; shift 2 ;;
    --no-peer) peer=0; shift ;;
    *) echo "sparse.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$kembed" ] || { echo "no kembed binary at $kembed (build it or set KEMBED)" >&2; exit 2; }
py=/usr/bin/python3
$py -c 'import scipy.sparse' 2>/dev/null ||
  { echo "needs Debian's python3-scipy (apt-get install python3-scipy)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
# shellcheck source=../scripts/lib.sh
source "$root/scripts/lib.sh"
if [ -e "$dir" ] && [ ! -f "$dir/.kembed-bench" ]; then
  echo "$dir exists and is not a scratch directory of this benchmark: give another --dir" >&2
  exit 2
fi
mkdir -p "$dir"; : > "$dir/.kembed-bench"
data=$dir/X-$rows-$cols-$density.npz
if [ ! -f "$data" ]; then
  $py - "$data" "$rows" "$cols" "$density" <<'PY'
import sys
import numpy as np, scipy.sparse as sp
path, n, d, density = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
per_row = max(1, int(round(d * density)))
stride = d // per_row
rng = np.random.default_rng(1)
indices = np.empty(n * per_row, dtype=np.int32)
data = np.empty(n * per_row, dtype=np.float64)
chunk = 100000
for start in range(0, n, chunk):
    m = min(chunk, n - start)
    cols = np.arange(per_row, dtype=np.int32) * stride + rng.integers(0, stride, (m, per_row), dtype=np.int32)
    indices[start * per_row:(start + m) * per_row] = cols.ravel()
    data[start * per_row:(start + m) * per_row] = 1.0 + rng.poisson(1.0, m * per_row)
indptr = np.arange(0, n * per_row + 1, per_row, dtype=np.int64)
sp.save_npz(path, sp.csr_matrix((data, indices, indptr), shape=(n, d)), compressed=False)
PY
fi
nnz=$($py -c "import numpy as np, sys; z = np.load(sys.argv[1]); print(z['indices'].size)" "$data")
cat "$data" > /dev/null  # page cache warm for both

out=$dir/kembed
rm -rf "$out"
start=$(date +%s.%N)
mpiexec --oversubscribe -n "$ranks" sh -c '/usr/bin/time -v -o "$0.$OMPI_COMM_WORLD_RANK" "$@"' \
  "$out.time" "$kembed" pca -i "$data" -k "$k" --solver krylov --output-format npy -o "$out" -q
kembed_s=$(echo "$(date +%s.%N) - $start" | bc)
peak_mb=$(for r in $(seq 0 $((ranks - 1))); do
  sed -n 's/.*Maximum resident set size (kbytes): //p' "$out.time.$r"; done | sort -n | tail -1)
peak_mb=$((peak_mb / 1024))

peer_s=-; peer_mb=-; agree=-
if [ "$peer" = 1 ]; then
  read -r peer_s peer_mb agree < <(OPENBLAS_NUM_THREADS=$ranks OMP_NUM_THREADS=$ranks \
    $py - "$data" "$k" "$out/run.json" <<'PY'
import json, resource, sys, time
import numpy as np, scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, svds
path, k, run = sys.argv[1], int(sys.argv[2]), sys.argv[3]
t = time.time()
X = sp.load_npz(path).tocsr()
n, d = X.shape
mu = np.asarray(X.mean(axis=0)).ravel()
# X - 1 mu^T as an operator (what scikit-learn 1.4 does for sparse PCA).
op = LinearOperator((n, d), dtype=np.float64,
                    matvec=lambda v: X @ v - mu @ v, rmatvec=lambda u: X.T @ u - mu * u.sum(),
                    matmat=lambda V: X @ V - np.outer(np.ones(n), mu @ V),
                    rmatmat=lambda U: X.T @ U - np.outer(mu, U.sum(axis=0)))
s = svds(op, k=k, solver="arpack", random_state=0, return_singular_vectors="u")[1]
elapsed = time.time() - t
ev = np.sort(s ** 2 / (n - 1))[::-1]
ours = np.array(json.load(open(run))["eigenvalues"])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{elapsed:.1f} {peak:.0f} {np.max(np.abs(ours - ev) / ev):.1e}")
PY
)
fi
share_mb=$(echo "$nnz * 12 / $ranks / 1048576" | bc)
echo "sparse PCA, k = $k, $rows x $cols, $nnz stored entries, $ranks ranks"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(grep -c ^processor /proc/cpuinfo) cores; commit $(git -C "$root" rev-parse --short HEAD); $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "| | time (s) | peak MB per rank | CSR share MB per rank | eigenvalues vs kembed (max rel.) |"
echo "|---|---|---|---|---|"
echo "| kembed pca (krylov, $ranks ranks) | $kembed_s | $peak_mb | $share_mb | |"
echo "| scipy svds(arpack) on X - 1 mu^T (scikit-learn 1.4's sparse PCA; $ranks BLAS threads) | $peer_s | $peer_mb | | $agree |"
