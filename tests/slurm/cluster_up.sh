#!/usr/bin/env bash
# Brings up a single-node SLURM cluster inside this machine, without systemd:
# munged (as user munge, own key and socket), slurmctld and slurmd (as root,
# in the foreground, backgrounded here), all state under one directory.
#
#   tests/slurm/cluster_up.sh DIR [CPUS]
#
# DIR must be an empty or missing directory. On success DIR/env.sh exports
# SLURM_CONF (source it before sbatch/srun), DIR/pids lists "name pid" of every
# daemon started (tests/slurm/cluster_down.sh DIR stops exactly those), and the
# node is idle. CPUS (default 4) is what the node advertises: with
# SlurmdParameters=config_overrides a 2-core machine can run 4-rank jobs.
# Exit codes: 0 up; 77 SLURM cannot run here (the reason is printed); 1 failure.
set -uo pipefail

dir=${1:?usage: cluster_up.sh DIR [CPUS]}
cpus=${2:-4}
skip() { echo "SKIP: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

for tool in munged mungekey slurmctld slurmd sbatch srun sinfo scontrol setpriv; do
  command -v "$tool" >/dev/null 2>&1 ||
    skip "'$tool' not found: install the Debian packages slurm-wlm and munge (scripts/test does: KEMBED_TEST_PACKAGES in scripts/lib.sh)"
done
[ "$(id -u)" -eq 0 ] || skip "the local cluster runs slurmd as root and munged as user munge; run as root"
id munge >/dev/null 2>&1 || skip "user 'munge' does not exist (the Debian package munge creates it)"
[ -e /usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix.so ] || [ -n "$(find /usr/lib -name mpi_pmix.so 2>/dev/null | head -1)" ] ||
  skip "SLURM's mpi_pmix plugin is missing (srun --mpi=pmix is the only launch that works with Debian's Open MPI)"

# slurmd finds its node by host name, and srun connects to it: the short
# host name must resolve. Debian containers often lack it in /etc/hosts.
host=$(hostname -s)
if ! getent hosts "$host" >/dev/null 2>&1; then
  echo "cluster_up: host name '$host' does not resolve; adding '127.0.0.1 $host' to /etc/hosts"
  echo "127.0.0.1 $host" >>/etc/hosts || skip "host name '$host' does not resolve and /etc/hosts is not writable"
fi

mkdir -p "$dir" || fail "cannot create $dir"
dir=$(cd "$dir" && pwd)
[ -z "$(ls -A "$dir")" ] || fail "$dir is not empty"
# munged refuses directories that others can write to; it needs to traverse to its own.
chmod 0711 "$dir"
setpriv --reuid=munge --regid=munge --clear-groups test -x "$dir" ||
  fail "user munge cannot enter $dir (make it and its parents searchable: chmod o+x)"
mkdir -p "$dir/munge" "$dir/munge-socket" "$dir/state" "$dir/spool" "$dir/log" "$dir/tmp" "$dir/etc"
# Key, log and seed private to munge; the socket directory must be searchable by all.
chown munge:munge "$dir/munge" "$dir/munge-socket" && chmod 0700 "$dir/munge" && chmod 0755 "$dir/munge-socket"
chmod 1777 "$dir/tmp"
: >"$dir/pids"

# Two free TCP ports on the loopback (not the defaults: another cluster may run).
read -r ctld_port slurmd_port < <(/usr/bin/python3 - <<'PY'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])
PY
) || fail "cannot find free ports"

memory_mb=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)

cat >"$dir/etc/slurm.conf" <<CONF
# Single-node test cluster written by tests/slurm/cluster_up.sh.
ClusterName=kembedtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge-socket/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/slurmd-%n
SlurmctldPidFile=$dir/state/slurmctld.pid
SlurmdPidFile=$dir/spool/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups, no systemd: track processes through /proc, bind nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
# Refuse at submission a job that can never run, instead of PENDING forever
# (which would make sbatch --wait hang).
EnforcePartLimits=ALL
# Short MinJobAge: sbatch --wait polls every 2 s instead of backing off to 32 s.
MinJobAge=5
SchedulerParameters=batch_sched_delay=0
# srun's PMIx server keeps per-step files here; a private TmpFS avoids stale
# /tmp/spmix_appdir_* of earlier clusters whose job ids restart at 1.
TmpFS=$dir/tmp
# The node advertises $cpus CPUs whatever the hardware has.
SlurmdParameters=config_overrides
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=120 State=UP OverSubscribe=NO
CONF
printf 'export SLURM_CONF=%q\n' "$dir/etc/slurm.conf" >"$dir/env.sh"
export SLURM_CONF="$dir/etc/slurm.conf"

started() { echo "$1 $2" >>"$dir/pids"; }
alive() { kill -0 "$1" 2>/dev/null; }
show_log() { echo "--- $1"; tail -n 30 "$1" 2>/dev/null; }

# munge: own key (0400, owned by munge), socket, pid, log and seed.
mungekey -c -k "$dir/munge/munge.key" >/dev/null 2>&1 || fail "mungekey -c failed"
chown munge:munge "$dir/munge/munge.key" && chmod 0400 "$dir/munge/munge.key"
setpriv --reuid=munge --regid=munge --init-groups \
  munged --foreground --key-file="$dir/munge/munge.key" --socket="$dir/munge-socket/munge.socket" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
  --seed-file="$dir/munge/munged.seed" </dev/null >"$dir/log/munged.out" 2>&1 &
started munged $!
for _ in $(seq 50); do [ -S "$dir/munge-socket/munge.socket" ] && break; alive "$(awk '$1=="munged"{print $2}' "$dir/pids")" || break; sleep 0.1; done
if [ ! -S "$dir/munge-socket/munge.socket" ]; then
  show_log "$dir/log/munged.out"; show_log "$dir/munge/munged.log"
  fail "munged did not create its socket"
fi

slurmctld -D -f "$SLURM_CONF" </dev/null >"$dir/log/slurmctld.out" 2>&1 &
started slurmctld $!
slurmd -D -f "$SLURM_CONF" </dev/null >"$dir/log/slurmd.out" 2>&1 &
started slurmd $!

# Wait (at most 30 s) for the node to be idle. Client commands retry for ~9 s
# when slurmctld is down, so check the daemons are alive before each query.
state=""
for _ in $(seq 60); do
  while read -r name pid; do
    if ! alive "$pid"; then
      show_log "$dir/log/$name.out"; show_log "$dir/log/$name.log"
      fail "$name (pid $pid) exited during bring-up"
    fi
  done <"$dir/pids"
  state=$(timeout 5 sinfo -h -n "$host" -o %T 2>/dev/null | head -1)
  [ "$state" = "idle" ] && break
  sleep 0.5
done
if [ "$state" != "idle" ]; then
  show_log "$dir/log/slurmctld.log"; show_log "$dir/log/slurmd.log"
  fail "node $host not idle after 30 s (state '${state:-unknown}')"
fi
echo "cluster_up: node $host idle with $cpus CPUs; SLURM_CONF=$SLURM_CONF"
