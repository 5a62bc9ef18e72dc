#!/usr/bin/env bash
# Input and output rates of kembed (issue 13), beside the streaming bandwidth
# of the same machine measured in the same run: reading an n x d matrix from
# .npy, .h5 and CSV (the read + distribute phases of `kembed pca`), and
# writing the n x k embedding as csv, npy and h5 (its write phase), each the
# best of --repeat runs; the check phase (magnitude check and fingerprint of
# what was read) is shown beside the read.
#
#   bench/io.sh [--n 1000000] [--d 64] [--k 10] [--ranks 2] [--kernel-n 8000]
#               [--repeat 3] [--baseline BENCH_BINARY] [--dir DIR] [--keep]
#
# A second table (kembed_bench_io, built beside kembed in build/bench/) times
# each distribution path on its own, best of --repeat, beside the streaming
# rate of the same file: read_rows of one block of rows per rank (.npy, .bin,
# .h5), read_block_cyclic (pca's distribute; with --kernel-n, a precomputed
# n x n kernel as kpca and mds read it), read_panel (kpca's read of X),
# copy_to_npy (the model's X.npy, with its fingerprint) and fingerprint_rows.
# --baseline runs another build's kembed_bench_io on the same files first,
# for a before/after comparison within one run.
#
# The data are generated (`kembed generate --dataset gaussian`, .npy and .h5);
# the CSV of the same shape is the embedding of a pca with all d components,
# written by kembed itself. Streaming bandwidth: one sequential read of the
# .npy with the page cache warm (as the reads below find it). Needs python3
# (standard library only) for the table. Uses about 3.5 GB of disk at the
# defaults; DIR is removed at the end unless --keep.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kembed=${KEMBED:-$root/build/kembed}
n=1000000; d=64; k=10; ranks=2; dir=$root/results/bench-io; keep=0
kernel_n=8000; repeat=3; baseline=
bench_io=${KEMBED_BENCH_IO:-$(dirname "$kembed")/bench/kembed_bench_io}
while [ $# -gt 0 ]; do
  case $1 in
    --n) n=$2; shift 2 ;; --d) d=$2; shift 2 ;; --k) k=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;; --dir) dir=$2; shift 2 ;; --keep) keep=1; shift ;;
    --kernel-n) kernel_n=$2; shift 2 ;; --repeat) repeat=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$kembed" ] || { echo "no kembed binary at $kembed (build it or set KEMBED)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
run() { mpirun --oversubscribe -np "$ranks" "$kembed" "$@"; }

formats="npy csv"
"$kembed" --version | grep -q 'output csv npy h5' && formats="npy h5 csv"
# Scratch directory: only one this script created (marked) is ever replaced.
if [ -e "$dir" ] && [ ! -f "$dir/.kembed-bench" ]; then
  echo "$dir exists and is not a scratch directory of this benchmark: give another --dir" >&2
  exit 2
fi
rm -rf "$dir"; mkdir -p "$dir"; : > "$dir/.kembed-bench"
echo "generating $n x $d ($formats) in $dir ..."
run generate --dataset gaussian --rows "$n" --cols "$d" --seed 1 --output "$dir/X.npy" --quiet
case $formats in *h5*)
  run generate --dataset gaussian --rows "$n" --cols "$d" --seed 1 --output "$dir/X.h5" --quiet ;;
esac
run pca --input "$dir/X.npy" -k "$d" --output-dir "$dir/csv-source" --quiet
mv "$dir/csv-source/embedding.csv" "$dir/X.csv"
rm -rf "$dir/csv-source"

# The formats take turns, run r of each before run r + 1 of any: the VM's cost
# of first touch drifts over minutes (README, "First touch on this VM"), and
# a format whose runs all came in one stretch would carry that stretch's cost.
echo "kembed pca -k $k --output-format as the input, $formats in turn ($ranks ranks, $repeat runs each) ..."
for r in $(seq "$repeat"); do
  for f in $formats; do
    run pca --input "$dir/X.$f" -k "$k" --output-format "$f" --output-dir "$dir/out-$f-$r" --quiet
  done
done

python3 - "$dir" "$formats" "$n" "$d" "$k" "$ranks" "$repeat" <<'PY'
import json, os, sys, time
dir, formats, n, d, k, ranks, repeat = sys.argv[1], sys.argv[2].split(), *map(int, sys.argv[3:])
def stream(path):
    """Seconds of one sequential read of `path` (page cache warm), best of 3."""
    buf = bytearray(16 << 20)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        with open(path, "rb", buffering=0) as f:
            while f.readinto(buf):
                pass
        best = min(best, time.perf_counter() - start)
    return best
x_npy = os.path.join(dir, "X.npy")
bandwidth = os.path.getsize(x_npy) / stream(x_npy)
print(f"\nn = {n}, d = {d}, k = {k}, {ranks} ranks; streaming read bandwidth {bandwidth / 1e9:.2f} GB/s\n")
print("| format | read s | input bytes | read GB/s | of streaming | check s | write s | embedding bytes | write GB/s | of streaming |")
print("|---|---|---|---|---|---|---|---|---|---|")
for f in formats:
    runs = []
    for r in range(1, repeat + 1):
        out = os.path.join(dir, f"out-{f}-{r}")
        runs.append((json.load(open(os.path.join(out, "run.json")))["time_seconds"], out))
    def best(phase):
        return min(runs, key=lambda run: phase(run[0]))
    read_of = lambda t: t.get("read", 0) + t.get("distribute", 0)
    read = read_of(best(read_of)[0])
    check = min(t.get("check", 0) for t, _ in runs)
    times, out = best(lambda t: t.get("write", 0))
    write = times.get("write", 0)
    size_in = os.path.getsize(os.path.join(dir, "X." + f))
    size_out = os.path.getsize(os.path.join(out, "embedding." + f))
    print(f"| {f} | {read:.3f} | {size_in} | {size_in / read / 1e9:.3f} | {100 * size_in / read / bandwidth:.1f}% "
          f"| {check:.3f} | {write:.3f} | {size_out} | {size_out / write / 1e9:.3f} | {100 * size_out / write / bandwidth:.1f}% |")
print(f"\n(each column the best of {repeat} runs; read s: the read and distribute phases of run.json, "
      "maximum over ranks; check s: its check phase, the magnitude check and data fingerprint of "
      "what was read; write s: its write phase, which also writes and syncs the small "
      "eigenvalues.csv and components.csv)")
PY

if [ -x "$bench_io" ]; then
  files=("$dir/X.npy")
  header=$(( $(od -An -tu2 -j8 -N2 "$dir/X.npy") + 10 ))
  tail -c +$((header + 1)) "$dir/X.npy" > "$dir/X.bin"
  files+=(--bin-shape "${n}x$d" "$dir/X.bin")
  case $formats in *h5*) files+=("$dir/X.h5") ;; esac
  rm -f "$dir/X.csv"
  if [ "$kernel_n" -gt 0 ]; then
    run generate --dataset gaussian --rows "$kernel_n" --cols "$kernel_n" --seed 2 --output "$dir/K.npy" --quiet
    files+=("$dir/K.npy")
    case $formats in *h5*)
      run generate --dataset gaussian --rows "$kernel_n" --cols "$kernel_n" --seed 2 --output "$dir/K.h5" --quiet
      files+=("$dir/K.h5") ;;
    esac
  fi
  for bench in $baseline "$bench_io"; do
    echo
    echo "distribution paths, $ranks ranks, best of $repeat: $bench"
    echo
    mpirun --oversubscribe -np "$ranks" "$bench" "${files[@]}" --repeat "$repeat" --out "$dir" ||
      echo "($bench failed)"
  done
else
  echo "(no $bench_io: configure with -DKEMBED_BUILD_BENCH=ON and build the kembed_bench_io target for the distribution table)"
fi
[ "$keep" = 1 ] || rm -rf "$dir"
