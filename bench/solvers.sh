#!/usr/bin/env bash
# Times every phase and every solver of `kembed kpca` on the same generated
# data (standard normal, d = 64, rbf with gamma = 1/d), for a range of n, k
# and rank counts, in one run on one machine. Prints a table and writes it as
# CSV. Where Debian's python3-sklearn is installed it also times scikit-learn's
# KernelPCA (arpack, randomized, dense) on the identical data, with its BLAS on
# two threads (kembed ranks use one thread each).
#
#   bench/solvers.sh [--sizes "2000 4000"] [--ks "10 50"] [--ranks "1 2"]
#                    [--solvers "auto evd evr krylov elpa"] [--evd-max N] [--sklearn-max N]
#                    [--out DIR]
#
# evd and evr compute through an O(n^3) tridiagonal reduction; --evd-max skips
# them (and sklearn's dense solver) above that n so a sweep stays affordable.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kembed=${KEMBED:-$root/build/kembed}
sizes="2000 4000 8000 16000"; ks="10 50"; ranks="1 2"; solvers="auto evd evr krylov elpa"
evd_max=8000; sklearn_max=16000; out=$root/results/bench
while [ $# -gt 0 ]; do
  case $1 in
    --sizes) sizes=$2; shift 2 ;; --ks) ks=$2; shift 2 ;; --ranks) ranks=$2; shift 2 ;;
    --solvers) solvers=$2; shift 2 ;; --evd-max) evd_max=$2; shift 2 ;;
    --sklearn-max) sklearn_max=$2; shift 2 ;; --out) out=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
mkdir -p "$out"
csv=$out/solvers.csv
echo "n,k,solver,ranks,read_s,distribute_s,assemble_s,center_s,solve_s,block_products,total_s,max_residual,max_eig_rel_diff_vs_evd,solver_used" > "$csv"
py=/usr/bin/python3
for n in $sizes; do
  data=$out/gaussian-$n.npy
  [ -f "$data" ] || mpirun --oversubscribe -np 2 "$kembed" generate --dataset gaussian --rows "$n" --cols 64 --seed 1 --output "$data" --quiet
  for k in $ks; do
    for p in $ranks; do
      for s in $solvers; do
        if { [ "$s" = evd ] || [ "$s" = evr ]; } && [ "$n" -gt "$evd_max" ]; then continue; fi
        dir=$out/run-$n-$k-$p-$s
        mpirun --oversubscribe -np "$p" "$kembed" kpca --input "$data" --kernel rbf --components "$k" \
          --solver "$s" --output-dir "$dir" --quiet || { echo "failed: n=$n k=$k p=$p $s" >&2; continue; }
      done
      # One row per solver, eigenvalues compared with evd's where evd ran.
      $py - "$out" "$n" "$k" "$p" "$solvers" >> "$csv" <<'PY'
import json, sys, os
out, n, k, p, solvers = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5].split()
def load(s):
    path = os.path.join(out, f"run-{n}-{k}-{p}-{s}", "run.json")
    return json.load(open(path)) if os.path.exists(path) else None
ref = load("evd")
for s in solvers:
    r = load(s)
    if r is None: continue
    t = r["time_seconds"]
    diff = ""
    if ref is not None:
        diff = "%.1e" % max(abs(a - b) / abs(b) for a, b in zip(r["eigenvalues"], ref["eigenvalues"]))
    # "read" includes allocating the kernel block (zeroed before issue 18, now left to assembly).
    products = r.get("krylov", {}).get("block_products", "")
    print(f'{n},{k},{s},{p},{t.get("read",0):.3f},{t.get("distribute",0):.3f},{t.get("assemble",0):.3f},'
          f'{t.get("center",0):.3f},{t.get("solve",0):.3f},{products},'
          f'{r["time_seconds_total"]:.3f},{max(r["relative_residuals"]):.1e},{diff},{r.get("solver_used", s)}')
PY
    done
  done
    if [ "$n" -le "$sklearn_max" ] && $py -c "import sklearn" 2>/dev/null; then
      for k in $ks; do
        # scikit-learn as users run it: its BLAS on both cores.
        OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2 $py - "$data" "$k" "$n" "$evd_max" >> "$csv" <<'PY'
import sys, time, numpy as np
from sklearn.decomposition import KernelPCA
path, k, n, evd_max = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
x = np.load(path)
for solver in ["arpack", "randomized"] + (["dense"] if n <= evd_max else []):
    t0 = time.perf_counter()
    KernelPCA(n_components=k, kernel="rbf", gamma=1.0 / x.shape[1], eigen_solver=solver,
              random_state=0).fit_transform(x)
    print(f"{n},{k},sklearn-{solver},1,,,,,,,{time.perf_counter() - t0:.3f},,,")
PY
      done
    fi
done
column -s, -t < "$csv"
echo "table written to $csv"
