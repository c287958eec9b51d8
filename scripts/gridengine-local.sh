#!/usr/bin/env bash
# A real Grid Engine cell on this one host (Debian's gridengine-master, -exec and -client): the
# qmaster and one execution daemon, a queue and a parallel environment, for the test suite and for
# users without a cluster. It configures the system's own cell (SGE_ROOT=/var/lib/gridengine,
# cell `default`), which is where Debian's packages put it.
#
#   scripts/gridengine-local.sh up       install (apt) if missing, configure, start; a no-op when up
#   scripts/gridengine-local.sh down     delete the cell's jobs, stop both daemons (by pid), kill
#                                        what of its jobs outlived them (a warning names each)
#   scripts/gridengine-local.sh status   print the queue and the jobs; exit 0 when up, 3 when down
#   scripts/gridengine-local.sh env      print `export SGE_ROOT=... SGE_CELL=...` for `eval "$(... env)"`
#   scripts/gridengine-local.sh pids     print the pids of the cell's live daemons, one per line
#
# What this host needs, each fixed here once (the packages alone leave a cell that cannot run jobs):
#   - the host's two names agree: its name resolves to 127.0.0.1, which Grid Engine names
#     `localhost`; a host_aliases file makes both one host, and act_qmaster names it;
#   - root may submit: the global configuration's min_uid and min_gid are 0 (1000 by default);
#   - qdel ends every process of a job, also those in a session of their own (a server started
#     with setsid): execd_params ENABLE_ADDGRP_KILL=TRUE kills by the job's additional group id,
#     where by default only the job script's process group is killed;
#   - the host is a submit host, and a queue (disagg.q) with a parallel environment (disagg: its
#     slots filled host by host, every task started under the job's control with qrsh -inherit) runs jobs;
#   - a `gpu` consumable (4 fake GPUs on the host, as a node of the local SLURM cluster has);
#   - the queue has no load threshold (a loaded 2-core box would put it in alarm state), the
#     scheduler runs every second and the accounting file is written at once (a finished job's
#     exit status is read from it).
# Settings (environment): DISAGG_GE_SLOTS (the queue's and the environment's slots, default 16,
# as many as the local SLURM cluster's CPUs: a 16-rank config fits both),
# DISAGG_GE_WAIT (seconds `up` waits for the execution host, default 60). Runs as root.
set -euo pipefail

export SGE_ROOT="${SGE_ROOT:-/var/lib/gridengine}"
export SGE_CELL="${SGE_CELL:-default}"
export PATH="$PATH:/usr/sbin:/sbin"
SLOTS="${DISAGG_GE_SLOTS:-16}"
[[ $SLOTS =~ ^[1-9][0-9]{0,2}$ ]] || { echo "gridengine-local: error: DISAGG_GE_SLOTS=$SLOTS is not 1..999" >&2; exit 2; }
WAIT_SEC="${DISAGG_GE_WAIT:-60}"
GPUS_PER_HOST=4
COMMON="$SGE_ROOT/$SGE_CELL/common"
QMASTER_SPOOL=/var/spool/gridengine/qmaster
EXECD_SPOOL=/var/spool/gridengine/execd
QUEUE=disagg.q
PE=disagg

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

# execd spools under the name it resolves for itself (`localhost` here), so its pid file is found by glob.
qmaster_pid() { daemon_pid "$QMASTER_SPOOL/qmaster.pid" sge_qmaster; }
execd_pid() {
  local file
  for file in "$EXECD_SPOOL"/*/execd.pid; do daemon_pid "$file" sge_execd && return 0; done
  return 1
}

# The names: act_qmaster is this host, and `localhost` (what 127.0.0.1 resolves back to) is an alias of it.
write_names() {
  local host
  host=$(host_name)
  echo "$host" >"$COMMON/act_qmaster"
  [[ $host == localhost ]] || echo "$host localhost" >"$COMMON/host_aliases"
  chown sgeadmin:sgeadmin "$COMMON/act_qmaster" "$COMMON/host_aliases" 2>/dev/null || true
}

start_qmaster() {
  qmaster_pid >/dev/null && return 0
  mkdir -p /var/run/gridengine && chown sgeadmin:sgeadmin /var/run/gridengine
  SGE_MASTER_PIDFILE=/var/run/gridengine/qmaster.pid /usr/sbin/sge_qmaster || die "sge_qmaster did not start: see $QMASTER_SPOOL/messages"
  local i
  for ((i = 0; i < 30; i++)); do qstat >/dev/null 2>&1 && return 0; sleep 1; done
  die "sge_qmaster does not answer after 30 s: $(tail -n 3 "$QMASTER_SPOOL/messages" 2>/dev/null)"
}

# A configuration object (qconf -s$1 NAME) with `key value` lines replaced, loaded back with qconf -M$1.
modify() {
  local kind=$1 name=$2 file edits=()
  shift 2
  while (($#)); do edits+=(-e "s|^$1 .*|$1 $2|"); shift 2; done
  file=$(mktemp -d)/${name:-$kind}
  # Continued lines (`value \` then more) joined first, so that a replaced value leaves none behind.
  qconf "-s$kind" ${name:+"$name"} | sed -e ':a' -e '/\\$/{N;s/\\\n[[:space:]]*/ /;ba' -e '}' | sed "${edits[@]}" >"$file"
  qconf "-M$kind" "$file" >/dev/null
  rm -rf "$(dirname "$file")"
}

configure() {
  local host
  host=$(host_name)
  modify conf global min_uid 0 min_gid 0 execd_params ENABLE_ADDGRP_KILL=TRUE \
    reporting_params 'accounting=true reporting=false flush_time=00:00:01 joblog=false sharelog=00:00:00 accounting_flush_time=00:00:00'
  modify sconf '' schedule_interval 0:0:1 flush_submit_sec 1 flush_finish_sec 1 job_load_adjustments NONE \
    load_adjustment_decay_time 0:0:0 schedd_job_info true
  qconf -ss 2>/dev/null | grep -qx "$host" || qconf -as "$host" >/dev/null
  if ! qconf -spl 2>/dev/null | grep -qx "$PE"; then
    local file
    file=$(mktemp -d)/$PE
    cat >"$file" <<EOF
pe_name            $PE
slots              $SLOTS
user_lists         NONE
xuser_lists        NONE
start_proc_args    NONE
stop_proc_args     NONE
allocation_rule    \$fill_up
control_slaves     TRUE
job_is_first_task  FALSE
urgency_slots      min
accounting_summary FALSE
qsort_args         NONE
EOF
    qconf -Ap "$file" >/dev/null
    rm -rf "$(dirname "$file")"
  fi
  if ! qconf -sql 2>/dev/null | grep -qx "$QUEUE"; then
    local file
    file=$(mktemp -d)/$QUEUE
    qconf -sq | sed -e "s|^qname .*|qname $QUEUE|" -e "s|^hostlist .*|hostlist $host|" \
      -e 's|^load_thresholds .*|load_thresholds NONE|' -e "s|^slots .*|slots $SLOTS|" \
      -e "s|^pe_list .*|pe_list $PE|" -e 's|^shell .*|shell /bin/bash|' >"$file"
    qconf -Aq "$file" >/dev/null
    rm -rf "$(dirname "$file")"
  fi
  # Fake GPUs as the local SLURM cluster's nodes have them: a consumable `gpu` complex, counted once
  # per job (JOB), GPUS_PER_HOST of them on this host. Nothing binds a job to a device: a count.
  if ! qconf -sc | grep -q '^gpu '; then
    local file
    file=$(mktemp -d)/complexes
    { qconf -sc | grep -v '^#'; echo "gpu gpu INT <= YES JOB 0 0"; } >"$file"
    qconf -Mc "$file" >/dev/null
    rm -rf "$(dirname "$file")"
  fi
  # Slots as asked, also on a cell configured before with another count.
  modify p "$PE" slots "$SLOTS"
  modify q "$QUEUE" slots "$SLOTS"
}

start_execd() {
  execd_pid >/dev/null && return 0
  mkdir -p "$EXECD_SPOOL" && chown sgeadmin:sgeadmin "$EXECD_SPOOL"
  /usr/sbin/sge_execd || die "sge_execd did not start"
}

# Up: the queue instance reports a load (its execd is known) and is in no unavailable state.
queue_ready() {
  local line
  line=$(qstat -f -q "$QUEUE" 2>/dev/null | grep "^$QUEUE@") || return 1
  [[ $(awk '{print $4}' <<<"$line") != -NA- && -z $(awk '{print $6}' <<<"$line") ]]
}

up() {
  ensure_packages
  [[ $(id -u) == 0 ]] || die "run as root: the daemons and the cell's configuration are the system's"
  write_names
  start_qmaster
  configure
  start_execd
  local i
  for ((i = 0; i < WAIT_SEC; i++)); do
    if queue_ready; then
      # The host's GPUs, once its execution daemon has made it an execution host.
      qconf -mattr exechost complex_values "gpu=$GPUS_PER_HOST" "$(host_name)" >/dev/null 2>&1 ||
        die "could not give the execution host its $GPUS_PER_HOST GPUs (qconf -mattr exechost complex_values)"
      log "up: queue $QUEUE on $(host_name), $SLOTS slots, parallel environment $PE, $GPUS_PER_HOST GPUs"
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
  for pid in $(execd_pid || true) $(qmaster_pid || true); do kill "$pid" 2>/dev/null || true; done
  local i
  for ((i = 0; i < 30; i++)); do
    execd_pid >/dev/null || qmaster_pid >/dev/null || break
    sleep 1
  done
  for pid in $(execd_pid || true) $(qmaster_pid || true); do log "warning: daemon $pid did not stop in 30 s; killing it"; kill -9 "$pid" 2>/dev/null || true; done
  local outlived=() described=()
  for pid in $(job_processes); do
    outlived+=("$pid")
    described+=("$pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)")
    kill -9 "$pid" 2>/dev/null || true
  done
  ((${#outlived[@]} == 0)) || log "warning: ${#outlived[@]} process(es) of this cluster's jobs outlived its daemons; killed: $(IFS=';'; echo "${described[*]}")"
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
  pids) { qmaster_pid || true; execd_pid || true; } ;;
  *) echo "usage: $0 up|down|status|env|pids" >&2; exit 2 ;;
esac
