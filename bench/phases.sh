#!/usr/bin/env bash
# Every phase of a kernel PCA fit (allocation, assembly, centering, the
# krylov solver's block product K X and the solve) beside its bound: flops at
# the square dgemm rate and bytes at the streaming rate, both measured by
# bench/phases.cpp in the same run, for each rank count; prints the tables and
# writes them as one CSV. The block product is timed with pdgemm (as the
# solver did before issue 18) and with BlockProduct, on the whole kernel and on
# its blocks on and below the diagonal (lower-block storage), for each width
# of --widths; the solve for each block width of --krylov-blocks with each.
#
#   bench/phases.sh [--n "16000"] [--d "64 256"] [--ranks "1 2"] [--kernel rbf]
#                   [--repeat 3] [--widths "24 48"] [--k 10] [--krylov-blocks "24"]
#                   [--out DIR]
#
# One BLAS thread per rank (OPENBLAS_NUM_THREADS=1), as kembed runs; with one
# rank, the other core stays idle, so the one-rank figures are one core's.
# Memory: the local kernel block is n^2 / ranks doubles (2 GB at n = 16000 on
# one rank), twice while allocation is measured, and half again for the
# lower-block copy. Run it on a quiet machine: other jobs lower both the reference
# rates and the phase rates, not by the same factor.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bench=${KEMBED_BENCH_PHASES:-$root/build/bench/kembed_bench_phases}
sizes="16000"; dims="64 256"; ranks="1 2"; kernel=rbf; repeat=3; out=$root/results/bench
widths="24 48"; k=10; blocks="24"
while [ $# -gt 0 ]; do
  case $1 in
    --n) sizes=$2; shift 2 ;; --d) dims=$2; shift 2 ;; --ranks) ranks=$2; shift 2 ;;
    --kernel) kernel=$2; shift 2 ;; --repeat) repeat=$2; shift 2 ;; --out) out=$2; shift 2 ;;
    --widths) widths=$2; shift 2 ;; --k) k=$2; shift 2 ;; --krylov-blocks) blocks=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$bench" ] || { echo "no benchmark binary at $bench (configure with -DKEMBED_BUILD_BENCH=ON and build kembed_bench_phases, or set KEMBED_BENCH_PHASES)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
mkdir -p "$out"
csv=$out/phases-$kernel.csv
rm -f "$csv"
for p in $ranks; do
  part=$out/phases-$kernel-np$p.csv
  mpirun --oversubscribe -np "$p" "$bench" --n "${sizes// /,}" --d "${dims// /,}" \
    --kernel "$kernel" --repeat "$repeat" --widths "${widths// /,}" --k "$k" \
    --krylov-blocks "${blocks// /,}" --csv "$part"
  # One header, then every rank count's rows.
  if [ -f "$csv" ]; then tail -n +2 "$part" >> "$csv"; else cp "$part" "$csv"; fi
  rm -f "$part"
  echo
done
echo "CSV: $csv"
