#!/usr/bin/env bash
# A real Grid Engine cell on this one host (Debian's gridengine-master, -exec and -client): the
# qmaster and execution daemons (two hosts, ge1 and ge2, each in namespaces of its own: see
# gridengine-local-hosts.sh), a queue and parallel environments, for the test suite and for users
# without a cluster. It configures the system's own cell (SGE_ROOT=/var/lib/gridengine, cell
# `default`), which is where Debian's packages put it.
#
#   scripts/gridengine-local.sh up       install (apt) if missing, configure, start; a no-op when up
#   scripts/gridengine-local.sh down     delete the cell's jobs, stop its daemons (by pid), kill
#                                        what of its jobs outlived them (a warning names each),
#                                        remove the hosts' namespaces, veths and bridge
#   scripts/gridengine-local.sh status   print the queue and the jobs; exit 0 when up, 3 when down
#   scripts/gridengine-local.sh env      print `export SGE_ROOT=... SGE_CELL=...` for `eval "$(... env)"`
#   scripts/gridengine-local.sh pids     print the pids of the cell's live daemons, one per line
#   scripts/gridengine-local.sh hosts    print the execution hosts `up` makes, one per line
#   scripts/gridengine-local.sh netns-check   exit 0 when a cell of several hosts can be made here, else 3 + why
#
# What this host needs, each fixed here once (the packages alone leave a cell that cannot run jobs):
#   - the host's two names agree: its name resolves to 127.0.0.1, which Grid Engine names
#     `localhost`; a host_aliases file makes both one host, and act_qmaster names it;
#   - root may submit: the global configuration's min_uid and min_gid are 0 (1000 by default);
#   - qdel ends every process of a job, also those in a session of their own (a server started
#     with setsid): execd_params ENABLE_ADDGRP_KILL=TRUE kills by the job's additional group id,
#     where by default only the job script's process group is killed;
#   - the host is a submit host, and a queue (disagg.q) with parallel environments runs jobs, every
#     task started under the job's control with qrsh -inherit: `disagg` (all slots on one host, for a
#     job of one node) and `disagg.K` for K = 1..slots (exactly K slots on each host: a job of N
#     nodes with K tasks each asks disagg.K for N*K slots, so its N nodes are N hosts);
#   - a `gpu` consumable per slot (4 fake GPUs on each host, as a node of the local SLURM cluster has);
#   - the queue's tmpdir, where each job gets its TMPDIR, is /var/tmp/disagg-ge-jobs: on a host in
#     namespaces a fresh tmpfs, so a job's TMPDIR is local to its host as on a real cluster;
#   - the queue has no load threshold (a loaded 2-core box would put it in alarm state), the
#     scheduler runs every second and the accounting file is written at once (a finished job's
#     exit status is read from it).
# Settings (environment): DISAGG_GE_HOSTS (execution hosts, default 2; 1 runs the execution daemon
# in this machine's own namespaces, named as the machine), DISAGG_GE_HOST_PREFIX (their names,
# default ge: ge1, ge2, ...), DISAGG_GE_SUBNET (their network, default 10.213.9),
# DISAGG_GE_SLOTS (slots of each host, default 16: a 16-rank config of one node fits),
# DISAGG_GE_WAIT (seconds `up` waits for the execution hosts, default 60). Runs as root.
set -euo pipefail

export SGE_ROOT="${SGE_ROOT:-/var/lib/gridengine}"
export SGE_CELL="${SGE_CELL:-default}"
export PATH="$PATH:/usr/sbin:/sbin"
SLOTS="${DISAGG_GE_SLOTS:-16}"
[[ $SLOTS =~ ^[1-9][0-9]{0,2}$ ]] || { echo "gridengine-local: error: DISAGG_GE_SLOTS=$SLOTS is not 1..999" >&2; exit 2; }
WAIT_SEC="${DISAGG_GE_WAIT:-60}"
HOST_COUNT="${DISAGG_GE_HOSTS:-2}"
[[ $HOST_COUNT =~ ^[1-9]$ ]] || { echo "gridengine-local: error: DISAGG_GE_HOSTS=$HOST_COUNT is not 1..9" >&2; exit 2; }
HOST_PREFIX="${DISAGG_GE_HOST_PREFIX:-ge}"
[[ $HOST_PREFIX =~ ^[a-z][a-z0-9-]{0,9}$ ]] || { echo "gridengine-local: error: DISAGG_GE_HOST_PREFIX=$HOST_PREFIX is not a short lower-case name" >&2; exit 2; }
GPUS_PER_HOST=4
COMMON="$SGE_ROOT/$SGE_CELL/common"
QMASTER_SPOOL=/var/spool/gridengine/qmaster
EXECD_SPOOL=/var/spool/gridengine/execd
QUEUE=disagg.q
PE=disagg
# The queue's tmpdir; on a host in namespaces, a tmpfs of its own.
JOB_TMPDIR=/var/tmp/disagg-ge-jobs
# The names' files and what `down` must remove of the hosts' namespaces.
HOSTS_DIR=/var/spool/gridengine/disagg-hosts

log() { echo "gridengine-local: $*" >&2; }
die() { log "error: $*"; exit 1; }

ensure_packages() {
  command -v qsub >/dev/null && [[ -x /usr/sbin/sge_qmaster && -x /usr/sbin/sge_execd ]] && return 0
  command -v apt-get >/dev/null || die "Grid Engine is missing and there is no apt-get to install it"
  log "installing gridengine-master gridengine-exec gridengine-client with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null || die "apt-get update failed"
  apt-get install -y -qq gridengine-master gridengine-exec gridengine-client >/dev/null ||
    die "apt-get install of Grid Engine failed"
}

host_name() { hostname -s; }

# The execution hosts: this machine itself, or ge1..geN in namespaces.
EXEC_HOSTS=()
if ((HOST_COUNT == 1)); then
  EXEC_HOSTS=("$(host_name)")
else
  for ((host_number = 1; host_number <= HOST_COUNT; host_number++)); do EXEC_HOSTS+=("$HOST_PREFIX$host_number"); done
fi
# shellcheck source=scripts/gridengine-local-hosts.sh
source "$(dirname "${BASH_SOURCE[0]}")/gridengine-local-hosts.sh"
# shellcheck source=scripts/gridengine-local-config.sh
source "$(dirname "${BASH_SOURCE[0]}")/gridengine-local-config.sh"

# qconf with the qmaster's view of the names (the hosts' names resolve only there).
cell_qconf() {
  if ((HOST_COUNT > 1)); then in_qmaster_view qconf "$@"; else qconf "$@"; fi
}

# True when process $1 lives (not a zombie) and is the daemon $2.
proc_alive() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  [[ $stat == "$1 ($2) "* && $stat != "$1 ($2) Z"* ]]
}

# The pid a daemon wrote in its spool folder, when that process still runs it.
daemon_pid() {
  local file=$1 name=$2 pid
  pid=$(cat "$file" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] && proc_alive "$pid" "$name" && echo "$pid"
}

# execd spools under the name it resolves for itself (`localhost` for this machine's own), so its
# pid file is found by glob: `<spool folder> <pid>` for every live one.
qmaster_pid() { daemon_pid "$QMASTER_SPOOL/qmaster.pid" sge_qmaster; }
execd_pids() {
  local file pid
  for file in "$EXECD_SPOOL"/*/execd.pid; do
    pid=$(daemon_pid "$file" sge_execd) && echo "$(basename "$(dirname "$file")") $pid"
  done
  return 0
}

# True when spool folder $1 is an execution host of this cell as asked (this machine's own
# execd spools under whatever name it resolves for itself: any name but a namespaced host's).
wanted_execd() {
  if ((HOST_COUNT > 1)); then [[ " ${EXEC_HOSTS[*]} " == *" $1 "* ]]; else [[ ! $1 =~ ^$HOST_PREFIX[0-9]+$ ]]; fi
}

# Sends SIGTERM to daemon $1 (named $2), then SIGKILL after 30 s.
stop_daemon() {
  local pid=$1 name=$2 i
  kill "$pid" 2>/dev/null || true
  for ((i = 0; i < 30; i++)); do proc_alive "$pid" "$name" || return 0; sleep 1; done
  log "warning: $name $pid did not stop in 30 s; killing it"
  kill -9 "$pid" 2>/dev/null || true
}

# The names: act_qmaster is this host, and `localhost` (what 127.0.0.1 resolves back to) is an alias of it.
write_names() {
  local host
  host=$(host_name)
  echo "$host" >"$COMMON/act_qmaster"
  [[ $host == localhost ]] || echo "$host localhost" >"$COMMON/host_aliases"
  chown sgeadmin:sgeadmin "$COMMON/act_qmaster" "$COMMON/host_aliases" 2>/dev/null || true
}

# The qmaster, seeing the names of this cell's hosts; one that sees others is restarted.
start_qmaster() {
  local pid names=/etc/hosts
  ((HOST_COUNT > 1)) && names=$HOSTS_DIR/hosts.qmaster
  if pid=$(qmaster_pid); then
    cmp -s "/proc/$pid/root/etc/hosts" "$names" && return 0
    log "the qmaster sees other host names than this cell's: restarting it"
    stop_daemon "$pid" sge_qmaster
  fi
  mkdir -p /var/run/gridengine && chown sgeadmin:sgeadmin /var/run/gridengine
  if ((HOST_COUNT > 1)); then
    in_qmaster_view env SGE_MASTER_PIDFILE=/var/run/gridengine/qmaster.pid /usr/sbin/sge_qmaster
  else
    SGE_MASTER_PIDFILE=/var/run/gridengine/qmaster.pid /usr/sbin/sge_qmaster
  fi || die "sge_qmaster did not start: see $QMASTER_SPOOL/messages"
  local i
  for ((i = 0; i < 30; i++)); do qstat >/dev/null 2>&1 && return 0; sleep 1; done
  die "sge_qmaster does not answer after 30 s: $(tail -n 3 "$QMASTER_SPOOL/messages" 2>/dev/null)"
}

# The execution daemons of this cell's hosts; those of other hosts (a cell of another size before) stop.
start_execds() {
  local spool pid host
  mkdir -p "$EXECD_SPOOL" "$JOB_TMPDIR" && chown sgeadmin:sgeadmin "$EXECD_SPOOL"
  chmod 1777 "$JOB_TMPDIR"
  while read -r spool pid; do
    [[ -n $pid ]] && ! wanted_execd "$spool" && { log "stopping the execution daemon of $spool (not a host of this cell)"; stop_daemon "$pid" sge_execd; }
  done < <(execd_pids)
  if ((HOST_COUNT == 1)); then
    [[ -n $(execd_pids) ]] || /usr/sbin/sge_execd || die "sge_execd did not start"
    return 0
  fi
  for host in "${EXEC_HOSTS[@]}"; do
    daemon_pid "$EXECD_SPOOL/$host/execd.pid" sge_execd >/dev/null || start_execd_on "$host"
  done
}

# Up: each host's queue instance reports a load (its execd is known) and is in no unavailable state.
queue_ready() {
  local listing line host
  listing=$(qstat -f -q "$QUEUE" 2>/dev/null) || return 1
  for host in "${EXEC_HOSTS[@]}"; do
    line=$(grep "^$QUEUE@$host " <<<"$listing") || return 1
    [[ $(awk '{print $4}' <<<"$line") != -NA- && -z $(awk '{print $6}' <<<"$line") ]] || return 1
  done
}

up() {
  ensure_packages
  [[ $(id -u) == 0 ]] || die "run as root: the daemons and the cell's configuration are the system's"
  write_names
  if ((HOST_COUNT > 1)); then
    write_hosts_files
    hosts_network_up
  fi
  start_qmaster
  configure
  start_execds
  local i host
  for ((i = 0; i < WAIT_SEC; i++)); do
    if queue_ready; then
      # Each host's GPUs, once its execution daemon has made it an execution host.
      for host in "${EXEC_HOSTS[@]}"; do
        cell_qconf -mattr exechost complex_values "gpu=$GPUS_PER_HOST" "$host" >/dev/null 2>&1 ||
          die "could not give the execution host $host its $GPUS_PER_HOST GPUs (qconf -mattr exechost complex_values)"
      done
      log "up: queue $QUEUE on ${EXEC_HOSTS[*]}, $SLOTS slots each, parallel environments $PE and $PE.1..$PE.$SLOTS, $GPUS_PER_HOST GPUs each"
      return 0
    fi
    sleep 1
  done
  qstat -f >&2 || true
  die "the queue $QUEUE is not available after $WAIT_SEC s"
}

# Processes of jobs that outlived the daemons: their shepherds' children.
job_processes() {
  local pid
  for pid in $(pgrep -x sge_shepherd 2>/dev/null || true); do
    echo "$pid"
    pgrep -P "$pid" 2>/dev/null || true
  done
}

down() {
  local pid
  if qmaster_pid >/dev/null; then
    qdel -f -u '*' >/dev/null 2>&1 || true
    local i
    for ((i = 0; i < 20; i++)); do [[ -z $(qstat -u '*' 2>/dev/null) ]] && break; sleep 1; done
  fi
  local pids
  pids=$(execd_pids | awk '{print $2}'; qmaster_pid || true)
  for pid in $pids; do kill "$pid" 2>/dev/null || true; done
  local i
  for ((i = 0; i < 30; i++)); do
    [[ -z $(execd_pids) ]] && ! qmaster_pid >/dev/null && break
    sleep 1
  done
  for pid in $(execd_pids | awk '{print $2}'; qmaster_pid || true); do log "warning: daemon $pid did not stop in 30 s; killing it"; kill -9 "$pid" 2>/dev/null || true; done
  local outlived=() described=()
  for pid in $(job_processes); do
    outlived+=("$pid")
    described+=("$pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)")
    kill -9 "$pid" 2>/dev/null || true
  done
  ((${#outlived[@]} == 0)) || log "warning: ${#outlived[@]} process(es) of this cluster's jobs outlived its daemons; killed: $(IFS=';'; echo "${described[*]}")"
  # The hosts' namespaces go once nothing runs in them (whatever size of cell made them).
  hosts_network_down
  log "down"
}

status() {
  if ! qmaster_pid >/dev/null || ! qstat >/dev/null 2>&1; then
    echo "gridengine-local: down"
    return 3
  fi
  qstat -f -u '*'
  queue_ready || { echo "gridengine-local: the qmaster runs, the queue $QUEUE is not available"; return 3; }
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  env) echo "export SGE_ROOT=$SGE_ROOT SGE_CELL=$SGE_CELL" ;;
  pids) { qmaster_pid || true; execd_pids | awk '{print $2}'; } ;;
  hosts) printf '%s\n' "${EXEC_HOSTS[@]}" ;;
  netns-check) if why=$(netns_unsupported); then echo "$why"; exit 3; fi ;;
  *) echo "usage: $0 up|down|status|env|pids|hosts|netns-check" >&2; exit 2 ;;
esac
