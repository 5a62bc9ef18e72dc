#!/usr/bin/env bash
# Passes over K (block products) that the top-k eigensolvers need for the same
# residual, on the same centered rbf kernels (generated gaussian with d = 64,
# and swissroll; k = 10; tol 1e-12, 1e-8, 1e-6): the library's block Krylov
# solver at several block widths b and depths q, block LOBPCG and
# Chebyshev-filtered subspace iteration (bench/krylov_passes.cpp). Builds
# nothing: give the build directory (default build/). One program run per
# matrix (about a minute each at n = 8000 on 2 cores); prints markdown tables
# and keeps them in DIR/passes.md. More settings (e.g. --krylov
# 0x0,10x8,24x4 --lobpcg 6) go to the program after `--`.
#
#   bench/passes.sh [BUILD_DIR] [--sizes "4000 8000"] [--sets "gaussian:64 swissroll:3"]
#                   [--ranks 2] [--out DIR] [-- program options]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then build=$1; shift; fi
sizes="4000 8000"; sets="gaussian:64 swissroll:3"; ranks=2; out=$root/results/bench; extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --sizes) sizes=$2; shift 2 ;; --sets) sets=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;; --out) out=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
bench=$build/bench/kembed_bench_krylov_passes
[ -x "$bench" ] || { echo "no $bench: configure $build with -DKEMBED_BUILD_BENCH=ON and build the target kembed_bench_krylov_passes first" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
mkdir -p "$out"
# Only a table this script wrote earlier is ever replaced.
if [ -e "$out/passes.md" ] && ! head -n 1 "$out/passes.md" | grep -q '^# kembed_bench_krylov_passes'; then
  echo "$out/passes.md exists and was not written by this benchmark: give another --out" >&2
  exit 2
fi
{
  echo "# kembed_bench_krylov_passes, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n)," \
       "$(nproc) cores, $ranks ranks, commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  for set in $sets; do
    for n in $sizes; do
      echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
      mpirun --oversubscribe -np "$ranks" "$bench" --n "$n" --sets "$set" \
        --k 10 --tols 1e-12,1e-8,1e-6 ${extra[@]+"${extra[@]}"}
    done
  done
} | tee "$out/passes.md"
echo "tables written to $out/passes.md"
