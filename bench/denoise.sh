#!/usr/bin/env bash
# Denoising with kernel PCA pre-images, end to end with the kembed binary:
# noisy points on the unit circle (Gaussian noise sigma per coordinate) are
# projected onto the first C of K components of an RBF kernel PCA fitted on
# other noisy points of the same circle, reconstructed with each pre-image
# method, and compared with the clean points. Prints a table.
#
#   bench/denoise.sh [--ranks P] [--sigma S] [--gamma G] [--k K] [--c C] [--out DIR]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kembed=${KEMBED:-$root/build/kembed}
ranks=2; sigma=0.15; gamma=2; k=8; c=4; out=$root/results/denoise
while [ $# -gt 0 ]; do
  case $1 in
    --ranks) ranks=$2; shift 2 ;; --sigma) sigma=$2; shift 2 ;; --gamma) gamma=$2; shift 2 ;;
    --k) k=$2; shift 2 ;; --c) c=$2; shift 2 ;; --out) out=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
mkdir -p "$out"
run() { mpirun --oversubscribe -np "$ranks" "$kembed" "$@" --quiet; }

# Points on the circle with Box-Muller noise; awk's generator, fixed seeds.
circle() {  # circle N SEED SIGMA FILE_NOISY [FILE_CLEAN]
  awk -v n="$1" -v seed="$2" -v s="$3" -v noisy="$4" -v clean="${5:-/dev/null}" 'BEGIN {
    srand(seed); pi = atan2(0, -1); print "x,y" > noisy; print "x,y" > clean
    for (i = 0; i < n; i++) {
      t = 2 * pi * rand(); cx = cos(t); cy = sin(t)
      r = sqrt(-2 * log(1 - rand())); a = 2 * pi * rand()
      printf "%.17g,%.17g\n", cx + s * r * cos(a), cy + s * r * sin(a) > noisy
      printf "%.17g,%.17g\n", cx, cy > clean
    } }'
}
circle 400 1 "$sigma" "$out/train.csv"
circle 100 2 "$sigma" "$out/noisy.csv" "$out/clean.csv"
run kpca --input "$out/train.csv" --kernel rbf --gamma "$gamma" --components "$k" \
  --fit-inverse --alpha 0.1 --output-dir "$out/fit"

# Mean squared distance between two CSV files of points (header skipped).
mse() { paste -d, "$1" "$2" | awk -F, 'NR > 1 { s += ($1-$3)^2 + ($2-$4)^2; n++ } END { printf "%.4f", s / n }'; }
base=$(mse "$out/noisy.csv" "$out/clean.csv")
printf "%-12s %10s %10s %8s %10s\n" method components mse ratio seconds
printf "%-12s %10s %10s %8s %10s\n" noisy - "$base" 1 -
for method in nearest fixed-point ridge; do
  comps=$c; extra=(--components "$c")
  [ "$method" = ridge ] && { comps=$k; extra=(); }
  start=$(date +%s.%N)
  run preimage --model "$out/fit/model" --input "$out/noisy.csv" --method "$method" \
    "${extra[@]}" --output-dir "$out/$method"
  seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  m=$(mse "$out/$method/preimages.csv" "$out/clean.csv")
  printf "%-12s %10s %10s %8.3f %10s\n" "$method" "$comps" "$m" "$(awk -v a="$m" -v b="$base" 'BEGIN { print a / b }')" "$seconds"
done
