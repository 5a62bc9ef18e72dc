#!/usr/bin/env bash
# Landmark MDS (issue 14), not run in CI:
#  1. scale: `kembed mds --approx landmark` on n = 10^6 generated points
#     (gaussian, d = 64), M = 1000 landmarks, k = 10, 2 ranks: end to end
#     (wall clock) and per phase, peak memory per rank, sample stress;
#  2. accuracy for k < d: at n = 4000 (d = 64), the distance of the landmark
#     embedding from exact `kembed mds` for several M: the orthogonal
#     Procrustes residual min_Q ||(Y - mean Y) Q - Z||_F / ||Z||_F (Z: exact
#     classical MDS, k = 10), the largest relative error of the n/M-scaled
#     eigenvalues, and Kruskal's stress-1 of both embeddings on the same
#     10,000 random pairs, on two data sets: "gaussian" (a flat spectrum, the hard
#     case) and "decaying" (column t scaled by 0.8^t, a clear top 10).
#
#   bench/landmark_mds.sh [--n 1000000] [--d 64] [--m 1000] [--k 10] [--ranks 2]
#                         [--small-n 4000] [--ms "50 100 200 500 1000 2000"]
#                         [--dir DIR] [--keep] [--skip-scale] [--skip-accuracy]
#
# Needs python3 (standard library only). DIR is removed at the end unless --keep.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kembed=${KEMBED:-$root/build/kembed}
n=1000000; d=64; m=1000; k=10; ranks=2; small_n=4000; ms="50 100 200 500 1000 2000"
dir=$root/results/bench-landmark-mds; keep=0; scale=1; accuracy=1
while [ $# -gt 0 ]; do
  case $1 in
    --n) n=$2; shift 2 ;; --d) d=$2; shift 2 ;; --m) m=$2; shift 2 ;; --k) k=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;; --small-n) small_n=$2; shift 2 ;; --ms) ms=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;; --keep) keep=1; shift ;;
    --skip-scale) scale=0; shift ;; --skip-accuracy) accuracy=0; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$kembed" ] || { echo "no kembed binary at $kembed (build it or set KEMBED)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
run() { mpirun --oversubscribe -np "$ranks" "$kembed" "$@"; }
# Scratch directory: only one this script created (marked) is ever replaced.
if [ -e "$dir" ] && [ ! -f "$dir/.kembed-bench" ]; then
  echo "$dir exists and is not a scratch directory of this benchmark: give another --dir" >&2
  exit 2
fi
rm -rf "$dir"; mkdir -p "$dir"; : > "$dir/.kembed-bench"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n): $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(grep -c ^processor /proc/cpuinfo) cores, load $(cut -d' ' -f1 /proc/loadavg), $(free -g | awk '/Mem:/ {print $2}') GB"

if [ "$scale" = 1 ]; then
  echo "kembed mds --generate gaussian --rows $n --cols $d --approx landmark --landmarks $m -k $k ($ranks ranks) ..."
  start=$(date +%s.%N)
  run mds --generate gaussian --rows "$n" --cols "$d" --seed 1 --approx landmark --landmarks "$m" \
      -k "$k" --output-format npy --output-dir "$dir/scale" --quiet
  end=$(date +%s.%N)
  python3 - "$dir/scale/run.json" "$start" "$end" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
a = r["approximation"]
print(f"\n| n | d | M | k | ranks | end to end s (mpirun) | kembed phases s | peak GB per rank | sample stress ({a['stress_sample_pairs']} pairs) |")
print("|---|---|---|---|---|---|---|---|---|")
peaks = ", ".join(f"{p / 1e9:.2f}" for p in r["peak_memory_bytes_per_rank"])
print(f"| {r['n']} | {r['d']} | {a['landmarks']} | {r['components']} | {r['ranks']} | {wall:.2f} | "
      f"{r['time_seconds_total']:.2f} | {peaks} | {a['sample_stress']:.4f} |")
print("\nphase | seconds (max over ranks)\n---|---")
for phase, s in r["time_seconds"].items():
    print(f"{phase} | {s:.3f}")
print(f"memory estimate per rank: {r['memory_estimate_bytes_per_rank'] / 1e9:.3f} GB")
PY
fi

if [ "$accuracy" = 1 ]; then
  python3 - "$dir" "$small_n" "$d" <<'PY'
import random, struct, sys
dir, n, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for name, scale in (("gaussian", lambda t: 1.0), ("decaying", lambda t: 0.8 ** t)):
    rng = random.Random(7)
    with open(f"{dir}/{name}.bin", "wb") as f:
        for i in range(n):
            f.write(struct.pack(f"<{d}d", *(rng.gauss(0, 1) * scale(t) for t in range(d))))
PY
  for data in gaussian decaying; do
    echo "exact kembed mds on $data (n = $small_n, k = $k) ..."
    run mds --input "$dir/$data.bin" --rows "$small_n" --cols "$d" -k "$k" \
        --output-format npy --output-dir "$dir/exact-$data" --quiet
    for mm in $ms; do
      run mds --input "$dir/$data.bin" --rows "$small_n" --cols "$d" -k "$k" --approx landmark \
          --landmarks "$mm" --seed 1 --output-format npy --output-dir "$dir/landmark-$data-$mm" --quiet
    done
  done
  python3 - "$dir" "$small_n" "$k" "$ms" <<'PY'
import json, math, random, struct, sys
dir, n, k, ms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split()

def load_npy(path):
    raw = open(path, "rb").read()
    header_len = struct.unpack("<H", raw[8:10])[0] if raw[6] == 1 else struct.unpack("<I", raw[8:12])[0]
    start = 10 + header_len if raw[6] == 1 else 12 + header_len
    values = struct.unpack(f"<{(len(raw) - start) // 8}d", raw[start:])
    cols = len(values) // n
    return [list(values[i * cols:(i + 1) * cols]) for i in range(n)]

def centered(a):
    means = [sum(r[j] for r in a) / len(a) for j in range(len(a[0]))]
    return [[r[j] - means[j] for j in range(len(r))] for r in a]

def jacobi(a):
    """Eigenvalues and eigenvectors (columns) of a small symmetric matrix."""
    m = len(a); a = [row[:] for row in a]
    v = [[float(i == j) for j in range(m)] for i in range(m)]
    for _ in range(100):
        off = sum(a[i][j] ** 2 for i in range(m) for j in range(m) if i != j)
        if off < 1e-30 * sum(a[i][i] ** 2 for i in range(m)):
            break
        for p in range(m):
            for q in range(p + 1, m):
                if a[p][q] == 0:
                    continue
                theta = (a[q][q] - a[p][p]) / (2 * a[p][q])
                t = math.copysign(1, theta) / (abs(theta) + math.sqrt(theta * theta + 1))
                c = 1 / math.sqrt(t * t + 1); s = t * c
                for r in range(m):
                    arp, arq = a[r][p], a[r][q]
                    a[r][p], a[r][q] = c * arp - s * arq, s * arp + c * arq
                for r in range(m):
                    apr, aqr = a[p][r], a[q][r]
                    a[p][r], a[q][r] = c * apr - s * aqr, s * apr + c * aqr
                for r in range(m):
                    vrp, vrq = v[r][p], v[r][q]
                    v[r][p], v[r][q] = c * vrp - s * vrq, s * vrp + c * vrq
    return [a[i][i] for i in range(m)], v

def procrustes(a, b):
    """min over orthogonal Q of ||A Q - B||_F / ||B||_F: Q = M (M^T M)^(-1/2), M = A^T B."""
    kk = len(a[0])
    mm = [[sum(a[i][s] * b[i][t] for i in range(len(a))) for t in range(kk)] for s in range(kk)]
    mtm = [[sum(mm[r][s] * mm[r][t] for r in range(kk)) for t in range(kk)] for s in range(kk)]
    w, v = jacobi(mtm)
    inv = [[sum(v[s][r] * v[t][r] / math.sqrt(w[r]) for r in range(kk)) for t in range(kk)] for s in range(kk)]
    q = [[sum(mm[s][r] * inv[r][t] for r in range(kk)) for t in range(kk)] for s in range(kk)]
    err = sum((sum(a[i][r] * q[r][t] for r in range(kk)) - b[i][t]) ** 2
              for i in range(len(a)) for t in range(kk))
    return math.sqrt(err / sum(x * x for row in b for x in row))

def stress(x, y, pairs):
    """Kruskal stress-1 of embedding y against the Euclidean distances of x."""
    num = den = 0.0
    for i, j in pairs:
        dist = math.sqrt(sum((a - b) ** 2 for a, b in zip(x[i], x[j])))
        fit = math.sqrt(sum((a - b) ** 2 for a, b in zip(y[i], y[j])))
        num += (dist - fit) ** 2; den += dist * dist
    return math.sqrt(num / den)

rng = random.Random(1)
pairs = [tuple(rng.sample(range(n), 2)) for _ in range(10000)]
print(f"\n| data | n | k | M | Procrustes residual vs exact | max rel. eigenvalue error (n/M scaled) | stress, landmark | stress, exact |")
print("|---|---|---|---|---|---|---|---|")
for data in ("gaussian", "decaying"):
    raw = open(f"{dir}/{data}.bin", "rb").read()
    values = struct.unpack(f"<{len(raw) // 8}d", raw)
    d = len(values) // n
    x = [values[i * d:(i + 1) * d] for i in range(n)]
    z = load_npy(f"{dir}/exact-{data}/embedding.npy")
    exact_stress = stress(x, z, pairs)
    exact = json.load(open(f"{dir}/exact-{data}/run.json"))["eigenvalues"]
    for m in ms:
        r = json.load(open(f"{dir}/landmark-{data}-{m}/run.json"))
        y = centered(load_npy(f"{dir}/landmark-{data}-{m}/embedding.npy"))
        eig = max(abs(e - x) / x for e, x in zip(r["eigenvalues"], exact))
        print(f"| {data} | {n} | {k} | {m} | {procrustes(y, z):.3e} | {eig:.3e} | "
              f"{stress(x, y, pairs):.4f} | {exact_stress:.4f} |")
PY
fi
[ "$keep" = 1 ] || rm -rf "$dir"
