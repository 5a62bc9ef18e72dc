#!/usr/bin/env bash
# Stops the daemons that tests/slurm/cluster_up.sh DIR started, by the process
# ids recorded in DIR/pids (never by name), in reverse order: TERM, then KILL
# after 10 s. A recorded id whose process is no longer the daemon we started
# (its command line does not name it and DIR) is left alone. Jobs still
# queued or running are cancelled first, with SLURM client commands only while
# our slurmctld is alive (clients retry for ~9 s when it is gone).
#
#   tests/slurm/cluster_down.sh DIR [--keep]    (--keep leaves DIR on disk)
set -uo pipefail
dir=${1:?usage: cluster_down.sh DIR [--keep]}
dir=$(cd "$dir" 2>/dev/null && pwd) || exit 0
[ -f "$dir/pids" ] || exit 0

ours() {  # pid name: is pid still the daemon `name` we started (its name and our directory on its command line)?
  local cmdline
  cmdline=$(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline") || return 1
  [[ $cmdline == *"$2"* && $cmdline == *"$dir"* ]]
}

# Jobs still running (a test that timed out) would outlive slurmd: cancel them
# first, but only while our slurmctld is alive (clients retry ~9 s otherwise).
ctld=$(awk '$1 == "slurmctld" { print $2 }' "$dir/pids")
if [ -n "$ctld" ] && ours "$ctld" slurmctld && [ -f "$dir/etc/slurm.conf" ]; then
  export SLURM_CONF="$dir/etc/slurm.conf"
  jobs=$(timeout 10 squeue -h -o %i 2>/dev/null | tr '\n' ' ')
  if [ -n "${jobs// /}" ]; then
    echo "cluster_down: cancelling jobs $jobs" >&2
    # shellcheck disable=SC2086
    timeout 10 scancel $jobs 2>/dev/null
    for _ in $(seq 20); do
      [ -z "$(timeout 5 squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.5
    done
  fi
fi

pids=()
while read -r name pid; do
  [ -n "${pid:-}" ] && ours "$pid" "$name" && pids=("$pid" "${pids[@]}")
done <"$dir/pids"

for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
for _ in $(seq 100); do
  remaining=()
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && remaining+=("$pid"); done
  [ ${#remaining[@]} -eq 0 ] && break
  sleep 0.1
done
for pid in "${remaining[@]}"; do
  echo "cluster_down: pid $pid did not stop after TERM; sending KILL" >&2
  kill -KILL "$pid" 2>/dev/null
done
: >"$dir/pids"
[ "${2:-}" = "--keep" ] || rm -rf "$dir"
