#!/usr/bin/env bash
# Nystrom kernel PCA (kembed kpca --approx nystrom) at scale, against
# scikit-learn's Nystroem + PCA, with an accuracy figure for both. Not run in
# CI (minutes of CPU). Prints three tables:
#   1. kembed at n = --big (default 10^6), d = 64, rbf (gamma = 1/64), k = 10,
#      M = --landmarks (1000), on --ranks (2) ranks, data generated in memory
#      (--generate gaussian): end to end, per phase, peak memory per rank;
#   2. kembed and scikit-learn (Nystroem(n_components=M) then PCA(k), BLAS on
#      --ranks threads) on the same n = --mid (10^5) .npy file;
#   3. accuracy at n = --small (8000), where exact kpca runs: the largest
#      relative error of the top-k eigenvalues against exact kpca (krylov),
#      for kembed at M = 250 ... 2000 and scikit-learn at M, and the largest
#      principal angle between the exact and approximate k-dim embeddings.
#
#   bench/nystrom.sh [--big N] [--mid N] [--small N] [--landmarks M] [--ranks P] [--out DIR]
#                    [--dataset gaussian|blobs|swissroll] [--no-sklearn] [--tables "1 2 3"]
#                    [--ms "250 500 1000 2000"] [--selections "uniform kmeans++"] [--cols D]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kembed=${KEMBED:-$root/build/kembed}
big=1000000; mid=100000; small=8000; m=1000; ranks=2; out=$root/results/nystrom; sklearn=1
dataset=gaussian; tables="1 2 3"; ms="250 500 1000 2000"; selections="uniform kmeans++"; d=64
while [ $# -gt 0 ]; do
  case $1 in
    --big) big=$2; shift 2 ;; --mid) mid=$2; shift 2 ;; --small) small=$2; shift 2 ;;
    --landmarks) m=$2; shift 2 ;; --ranks) ranks=$2; shift 2 ;; --out) out=$2; shift 2 ;;
    --dataset) dataset=$2; shift 2 ;; --no-sklearn) sklearn=0; shift ;;
    --tables) tables=$2; shift 2 ;; --ms) ms=$2; shift 2 ;; --selections) selections=$2; shift 2 ;;
    --cols) d=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
py=/usr/bin/python3
if [ "$sklearn" = 1 ] && ! $py -c "import sklearn" 2>/dev/null; then
  echo "python3-sklearn missing: apt-get install -y python3-sklearn (or pass --no-sklearn)" >&2
  exit 1
fi
mkdir -p "$out"
k=10; gamma=$(awk -v d="$d" 'BEGIN { printf "%.17g", 1 / d }')
common=(--kernel rbf --gamma "$gamma" -k "$k" --quiet)
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
field() {  # field RUN_JSON EXPRESSION (python on the parsed run.json `j`)
  $py -c "import json, sys; j = json.load(open(sys.argv[1])); print($2)" "$1"
}
echo "data: $dataset (kembed generate, seed 1), d = $d, rbf gamma = 1/$d"
want() { case " $tables " in *" $1 "*) return 0 ;; esac; return 1; }
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(grep -c ^processor /proc/cpuinfo) cores, $(free -g | awk '/Mem:/ { print $2 }') GB; $(date -u '+%Y-%m-%d %H:%M UTC')"

# 1. The big run.
if want 1; then
start=$(now)
mpirun --oversubscribe -np "$ranks" "$kembed" kpca --generate "$dataset" --rows "$big" --cols "$d" \
  --seed 1 --approx nystrom --landmarks "$m" --output-format npy "${common[@]}" -o "$out/big"
wall=$(since "$start")
j=$out/big/run.json
echo
echo "| n | d | M | k | ranks | wall s | landmarks s | pass1 s | solve s | pass2 s | write s | peak GB per rank | dropped | pass 1 |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
echo "| $big | $d | $m | $k | $ranks | $wall | $(field "$j" "' | '.join('%.2f' % j['time_seconds'][p] for p in ['landmarks', 'pass1', 'solve', 'pass2', 'write'])") | $(field "$j" "'%.2f' % (j['peak_memory_bytes_per_rank_max'] / 1e9)") | $(field "$j" "j['approximation']['dropped_directions']") | $(field "$j" "j['approximation']['pass1_accumulates']") |"

fi

# 2. kembed and scikit-learn on the same file.
for n in "$mid" "$small"; do
  if [ "$n" = "$mid" ] && ! want 2; then continue; fi
  [ -f "$out/$dataset-d$d-$n.npy" ] || mpirun --oversubscribe -np "$ranks" "$kembed" generate \
    --dataset "$dataset" --rows "$n" --cols "$d" --seed 1 --output "$out/$dataset-d$d-$n.npy" --quiet
done
if want 2; then
start=$(now)
mpirun --oversubscribe -np "$ranks" "$kembed" kpca --input "$out/$dataset-d$d-$mid.npy" --approx nystrom \
  --landmarks "$m" --output-format npy "${common[@]}" -o "$out/mid"
kembed_mid=$(since "$start")
sk_mid="-"
if [ "$sklearn" = 1 ]; then
  sk_mid=$(OPENBLAS_NUM_THREADS=$ranks OMP_NUM_THREADS=$ranks $py - "$out/$dataset-d$d-$mid.npy" "$m" "$k" "$gamma" <<'PY'
import sys, time, numpy as np
from sklearn.kernel_approximation import Nystroem
from sklearn.decomposition import PCA
path, m, k, gamma = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
t = time.time()
x = np.load(path)
f = Nystroem(kernel="rbf", gamma=gamma, n_components=m, random_state=0).fit_transform(x)
z = PCA(n_components=k, random_state=0).fit_transform(f)
print("%.2f" % (time.time() - t))
PY
)
fi
echo
echo "| n | M | k | kembed ranks | kembed end to end s | scikit-learn Nystroem + PCA s (BLAS threads $ranks) | speed-up |"
echo "|---|---|---|---|---|---|---|"
echo "| $mid | $m | $k | $ranks | $kembed_mid | $sk_mid | $(awk -v a="$kembed_mid" -v b="$sk_mid" 'BEGIN { if (b + 0 > 0) printf "%.1f", b / a; else print "-" }') |"

fi

# 3. Accuracy against exact kernel PCA at n = small.
want 3 || exit 0
x=$out/$dataset-d$d-$small.npy
mpirun --oversubscribe -np "$ranks" "$kembed" kpca --input "$x" --solver krylov --output-format npy \
  "${common[@]}" -o "$out/exact"
accuracy() {  # accuracy DIR: max relative eigenvalue error, largest principal angle (degrees)
  $py - "$out/exact" "$1" <<'PY'
import json, sys, numpy as np
e, a = (json.load(open(p + "/run.json")) for p in sys.argv[1:3])
le, la = np.array(e["eigenvalues"]), np.array(a["eigenvalues"])
ze, za = (np.load(p + "/embedding.npy") for p in sys.argv[1:3])
qe, _ = np.linalg.qr(ze); qa, _ = np.linalg.qr(za)
s = np.clip(np.linalg.svd(qe.T @ qa, compute_uv=False), -1, 1)
print("%.2e | %.2f" % (np.max(np.abs(la - le) / le), np.degrees(np.arccos(s.min()))))
PY
}
echo
echo "| n = $small, k = $k | M | landmarks | max relative eigenvalue error | largest principal angle (deg) | seconds |"
echo "|---|---|---|---|---|---|"
for mm in $ms; do
  for sel in $selections; do
    start=$(now)
    mpirun --oversubscribe -np "$ranks" "$kembed" kpca --input "$x" --approx nystrom --landmarks "$mm" \
      --landmark-selection "$sel" --output-format npy "${common[@]}" -o "$out/acc"
    t=$(since "$start")
    echo "| kembed | $mm | $sel | $(accuracy "$out/acc") | $t |"
  done
done
if [ "$sklearn" = 1 ]; then
  OPENBLAS_NUM_THREADS=$ranks OMP_NUM_THREADS=$ranks $py - "$x" "$m" "$k" "$gamma" "$out/exact" <<'PY'
import sys, json, time, numpy as np
from sklearn.kernel_approximation import Nystroem
from sklearn.decomposition import PCA
path, m, k, gamma, exact = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
x = np.load(path); n = x.shape[0]
t = time.time()
f = Nystroem(kernel="rbf", gamma=gamma, n_components=m, random_state=0).fit_transform(x)
pca = PCA(n_components=k, random_state=0)
z = pca.fit_transform(f)
t = time.time() - t
# PCA's explained_variance_ is lambda / (n - 1): back to kpca's scale.
la = pca.explained_variance_ * (n - 1)
le = np.array(json.load(open(exact + "/run.json"))["eigenvalues"])
ze = np.load(exact + "/embedding.npy")
qe, _ = np.linalg.qr(ze); qa, _ = np.linalg.qr(z)
s = np.clip(np.linalg.svd(qe.T @ qa, compute_uv=False), -1, 1)
print("| scikit-learn | %d | uniform | %.2e | %.2f | %.2f |" % (m, np.max(np.abs(la - le) / le), np.degrees(np.arccos(s.min())), t))
PY
fi
