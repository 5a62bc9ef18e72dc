#!/usr/bin/env bash
# Kernel PCA with the kernel stored in single precision (--precision single)
# beside double, in one run: time per phase, peak memory of the busiest rank
# (run.json), block products, and the eigenvalues' and embedding's distance
# from the double run on the same data (issue 18, item 4).
#
#   bench/single.sh [--sizes "16000 32000"] [--only-single "56000"] [--d 64]
#                   [--k 10] [--ranks 2] [--sklearn-max N] [--tols "1e-6"] [--dir DIR]
#
# With --sklearn-max N, scikit-learn's KernelPCA (Debian python3-sklearn,
# /usr/bin/python3, both cores) is timed on the same data for sizes up to N,
# with eigen_solver arpack and randomized; its eigenvalues are compared with
# kembed's double run.
#
# Data: `kembed generate --dataset gaussian` (seed 1), rbf kernel with the
# default gamma, default solver (auto: krylov), default --tol (1e-12 in
# double, 1e-6 in single). Sizes in --only-single run in single precision
# only (where double does not fit). Each --tols T adds a double run with
# --tol T at every size of --sizes, compared with the default double run (what
# a user who needs only that residual pays, and how far its eigenvalues and
# embedding are from the default's). Every size of --sizes also runs double
# with --storage full (the whole kernel, where the default keeps the blocks
# on and below the diagonal). Scratch data go to DIR (default
# results/bench-single), replaced only when this script created it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kembed=${KEMBED:-$root/build/kembed}
sizes="16000 32000"; only_single=""; d=64; k=10; ranks=2; sklearn_max=0; tols=""
dir=$root/results/bench-single
while [ $# -gt 0 ]; do
  case $1 in
    --sizes) sizes=$2; shift 2 ;; --only-single) only_single=$2; shift 2 ;;
    --d) d=$2; shift 2 ;; --k) k=$2; shift 2 ;; --ranks) ranks=$2; shift 2 ;;
    --sklearn-max) sklearn_max=$2; shift 2 ;; --dir) dir=$2; shift 2 ;;
    --tols) tols=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$kembed" ] || { echo "no kembed binary at $kembed (build it or set KEMBED)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1

if [ -e "$dir" ] && [ ! -f "$dir/.kembed-bench" ]; then
  echo "$dir exists and is not a scratch directory of this benchmark: give another --dir" >&2
  exit 2
fi
rm -rf "$dir"; mkdir -p "$dir"; : > "$dir/.kembed-bench"

run() {  # n precision [tol] [storage]
  local name=$2${3:+-tol$3}${4:+-$4}
  mpirun --oversubscribe -np "$ranks" "$kembed" generate --dataset gaussian --rows "$1" \
    --cols "$d" --seed 1 --output "$dir/X$1-$2.npy" --quiet
  start=$(date +%s.%N)
  mpirun --oversubscribe -np "$ranks" "$kembed" kpca --input "$dir/X$1-$2.npy" -k "$k" \
    --precision "$2" ${3:+--tol "$3"} ${4:+--storage "$4"} --output-format npy --output-dir "$dir/out-$1-$name" --quiet
  echo "$(date +%s.%N) - $start" | bc > "$dir/out-$1-$name/wall"
  if [ "$name" = double ] && [ "$1" -le "$sklearn_max" ]; then
    OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2 /usr/bin/python3 - "$dir/X$1-$2.npy" "$k" \
      > "$dir/sklearn-$1.json" <<'PY'
import json, sys, time
import numpy as np
from sklearn.decomposition import KernelPCA
x, k = np.load(sys.argv[1]), int(sys.argv[2])
out = {}
for solver in ("arpack", "randomized"):
    t = time.perf_counter()
    kp = KernelPCA(n_components=k, kernel="rbf", eigen_solver=solver, random_state=0).fit(x)
    out[solver] = time.perf_counter() - t
    out[solver + "_eigenvalues"] = kp.eigenvalues_.tolist()
json.dump(out, sys.stdout)
PY
  fi
  rm -f "$dir/X$1-$2.npy" "$dir/out-$1-$name/model/X.npy"
}
for n in $sizes; do
  run "$n" double; run "$n" single; run "$n" double "" full
  for t in $tols; do run "$n" double "$t"; done
done
for n in $only_single; do run "$n" single; done

core=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("openblas_core", "?"))' \
  "$(ls -d "$dir"/out-*/ | head -1)run.json")
echo "kernel PCA, rbf, gaussian d = $d, k = $k, $ranks ranks; $(date -u +%Y-%m-%d), $(uname -n), $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'), OpenBLAS core $core"
/usr/bin/python3 - "$dir" "$sizes $only_single" "$tols" <<'EOF'
import json, os, sys
import numpy as np
directory, sizes, tols = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
print("| n | precision | wall s | total s | assemble | center | solve | residual | products | "
      "peak MB/rank | max rel. eigenvalue diff | max embedding diff / max |z| |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
sk_rows = []
for n in sizes:
    double = None
    for precision in ["double", "single", "double-full"] + [f"double-tol{t}" for t in tols]:
        out = f"{directory}/out-{n}-{precision}"
        if not os.path.exists(out + "/run.json"):
            continue
        r = json.load(open(out + "/run.json"))
        z = np.load(out + "/embedding.npy")
        ev = np.array(r["eigenvalues"])
        diff = emb = "-"
        if precision == "double":
            double = (ev, z)
        elif double is not None:
            diff = f"{np.max(np.abs(ev - double[0]) / double[0]):.1e}"
            emb = f"{np.max(np.abs(z - double[1])) / np.max(np.abs(double[1])):.1e}"
        t = r["time_seconds"]
        wall = float(open(out + "/wall").read())
        if precision == "double" and os.path.exists(f"{directory}/sklearn-{n}.json"):
            sk = json.load(open(f"{directory}/sklearn-{n}.json"))
            for solver in ("arpack", "randomized"):
                err = np.max(np.abs(np.array(sk[solver + "_eigenvalues"]) - ev) / ev)
                sk_rows.append(f"| {n} | scikit-learn {solver} | {sk[solver]:.2f} | "
                               f"{err:.1e} vs kembed double |")
        label = precision.replace("-tol", ", --tol ").replace("-full", ", --storage full")
        print(f"| {n} | {label} | {wall:.2f} | {r['time_seconds_total']:.2f} | {t.get('assemble', 0):.2f} | "
              f"{t.get('center', 0):.2f} | {t.get('solve', 0):.2f} | {t.get('residual', 0):.2f} | "
              f"{r['krylov']['block_products']} | "
              f"{r['peak_memory_bytes_per_rank_max'] / 1e6:.0f} | {diff} | {emb} |")
if sk_rows:
    print()
    print("| n | scikit-learn KernelPCA (same data, 2 threads) | wall s | max rel. eigenvalue diff |")
    print("|---|---|---|---|")
    print("\n".join(sk_rows))
EOF
