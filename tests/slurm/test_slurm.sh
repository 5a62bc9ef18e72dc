#!/usr/bin/env bash
# The job scripts of jobs/ on a real single-node SLURM cluster (issue 7):
#
#   tests/slurm/test_slurm.sh KEMBED SOURCE_DIR
#
# Brings a cluster up (cluster_up.sh), submits the real jobs/run.sbatch (kpca,
# pca and mds; the method given on the command line or named by the config)
# with small generated data sets (sbatch --wait, every wait bounded by timeout)
# and checks what they leave: embeddings, run.json, job information, exit codes
# and the job state; a job with a bad config, a misspelt or conflicting method
# must fail and say why; a job asking for more CPUs than the node has must be
# refused at once; a tiny strong (1, 2 ranks) and weak scaling study runs
# through jobs/scaling.sbatch and jobs/report.py writes scaling.csv and
# scaling.png (legends off the data) into a directory it creates. The cluster is torn down
# by the process ids it started (cluster_down.sh), also when the test fails
# or times out (a watchdog ends the test after KEMBED_SLURM_TEST_BUDGET s).
# Exit codes: 0 passed, 1 failed, 77 skipped (SLURM cannot run here; the
# reason is printed). KEEP=1 keeps the work directory.
set -uo pipefail
kembed=${1:?usage: test_slurm.sh KEMBED SOURCE_DIR}
src=${2:?usage: test_slurm.sh KEMBED SOURCE_DIR}
kembed=$(cd "$(dirname "$kembed")" && pwd)/$(basename "$kembed")
src=$(cd "$src" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
budget=${KEMBED_SLURM_TEST_BUDGET:-220}
started_at=$SECONDS

# Clusters of earlier runs that were killed (owner process gone) are torn
# down by their recorded process ids before anything else.
base=/tmp/kembed-slurm-test
mkdir -p "$base"
for old in "$base"/run.*; do
  [ -d "$old" ] || continue
  owner=$(cat "$old/owner" 2>/dev/null || true)
  if [ -z "$owner" ] || ! kill -0 "$owner" 2>/dev/null; then
    echo "test_slurm: tearing down the cluster of an earlier, interrupted run in $old"
    "$here/cluster_down.sh" "$old/cluster"
    rm -rf "$old"
  fi
done

work=$(mktemp -d "$base/run.XXXXXX")
chmod 0711 "$base" "$work"  # munged (user munge) must reach its directory inside
echo $$ >"$work/owner"
cluster=$work/cluster
watchdog=""
teardown() {
  trap - EXIT INT TERM
  [ -n "$watchdog" ] && kill "$watchdog" 2>/dev/null
  "$here/cluster_down.sh" "$cluster" --keep
  if [ "${KEEP:-0}" = 1 ]; then echo "test_slurm: kept $work"; else rm -rf "$work"; fi
}
trap teardown EXIT
trap 'echo "test_slurm: interrupted (time budget of ${budget} s used up?)" >&2; exit 1' INT TERM
# The watchdog: every wait below has its own timeout; this bounds the total.
# It holds no output open (CTest would wait for it) and ends its sleep when stopped.
(
  exec </dev/null >/dev/null 2>&1
  sleep "$budget" &
  sleeper=$!
  trap 'kill $sleeper; exit 0' TERM
  wait "$sleeper" && kill -TERM $$
) &
watchdog=$!

"$here/cluster_up.sh" "$cluster" 4
case $? in
  0) ;;
  77) echo "test_slurm: skipped: SLURM cannot run on this machine (reason above)"; exit 77 ;;
  *) echo "test_slurm: FAILED: the local SLURM cluster did not come up"; exit 1 ;;
esac
echo "test_slurm: cluster up after $((SECONDS - started_at)) s"

# The job scripts must do without the root flags of Open MPI (srun --mpi=pmix
# needs none; the mpirun fallback sets them itself), and find kembed on PATH.
unset OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM KEMBED KEMBED_LAUNCHER KEMBED_SRUN_MPI
# The test node advertises 4 CPUs on 2 cores (config_overrides): Open MPI,
# believing it has a core per rank, busy-polls and 4 ranks run 10-15x slower
# (45-65 s instead of 4 s for n = 400). Yielding when idle avoids that.
export OMPI_MCA_mpi_yield_when_idle=1
source "$cluster/env.sh"
export PATH="$(dirname "$kembed"):$PATH"
export KEMBED_REPORT="$src/jobs/report.py"
python=python3
/usr/bin/python3 -c "import matplotlib" 2>/dev/null && python=/usr/bin/python3
export KEMBED_PYTHON=$python
have_matplotlib=0
"$python" -c "import matplotlib" 2>/dev/null && have_matplotlib=1
submit=$work/submit
mkdir -p "$submit"
cd "$submit"

failures=0
passed=0
check() {  # description, command...: the command must succeed
  local what=$1
  shift
  if "$@"; then
    echo "ok: $what"
    passed=$((passed + 1))
  else
    echo "FAILED: $what"
    failures=$((failures + 1))
  fi
}
last_job=""
submit_wait() {  # sbatch options and script...: runs sbatch --wait (at most 90 s), sets last_job
  local out status
  out=$(timeout 90 sbatch --wait "$@" 2>&1)
  status=$?
  echo "$out" | sed 's/^/  sbatch: /'
  last_job=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' <<<"$out" | head -1)
  [ "$status" -eq 124 ] && echo "  sbatch --wait did not return within 90 s"
  return "$status"
}
log_of() { cat "$submit"/*-"$1".out 2>/dev/null; }
show_log() { echo "  --- job $1 log:"; log_of "$1" | sed 's/^/  | /'; }
json_is() {  # file, python expression on r (the parsed JSON) that must be true
  "$python" -c "import json, sys; r = json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" ||
    { echo "  $1: not ($2)"; return 1; }
}
job_state() { timeout 10 scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*\|ExitCode=[0-9:]*' | tr '\n' ' '; }

# --- the scripts themselves ----------------------------------------------------
one_job_script() {  # run.sbatch replaces the per-method copies
  local left
  left=$(cd "$src/jobs" && ls kpca.sbatch pca.sbatch mds.sbatch 2>/dev/null)
  [ -z "$left" ] || { echo "  still there: $left"; return 1; }
  bash -n "$src/jobs/run.sbatch" && bash -n "$src/jobs/scaling.sbatch"
}
check "one job script (run.sbatch), no per-method copies; the scripts parse" one_job_script
configs_name_methods() {  # every example config says which command it is for
  local f m bad=0
  for f in "$src"/configs/*.ini; do
    m=$(sed -n 's/^# kembed-method: \([a-z]*\)$/\1/p' "$f")
    if [ -z "$m" ] || ! "$kembed" "$m" --help >/dev/null 2>&1; then echo "  $f: '$m'"; bad=1; fi
  done
  return "$bad"
}
check "every config in configs/ names a kembed command ('# kembed-method: NAME')" configs_name_methods
sbatch_lines_explained() {
  local f
  for f in "$src"/jobs/*.sbatch; do
    awk -v f="$f" '/^#SBATCH/ && prev !~ /^# / && prev !~ /^##SBATCH/ { print "  " f ": unexplained: " $0; bad = 1 } { prev = $0 } END { exit bad }' "$f" || return 1
  done
}
check "every #SBATCH line has a comment above it" sbatch_lines_explained

# --- run.sbatch, method and output-dir from the config, srun --mpi=pmix -----------
sed "s#^output-dir = .*#output-dir = $work/out/kpca-small#" "$src/configs/kpca-circles-small.ini" >"$work/kpca-small.ini"
check "run.sbatch CONFIG (the config says '# kembed-method: kpca') succeeds" submit_wait "$src/jobs/run.sbatch" "$work/kpca-small.ini"
job=$last_job
out=$work/out/kpca-small
check "its run.json: kpca, 2 ranks, n = 400 generated" json_is "$out/run.json" \
  'r["method"] == "kpca" and r["ranks"] == 2 and r["n"] == 400 and r["input"]["format"] == "generated"'
check "its embedding.csv has 400 rows of 2 components" bash -c "[ \$(wc -l <'$out/embedding.csv') -eq 401 ] && head -1 '$out/embedding.csv' | grep -q '^c1,c2'"
info=$out/job-$job
check "job information next to the results" bash -c "cd '$info' && [ -s environment.txt ] && [ -s modules.txt ] && grep -q '^kembed ' version.txt && grep -qx '$(hostname -s)' nodes.txt && cmp -s config.ini '$work/kpca-small.ini' && grep -q 'srun --mpi=pmix' command.txt && grep -qx 0 exit_status.txt"
check "threads set explicitly in the job" grep -q '^OPENBLAS_NUM_THREADS=1$' "$info/environment.txt"
check "job $job COMPLETED with exit code 0" bash -c "[[ '$(job_state "$job")' == *'JobState=COMPLETED ExitCode=0:0'* ]]"
check "the log names the method" bash -c "grep -q 'kembed job $job: kpca, 2 ranks' $submit/*-$job.out"
[ "$failures" -eq 0 ] || show_log "$job"

# --- METHOD given, the repository's config, --output-dir after it, 4 ranks, mpirun --
check "run.sbatch kpca CONFIG --ntasks=4 with the mpirun fallback succeeds" \
  submit_wait --ntasks=4 --export=ALL,KEMBED_LAUNCHER=mpirun "$src/jobs/run.sbatch" kpca "$src/configs/kpca-circles-small.ini" --output-dir "$work/out/kpca-mpirun"
job=$last_job
check "its run.json: 4 ranks on a 2x2 grid" json_is "$work/out/kpca-mpirun/run.json" \
  'r["ranks"] == 4 and r["grid"] == {"nprow": 2, "npcol": 2}'
check "the log names the mpirun launcher" bash -c "grep -q 'launcher mpirun' $submit/*-$job.out"
check "same embedding as on 2 ranks with srun (to rounding)" "$python" - "$out/embedding.csv" "$work/out/kpca-mpirun/embedding.csv" <<'PY'
import csv, sys
a, b = ([list(map(float, row)) for row in list(csv.reader(open(p)))[1:]] for p in sys.argv[1:3])
worst = max(abs(x - y) for ra, rb in zip(a, b) for x, y in zip(ra, rb))
sys.exit(0 if len(a) == len(b) == 400 and worst < 1e-8 else print("  max difference", worst) or 1)
PY

# --- a bad config must fail, say why, and leave no result -----------------------
sed -e "s#^output-dir = .*#output-dir = $work/out/bad#" -e 's/^kernel = .*/kernel = nonsense/' \
  "$src/configs/kpca-circles-small.ini" >"$work/bad.ini"
check "a job with a bad config fails (sbatch --wait exits non-zero)" bash -c "! timeout 90 sbatch --wait '$src/jobs/run.sbatch' '$work/bad.ini' >'$work/bad.sbatch' 2>&1"
job=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' "$work/bad.sbatch")
check "its log carries kembed's error" bash -c "grep -q '^kembed: error: .*nonsense' $submit/*-$job.out"
check "job $job FAILED with exit code 1" bash -c "[[ '$(job_state "$job")' == *'JobState=FAILED ExitCode=1:0'* ]]"
check "no result directory, job information kept as .failed-job-$job" \
  bash -c "[ ! -e '$work/out/bad' ] && grep -qx 1 '$work/out/bad.failed-job-$job/exit_status.txt'"
check "a missing config fails before launching" bash -c "! timeout 90 sbatch --wait '$src/jobs/run.sbatch' kpca '$work/nope.ini' >'$work/nope.sbatch' 2>&1"
job=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' "$work/nope.sbatch")
check "  and says so" bash -c "grep -q \"cannot read config file '$work/nope.ini'\" $submit/*-$job.out"
check "a job asking for more CPUs than the node has is refused at once (no PENDING forever)" \
  bash -c "! timeout 20 sbatch --wait --ntasks=64 '$src/jobs/run.sbatch' '$work/kpca-small.ini' >'$work/big.sbatch' 2>&1 && grep -q 'error' '$work/big.sbatch'"
# Method mistakes fail in the script, before anything is launched or written.
method_refused() {  # expected message fragment, run.sbatch arguments...
  local want=$1 out job
  shift
  out=$(timeout 90 sbatch --wait "$src/jobs/run.sbatch" "$@" 2>&1) && { echo "  exit 0: $out"; return 1; }
  job=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' <<<"$out" | head -1)
  grep -qF -- "$want" "$submit"/*-"$job".out || { show_log "$job"; return 1; }
  [[ "$(job_state "$job")" == *'JobState=FAILED ExitCode=2:0'* ]] || { echo "  state: $(job_state "$job")"; return 1; }
}
check "a METHOD the config contradicts is refused" \
  method_refused "METHOD is 'pca' but '$work/kpca-small.ini' says '# kembed-method: kpca'" pca "$work/kpca-small.ini"
grep -v '^# kembed-method:' "$work/kpca-small.ini" >"$work/unnamed.ini"
check "a misspelt METHOD is refused" method_refused "is 'kcpa' a kembed command?" kcpa "$work/unnamed.ini"
check "no METHOD and no '# kembed-method:' line is refused" \
  method_refused "no METHOD given and '$work/unnamed.ini' has no '# kembed-method: NAME' line" "$work/unnamed.ini"
check "  and left no job information behind" bash -c "! compgen -G '$work/out/kpca-small.failed-job-*' >/dev/null"

# --- run.sbatch for pca and mds: METHOD on the command line, then named by the config --
for method in pca mds; do
  printf 'generate = blobs\nrows = 200\nseed = 3\ncomponents = 2\noutput-dir = %s\n' "$work/out/$method" >"$work/$method.ini"
  check "run.sbatch $method CONFIG succeeds" submit_wait -J "kembed-$method" "$src/jobs/run.sbatch" "$method" "$work/$method.ini"
  job=$last_job
  check "  its run.json says $method, 2 ranks, n = 200" json_is "$work/out/$method/run.json" \
    "r['method'] == '$method' and r['ranks'] == 2 and r['n'] == 200"
  check "  its log is kembed-$method-$job.out" test -s "$submit/kembed-$method-$job.out"
  check "  job information next to the results" grep -q "kembed $method --config" "$work/out/$method/job-$job/command.txt"
done
# The repository's own mds example, which names its method; --rows keeps it small.
check "run.sbatch configs/mds-example.ini (method from the config) succeeds" \
  submit_wait "$src/jobs/run.sbatch" "$src/configs/mds-example.ini" --rows 120 --output-dir "$work/out/mds-example"
check "  its run.json says mds, n = 120" json_is "$work/out/mds-example/run.json" "r['method'] == 'mds' and r['n'] == 120"

# --- scaling studies and the report ------------------------------------------------
check "strong scaling (1, 2 ranks) through scaling.sbatch" \
  submit_wait --ntasks=2 --export=ALL,ROWS=600 "$src/jobs/scaling.sbatch" strong "$src/configs/kpca-scaling.ini" "$work/strong" 1 2
check "  one run.json per rank count, same n" bash -c "cd '$work/strong' && \
  '$python' -c 'import json; a, b = (json.load(open(f\"strong-np{p}/run.json\")) for p in (1, 2)); exit(not (a[\"ranks\"], b[\"ranks\"], a[\"n\"], b[\"n\"]) == (1, 2, 600, 600))'"
check "  study information saved" bash -c "ls '$work/strong'/job-*/version.txt '$work/strong'/job-*/nodes.txt >/dev/null"
check "weak scaling (1, 2 ranks): n grows with sqrt(ranks)" \
  submit_wait --ntasks=2 --export=ALL,ROWS=300 "$src/jobs/scaling.sbatch" weak "$src/configs/kpca-scaling.ini" "$work/weak" 1 2
check "  n = 300 and 424" bash -c "grep -q '\"n\": 300' '$work/weak/weak-np1/run.json' && grep -q '\"n\": 424' '$work/weak/weak-np2/run.json'"
rm -f "$work/strong/scaling.csv" "$work/strong/scaling.png"
# --output names a directory whose parents do not exist yet: the report creates them.
report=$work/reports/both/studies
"$python" "$src/jobs/report.py" "$work/strong" "$work/weak" --output "$report"
status=$?
csv_ok() {
  "$python" - "$report/scaling.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
need = ["method", "mode", "ranks", "grid", "n", "k", "solver", "time_solve_s", "time_total_s",
        "speedup", "efficiency", "peak_memory_bytes_per_rank"]
missing = [c for c in need if c not in rows[0]]
modes = sorted((r["mode"], int(r["ranks"]), int(r["n"])) for r in rows)
base = [r for r in rows if r["ranks"] == "1"]
ok = not missing and modes == [("strong", 1, 600), ("strong", 2, 600), ("weak", 1, 300), ("weak", 2, 424)] \
    and all(float(r["speedup"]) == 1 and float(r["efficiency"]) == 1 for r in base) \
    and all(float(r["time_total_s"]) > 0 and int(r["peak_memory_bytes_per_rank"]) > 0 for r in rows)
if not ok:
    print("  missing columns", missing, "runs", modes)
sys.exit(0 if ok else 1)
PY
}
check "report: scaling.csv with ranks, grid, n, k, solver, phases, speedup, efficiency, memory" csv_ok
check "report: its solver column is run.json's solver_used (evr here)" bash -c \
  "[ \"\$(cut -d, -f9 '$report/scaling.csv' | sort -u | tr '\n' ' ')\" = 'evr solver ' ]"

# Grouping by the solver that ran: runs asked for auto, two of them ran krylov
# and two evd (as auto does when n and k differ); each group is its own
# speedup curve. Times are made up so the expected numbers are known exactly.
fake=$work/fake-study
"$python" - "$fake" <<'PY'
import json, os, sys
for ranks, used, total in [(1, "evd", 8.0), (2, "evd", 5.0), (1, "krylov", 2.0), (2, "krylov", 1.6)]:
    d = os.path.join(sys.argv[1], f"{used}-np{ranks}")
    os.makedirs(d)
    json.dump({"method": "kpca", "ranks": ranks, "grid": {"nprow": 1, "npcol": ranks}, "n": 900,
               "components": 2, "solver": "auto", "solver_used": used,
               "time_seconds": {"assemble": total / 4, "solve": 3 * total / 4},
               "time_seconds_total": total, "peak_memory_bytes_per_rank_max": 1}, open(f"{d}/run.json", "w"))
PY
"$python" "$src/jobs/report.py" "$fake" --output "$fake/report" >/dev/null 2>&1
grouped_by_solver_used() {
  "$python" - "$fake/report/scaling.csv" <<'PY'
import csv, sys
rows = {(r["solver"], int(r["ranks"])): r for r in csv.DictReader(open(sys.argv[1]))}
want = {("evd", 1): 1.0, ("evd", 2): 8.0 / 5.0, ("krylov", 1): 1.0, ("krylov", 2): 2.0 / 1.6}
got = {key: float(r["speedup"]) for key, r in rows.items()}
ok = set(got) == set(want) and all(abs(got[k] - want[k]) < 1e-3 for k in want) and \
    all(r["solver_asked"] == "auto" and r["mode"] == "strong" for r in rows.values())
sys.exit(0 if ok else print("  speedups", got) or 1)
PY
}
check "report: runs grouped by solver_used (speedup within each solver)" grouped_by_solver_used
if [ "$have_matplotlib" = 1 ]; then
  check "report exits 0" [ "$status" -eq 0 ]
  check "report: scaling.png is a PNG image" bash -c "[ \"\$(head -c 8 '$report/scaling.png' | od -An -tx1 | tr -d ' ')\" = 89504e470d0a1a0a ] && [ \$(stat -c %s '$report/scaling.png') -gt 10000 ]"
  legends_off_data() {  # every legend's box lies outside both axes, and inside the saved image
    "$python" - "$src/jobs/report.py" "$work/strong" "$work/weak" "$fake" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("report", sys.argv[1])
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)
bad = []
for dirs in ([sys.argv[2], sys.argv[3]], [sys.argv[4]]):
    runs = report.find_runs(dirs)
    fig = report.make_figure(report.assign_modes(runs, "auto"), report.phases_of(runs))
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    axes_boxes = [ax.get_window_extent(renderer) for ax in fig.axes]
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    if len(legends) != 2:
        bad.append(f"{dirs}: {len(legends)} legends")
    for legend in legends:
        box = legend.get_window_extent(renderer)
        if any(box.overlaps(a) for a in axes_boxes):
            bad.append(f"{dirs}: legend {box} overlaps an axes")
    tight = fig.get_tightbbox(renderer)
    if any(not tight.contains(l.get_window_extent(renderer).x0 / fig.dpi, l.get_window_extent(renderer).y0 / fig.dpi) for l in legends):
        bad.append(f"{dirs}: a legend falls outside the saved image")
sys.exit(0 if not bad else print("  " + "\n  ".join(bad)) or 1)
PY
  }
  check "report: legends off the data (below the axes, inside the image)" legends_off_data
else
  echo "not run: the plot check (no matplotlib: install python3-matplotlib)"
  check "report without matplotlib exits 3 after writing the CSV" [ "$status" -eq 3 ]
fi

echo "test_slurm: $((SECONDS - started_at)) s"
echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
