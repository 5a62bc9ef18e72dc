#!/usr/bin/env bash
# Times `kembed ca` per phase on generated count tables (Poisson with a
# low-rank row x column structure, fixed seed) beside single-node
# alternatives on the identical table: R's `ca` package (Debian r-cran-ca)
# when Rscript can load it, and numpy (the SVD of S, as R's ca computes it,
# and the eigen-decomposition of the smaller cross-product, kembed's route).
# Prints a table and writes it as CSV.
#
#   bench/ca.sh [--sizes "2000x500 20000x1000"] [--k 10] [--ranks 2]
#               [--single-max CELLS] [--out DIR]
#
# The single-node alternatives run on two BLAS threads (kembed ranks use one
# each); --single-max skips them above that many table cells.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kembed=${KEMBED:-$root/build/kembed}
sizes="2000x500 20000x1000"; k=10; ranks=2; single_max=100000000; out=$root/results/bench-ca
while [ $# -gt 0 ]; do
  case $1 in
    --sizes) sizes=$2; shift 2 ;; --k) k=$2; shift 2 ;; --ranks) ranks=$2; shift 2 ;;
    --single-max) single_max=$2; shift 2 ;; --out) out=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
py=/usr/bin/python3
mkdir -p "$out"
csv=$out/ca.csv
echo "rows,cols,k,tool,ranks,distribute_s,masses_s,residuals_s,cross_s,solve_s,total_s,max_rel_diff_inertias_vs_kembed" > "$csv"
have_r=0
command -v Rscript >/dev/null && Rscript -e 'library(ca)' >/dev/null 2>&1 && have_r=1
for size in $sizes; do
  rows=${size%x*}; cols=${size#*x}
  data=$out/poisson-$size.npy
  [ -f "$data" ] || $py - "$data" "$rows" "$cols" <<'PY'
import sys, numpy as np
path, n, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(19)
# Rate: row and column effects times a rank-5 interaction, so CA has structure.
a, b = rng.gamma(2.0, 1.0, n), rng.gamma(2.0, 1.0, d)
u, v = rng.normal(size=(n, 5)), rng.normal(size=(5, d))
rate = np.outer(a, b) * np.exp(0.3 * (u @ v) / np.sqrt(5))
np.save(path, rng.poisson(rate).astype(np.float64))
PY
  dir=$out/run-$size-$ranks
  mpirun --oversubscribe -np "$ranks" "$kembed" ca --input "$data" -k "$k" --drop-empty \
    --output-dir "$dir" --quiet
  $py - "$dir/run.json" "$rows" "$cols" "$k" "$ranks" >> "$csv" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); t = r["time_seconds"]
cross = t.get("cross_rows", 0) + t.get("cross_columns", 0)
print(f'{sys.argv[2]},{sys.argv[3]},{sys.argv[4]},kembed,{sys.argv[5]},{t.get("distribute",0):.3f},'
      f'{t.get("masses",0):.3f},{t.get("residuals",0):.3f},{cross:.3f},{t.get("solve",0):.3f},'
      f'{r["time_seconds_total"]:.3f},')
PY
  [ $((rows * cols)) -le "$single_max" ] || continue
  OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2 $py - "$data" "$dir/run.json" "$k" >> "$csv" <<'PY'
import json, sys, time, numpy as np
path, report, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
ref = np.array(json.load(open(report))["principal_inertias"])
n_ij = np.load(path)
n_ij = n_ij[n_ij.sum(1) > 0][:, n_ij.sum(0) > 0]
def residuals():
    p = n_ij / n_ij.sum(); r, c = p.sum(1), p.sum(0)
    return (p - np.outer(r, c)) / np.sqrt(np.outer(r, c))
for tool in ["numpy-svd", "numpy-eigh"]:
    t0 = time.perf_counter()
    s = residuals()
    if tool == "numpy-svd":
        lam = np.linalg.svd(s, compute_uv=False)[:k] ** 2
    else:
        a = s @ s.T if s.shape[0] <= s.shape[1] else s.T @ s
        lam = np.linalg.eigh(a)[0][::-1][:k]
    total = time.perf_counter() - t0
    diff = np.max(np.abs(lam - ref) / ref)
    print(f"{n_ij.shape[0]},{n_ij.shape[1]},{k},{tool},1,,,,,,{total:.3f},{diff:.1e}")
PY
  if [ $have_r = 1 ]; then
    OPENBLAS_NUM_THREADS=2 Rscript -e '
      args <- commandArgs(TRUE); library(ca)
      con <- pipe(paste0("/usr/bin/python3 -c \"import numpy as np,sys; np.savetxt(sys.stdout, np.load(\x27", args[1], "\x27), fmt=\x27%d\x27)\""))
      x <- as.matrix(read.table(con)); x <- x[rowSums(x) > 0, colSums(x) > 0]
      t0 <- Sys.time(); fit <- ca(x, nd = as.integer(args[2])); t <- as.numeric(Sys.time() - t0, units = "secs")
      cat(sprintf("%d,%d,%s,R-ca,1,,,,,,%.3f,\n", nrow(x), ncol(x), args[2], t))' "$data" "$k" >> "$csv"
  fi
done
column -s, -t < "$csv"
echo "(CSV: $csv)"
