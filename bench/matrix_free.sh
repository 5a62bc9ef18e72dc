#!/usr/bin/env bash
# Kernel PCA with the kernel stored (--storage auto: its blocks on and below
# the diagonal) beside matrix-free (--storage none: recomputed from the points
# in every product), in one run: wall time of the fit, block products and
# recomputing passes, peak memory per rank (/usr/bin/time -v, the largest
# over the ranks) and the eigenvalues' largest relative distance between the
# two (issue 38).
#
#   bench/matrix_free.sh [--sizes "8000 16000"] [--only-free "24000"]
#                        [--nystrom "1000 4000"] [--limit 1G] [--d 64] [--k 10]
#                        [--ranks 2] [--dir DIR]
#
# Per matrix-free product: the measured time (the solve phase over its
# products) against its bound, the product of one block as `kembed plan kpca
# --storage none` estimates it in the same run from the rates it measures
# there (dgemm of the recomputed chunk's shape for the 2d Gram flops and the
# 4b product flops of each entry on or below the diagonal, the rbf map per
# entry): efficiency = bound / measured.
#
# For every n of --sizes, the approximate tier at the same n: Nystrom kernel
# PCA (--approx nystrom, uniform landmarks, seed 1) at each M of --nystrom,
# its time, peak memory and the eigenvalues' largest relative error against
# the exact (matrix-free) eigenvalues; "" skips it.
#
# Data: `kembed generate --dataset gaussian` (seed 1), rbf kernel with the
# default gamma, default solver (krylov) and --tol (1e-12). Sizes in
# --only-free run matrix-free only, under --max-memory-per-rank LIMIT, after
# `kembed plan kpca` shows that the stored kernel does not fit LIMIT.
# Scratch data go to DIR (default results/bench-matrix-free), replaced only
# when this script created it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kembed=${KEMBED:-$root/build/kembed}
sizes="8000 16000"; only_free=""; nystrom="1000 4000"; limit=1G; d=64; k=10; ranks=2
dir=$root/results/bench-matrix-free
while [ $# -gt 0 ]; do
  case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --only-free) only_free=$2; shift 2 ;;
    --nystrom) nystrom=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --d) d=$2; shift 2 ;;
    --k) k=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    *) echo "matrix_free.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
# shellcheck source=../scripts/lib.sh
source "$root/scripts/lib.sh"
[ -e "$dir/.bench-matrix-free" ] && rm -rf "$dir"
mkdir -p "$dir" && touch "$dir/.bench-matrix-free"

# One fit: prints "seconds products passes peak_MB eigenvalues(comma list)".
fit() {
  local n=$1 storage=$2 out=$dir/out-$1-$2; shift 2
  case $storage in
    nystrom*) set -- --approx nystrom --landmarks "${storage#nystrom}" --seed 1 "$@" ;;
    *) set -- --storage "$storage" "$@" ;;
  esac
  mpiexec --oversubscribe -n "$ranks" sh -c '/usr/bin/time -v -o "$0.$OMPI_COMM_WORLD_RANK" "$@"' \
    "$out.time" "$kembed" kpca -i "$dir/x$n.npy" -k "$k" -o "$out" -q "$@"
  python3 - "$out" "$ranks" <<'PY'
import json, sys, re
out, ranks = sys.argv[1], int(sys.argv[2])
r = json.load(open(out + "/run.json"))
peak = 0
for rank in range(ranks):
    text = open(f"{out}.time.{rank}").read()
    peak = max(peak, int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)))
products = r.get("krylov", {}).get("block_products", "-")
passes = r.get("kernel_storage_passes", products)
per_product = r["time_seconds"]["solve"] / products if products != "-" else 0
print(f'{r["time_seconds_total"]:.1f} {products} {passes} {peak / 1024:.0f} '
      + ",".join(repr(v) for v in r["eigenvalues"]) + f" {per_product:.3f}")
PY
}

differ() {  # largest relative difference of two comma lists
  python3 -c "import sys; a=[float(v) for v in sys.argv[1].split(',')]; b=[float(v) for v in sys.argv[2].split(',')]; print('%.1e' % max(abs(x-y)/abs(x) for x,y in zip(a,b)))" "$1" "$2"
}

# The bound of one matrix-free product at n, from kembed plan's estimate.
bound() {
  "$kembed" plan kpca --rows "$1" --cols "$d" -k "$k" --ranks "$ranks" --storage none |
    sed -n 's/.*matrix-free ([0-9]* products of \([0-9.e+-]*\) s.*/\1/p'
}
efficiency() { awk -v b="$1" -v m="$2" 'BEGIN { printf "%.3f / %.3f = %.0f%%", m, b, 100 * b / m }'; }

echo "kembed kpca, rbf, gaussian d = $d, k = $k, $ranks ranks ($(git -C "$root" rev-parse --short HEAD))"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(grep -c ^processor /proc/cpuinfo) cores; $(date -u '+%Y-%m-%d %H:%M UTC')"
printf '%8s %-8s %9s %9s %7s %14s %14s   %s\n' n storage "time (s)" products passes "peak MB/rank" "eig. rel. diff" "s per product: measured / bound = efficiency"
for n in $sizes $only_free; do
  "$kembed" generate --dataset gaussian --rows "$n" --cols "$d" --seed 1 -o "$dir/x$n.npy" -q
done
for n in $sizes; do
  read -r ts ps qs ms es _ < <(fit "$n" auto)
  read -r tn pn qn mn en xn < <(fit "$n" none)
  printf '%8s %-8s %9s %9s %7s %14s %14s\n' "$n" stored "$ts" "$ps" "$qs" "$ms" ""
  printf '%8s %-8s %9s %9s %7s %14s %14s   %s\n' "$n" none "$tn" "$pn" "$qn" "$mn" "$(differ "$es" "$en")" \
    "$(efficiency "$(bound "$n")" "$xn")"
  for m in $nystrom; do
    [ "$m" -lt "$n" ] || continue
    read -r ta _ _ ma ea _ < <(fit "$n" "nystrom$m")
    printf '%8s %-8s %9s %9s %7s %14s %14s\n' "$n" "nys. $m" "$ta" - - "$ma" "$(differ "$en" "$ea")"
  done
done
for n in $only_free; do
  "$kembed" plan kpca --rows "$n" --cols "$d" -k "$k" --ranks "$ranks" --solver krylov \
    --max-memory-per-rank "$limit" | grep -E "total|fits|does not fit" | sed 's/^/  stored: /'
  read -r tn pn qn mn en xn < <(fit "$n" auto --max-memory-per-rank "$limit")
  printf '%8s %-8s %9s %9s %7s %14s %14s   %s\n' "$n" "auto->none" "$tn" "$pn" "$qn" "$mn" "(limit $limit)" \
    "$(efficiency "$(bound "$n")" "$xn")"
done
