#!/usr/bin/env bash
# kembed generate and kpca --generate (issue 7), end to end under mpiexec:
#  - every data set gives byte-identical .npy files on 1 and 3 ranks;
#  - the .npy header is v1.0 '<f8', C order, the right shape, data 64-byte aligned,
#    and the file size is header + rows * cols * 8;
#  - different seeds give different data; --cols pads with noise columns;
#  - kpca --generate equals kpca --input of the file generate wrote (same
#    ranks: identical embedding and eigenvalues), run.json says "generated";
#  - bad arguments fail on every rank with one message and leave no file.
#   tests/cli/test_generate.sh KEMBED MPIEXEC
set -uo pipefail
kembed=${1:?usage: test_generate.sh KEMBED MPIEXEC}
mpiexec=${2:?usage: test_generate.sh KEMBED MPIEXEC}
work=$(mktemp -d /tmp/kembed-test-generate.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0
check() {  # description, then a command that must succeed
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; failures=$((failures + 1)); fi
}
run() {  # ranks, kembed arguments...
  local np=$1
  shift
  timeout 60 "$mpiexec" --oversubscribe -np "$np" "$kembed" "$@"
}
fails_with() {  # message, ranks, kembed arguments...: must exit non-zero printing message
  local message=$1
  shift
  local output
  output=$(run "$@" 2>&1) && { echo "  (exit 0) $output"; return 1; }
  # One error line (rank 0 reports the agreed error), carrying the message.
  [ "$(grep -c "^kembed: error: " <<<"$output")" -eq 1 ] && grep "^kembed: error: " <<<"$output" | grep -qF -- "$message" ||
    { echo "  $output"; return 1; }
}
header_ok() {  # file rows cols
  local file=$1 rows=$2 cols=$3
  local magic len header_total size
  magic=$(head -c 8 "$file" | od -An -c | tr -s ' ')
  [ "$magic" = " 223 N U M P Y 001 \\0" ] || { echo "  magic/version: $magic"; return 1; }
  len=$(od -An -tu2 -j8 -N2 --endian=little "$file" | tr -d ' ')
  header_total=$((10 + len))
  [ $((header_total % 64)) -eq 0 ] || { echo "  header of $header_total bytes is not 64-byte aligned"; return 1; }
  head -c "$header_total" "$file" | grep -qF "{'descr': '<f8', 'fortran_order': False, 'shape': ($rows, $cols), }" ||
    { echo "  dictionary: $(head -c "$header_total" "$file" | tail -c +11)"; return 1; }
  [ "$(tail -c 1 <(head -c "$header_total" "$file") | od -An -c | tr -d ' ')" = '\n' ] || { echo "  header does not end in newline"; return 1; }
  size=$(stat -c %s "$file")
  [ "$size" -eq $((header_total + rows * cols * 8)) ] || { echo "  size $size"; return 1; }
}

for ds in blobs circles moons swissroll gaussian; do
  run 1 generate --dataset "$ds" --rows 1001 --cols 5 --seed 42 --output "$ds-1.npy" --quiet
  run 3 generate --dataset "$ds" --rows 1001 --cols 5 --seed 42 --output "$ds-3.npy" --quiet
  check "$ds: 1 and 3 ranks write identical bytes" cmp "$ds-1.npy" "$ds-3.npy"
  check "$ds: .npy header and size" header_ok "$ds-3.npy" 1001 5
done
run 2 generate --dataset swissroll --rows 7 --output default.npy --quiet
check "swissroll defaults to 3 columns; fewer rows than a chunk, 2 ranks" header_ok default.npy 7 3
run 3 generate --dataset circles --rows 2 --output tiny.npy --quiet
check "more ranks than rows (a rank writes nothing)" header_ok tiny.npy 2 2
run 1 generate --dataset circles --rows 1001 --cols 5 --seed 43 --output seed43.npy --quiet
check "another seed gives other data" bash -c '! cmp -s circles-1.npy seed43.npy'
run 1 generate --dataset circles --rows 1001 --cols 2 --seed 42 --output circles-2col.npy --quiet
check "--cols 5 keeps the 2-D circles in columns 1-2 and adds noise columns of std ~0.05" python3 - <<'PY2'
import struct
def load(name):
    data = open(name, "rb").read()
    start = 10 + struct.unpack("<H", data[8:10])[0]
    return struct.unpack("<%dd" % ((len(data) - start) // 8), data[start:])
five, two = load("circles-1.npy"), load("circles-2col.npy")
rows = 1001
assert all(five[5 * i + j] == two[2 * i + j] for i in range(rows) for j in range(2))
for j in range(2, 5):
    col = [five[5 * i + j] for i in range(rows)]
    std = (sum(x * x for x in col) / rows) ** 0.5
    assert 0.04 < std < 0.06, std
PY2
check "no temporary files left behind" bash -c '[ -z "$(ls -A | grep tmp)" ]'

# kpca --generate = kpca --input of the generated file.
run 2 generate --dataset moons --rows 300 --seed 9 --output moons.npy --quiet
run 2 kpca --generate moons --rows 300 --seed 9 --gamma 10 --output-dir gen --quiet
run 2 kpca --input moons.npy --gamma 10 --output-dir file --quiet
check "kpca --generate gives the same embedding as --input of the generated file" cmp gen/embedding.csv file/embedding.csv
check "kpca --generate gives the same eigenvalues" cmp gen/eigenvalues.csv file/eigenvalues.csv
check "run.json records the generated input" grep -q '"format": "generated"' gen/run.json
check "run.json names data set, shape and seed" grep -qF 'generated:moons(rows=300,cols=2,seed=9)' gen/run.json

# Errors: the same message, non-zero exit, no output.
check "--input and --generate together" fails_with "give either --input or --generate, not both" 2 kpca --input moons.npy --generate moons --rows 10 --output-dir x
check "--generate without --rows" fails_with "--generate needs --rows" 2 kpca --generate moons --output-dir x
check "unknown data set" fails_with "unknown data set 'squares'" 2 generate --dataset squares --rows 10 --output x.npy
check "too few columns for swissroll" fails_with "--cols 2 is too small for swissroll" 3 generate --dataset swissroll --rows 10 --cols 2 --output x.npy
check "output must be .npy" fails_with "must end in .npy" 2 generate --dataset blobs --rows 10 --output x.csv
check "missing output directory" fails_with "directory '$work/nowhere' does not exist" 2 generate --dataset blobs --rows 10 --output "$work/nowhere/x.npy"
check "negative seed" fails_with "--seed must be at least 0" 2 generate --dataset blobs --rows 10 --seed -3 --output x.npy
check "nothing written by the failed runs" bash -c '[ ! -e x.npy ] && [ ! -e x ] && [ -z "$(ls -A | grep tmp)" ]'

if [ "$failures" -ne 0 ]; then echo "test_generate: $failures check(s) failed"; exit 1; fi
echo "test_generate: all checks passed"
