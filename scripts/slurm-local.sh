#!/usr/bin/env bash
# A real SLURM cluster on this one host, for the test suite and for users without a cluster:
# munged on a private socket, slurmctld and four slurmd (n1..n4, MULTIPLE_SLURMD) with fake GPUs.
#
#   scripts/slurm-local.sh up       install (apt) if missing, configure, start; a no-op when up
#   scripts/slurm-local.sh down     cancel the cluster's jobs, stop the daemons (by pid), kill what
#                                   of its jobs outlived them (a warning names each)
#   scripts/slurm-local.sh status   print nodes and jobs; exit 0 when up, 3 when down
#   scripts/slurm-local.sh env      print `export SLURM_CONF=...` for `eval "$(... env)"`
#   scripts/slurm-local.sh pids     print the pids of the cluster's live daemons, one per line
#   scripts/slurm-local.sh restart-controller   stop slurmctld (by pid) and start it again
#   scripts/slurm-local.sh stop-controller      stop slurmctld (by pid); `up` starts it again
#   scripts/slurm-local.sh kill-node NODE       a power loss of NODE: SIGKILL its slurmd and every
#                                               process of its jobs (`up` brings the node back)
#   scripts/slurm-local.sh netns-check          exit 0 when DISAGG_SLURM_NETNS=1 works here, else 3 + why
#
# Settings (environment): DISAGG_SLURM_DIR (state folder, default /tmp/disagg-slurm),
# DISAGG_SLURM_WAIT (seconds `up` waits for idle nodes, default 60). A second cluster beside the
# first (fault-injection tests) needs its own DISAGG_SLURM_DIR and ports: DISAGG_SLURM_PORT
# (controller, default 16817), DISAGG_SLURMD_PORT (first slurmd, default 17001),
# DISAGG_SLURM_NODES (node count, default 4), DISAGG_SLURM_FIRST_JOB_ID (FirstJobId, so its job ids
# differ from the first cluster's), DISAGG_SLURMD_TIMEOUT (SlurmdTimeout: seconds before a silent
# node is set DOWN; SLURM's default 300), DISAGG_SLURM_NODE_PREFIX (node names, default n).
# DISAGG_SLURM_GPU_TYPE (a gres type for the fake GPUs, e.g. h200: `Gres=gpu:h200:4`; default none,
# `Gres=gpu:4`).
# DISAGG_SLURM_NETNS=1: every node in its own network, UTS and mount namespaces (own address,
# hostname and /dev/shm), so ranks on two nodes meet over the network only: see
# slurm-local-netns.sh (DISAGG_SLURM_SUBNET). `down` removes the namespaces and the bridge too.
# Runs as root (SlurmUser=root).
set -euo pipefail

DIR="${DISAGG_SLURM_DIR:-/tmp/disagg-slurm}"
WAIT_SEC="${DISAGG_SLURM_WAIT:-60}"
NODE_COUNT="${DISAGG_SLURM_NODES:-4}"
[[ $NODE_COUNT =~ ^[1-9][0-9]?$ ]] || { echo "slurm-local: error: DISAGG_SLURM_NODES=$NODE_COUNT is not 1..99" >&2; exit 2; }
NODE_PREFIX="${DISAGG_SLURM_NODE_PREFIX:-n}"
[[ $NODE_PREFIX =~ ^[a-z][a-z0-9-]{0,9}$ ]] || { echo "slurm-local: error: DISAGG_SLURM_NODE_PREFIX=$NODE_PREFIX is not a short lower-case name" >&2; exit 2; }
NODES=()
for ((node_index = 1; node_index <= NODE_COUNT; node_index++)); do NODES+=("$NODE_PREFIX$node_index"); done
NETNS="${DISAGG_SLURM_NETNS:-0}"
[[ $NETNS == 0 || $NETNS == 1 ]] || { echo "slurm-local: error: DISAGG_SLURM_NETNS=$NETNS is not 0 or 1" >&2; exit 2; }
CTLD_PORT="${DISAGG_SLURM_PORT:-16817}"
SLURMD_PORT_FIRST="${DISAGG_SLURMD_PORT:-17001}"
FIRST_JOB_ID="${DISAGG_SLURM_FIRST_JOB_ID:-}"
SLURMD_TIMEOUT="${DISAGG_SLURMD_TIMEOUT:-}"
GPUS_PER_NODE=4
GPU_GRES_TYPE="${DISAGG_SLURM_GPU_TYPE:-}"
[[ -z $GPU_GRES_TYPE || $GPU_GRES_TYPE =~ ^[a-z][a-z0-9_]{0,30}$ ]] || { echo "slurm-local: error: DISAGG_SLURM_GPU_TYPE=$GPU_GRES_TYPE is not a short lower-case gres type" >&2; exit 2; }
GPU_GRES="gpu${GPU_GRES_TYPE:+:$GPU_GRES_TYPE}:$GPUS_PER_NODE"
CONF="$DIR/etc/slurm.conf"
MUNGE_SOCKET="$DIR/munge-run/munge.socket"
# Every client command must use the private config, never /etc/slurm.
export SLURM_CONF="$CONF"
# The daemons, munged, runuser and mknod live in sbin, which a non-login PATH may lack.
export PATH="$PATH:/usr/sbin:/sbin"

log() { echo "slurm-local: $*" >&2; }
die() { log "error: $*"; exit 1; }

# shellcheck source=scripts/slurm-local-netns.sh
if ((NETNS)); then source "$(dirname "${BASH_SOURCE[0]}")/slurm-local-netns.sh"; fi

# The pid in file $1; fails when there is none (daemons delete their pid file as they exit).
read_pid() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  echo "$pid"
}

# True when process $1 lives (not a zombie) and runs $2: a stale pid file may name a recycled pid.
proc_alive() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  [[ $stat == "$1 ($2) "* && $stat != "$1 ($2) Z"* ]]
}

pid_alive() {
  local pid
  pid=$(read_pid "$1") && proc_alive "$pid" "$2"
}

ctld_pidfile() { echo "$DIR/run/slurmctld.pid"; }
slurmd_pidfile() { echo "$DIR/run/slurmd-$1.pid"; }
munged_pidfile() { echo "$DIR/munge/munged.pid"; }

ensure_packages() {
  local missing=()
  command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null ||
    missing+=(slurm-wlm)
  command -v munged >/dev/null && command -v mungekey >/dev/null || missing+=(munge)
  ((${#missing[@]} == 0)) && return 0
  command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get to install them"
  log "installing ${missing[*]} with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null || die "apt-get update failed"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    die "apt-get install ${missing[*]} failed"
}

# Folders, the munge key and the fake GPU device files; safe to repeat.
prepare_dirs() {
  mkdir -p "$DIR"/{etc,state,log,run,gpus,spool} "$DIR/munge" "$DIR/munge-run"
  chmod 0755 "$DIR" "$DIR/munge-run" # munged (user munge) must traverse to its socket
  local node i
  for node in "${NODES[@]}"; do mkdir -p "$DIR/spool/$node"; done # slurmd does not create %n dirs
  for ((i = 0; i < GPUS_PER_NODE; i++)); do
    # A /dev/null twin; a link to it where mknod is not allowed (containers without CAP_MKNOD).
    [[ -e $DIR/gpus/nvidia$i ]] || mknod "$DIR/gpus/nvidia$i" c 1 3 2>/dev/null ||
      ln -s /dev/null "$DIR/gpus/nvidia$i"
  done
  if [[ ! -s $DIR/munge/munge.key ]]; then
    mungekey --create --keyfile="$DIR/munge/munge.key" >/dev/null
  fi
  chown -R munge:munge "$DIR/munge" "$DIR/munge-run"
  chmod 0700 "$DIR/munge"
  chmod 0400 "$DIR/munge/munge.key"
}

write_config() {
  local host nodes_last_port node_lines ctld_addr=127.0.0.1
  host=$(hostname -s)
  nodes_last_port=$((SLURMD_PORT_FIRST + ${#NODES[@]} - 1))
  node_lines="NodeName=$NODE_PREFIX[1-${#NODES[@]}] NodeHostname=$host NodeAddr=127.0.0.1 Port=$SLURMD_PORT_FIRST-$nodes_last_port CPUs=4 RealMemory=4000 Gres=$GPU_GRES State=UNKNOWN"
  if ((NETNS)); then
    node_lines=$(netns_node_lines)
    ctld_addr=$BRIDGE_ADDR
  fi
  cat <<EOF
# Written by scripts/slurm-local.sh: a private test cluster on one host.
ClusterName=disagg
SlurmctldHost=$host($ctld_addr)
SlurmctldPort=$CTLD_PORT
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd-%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/log/jobcomp.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
# Start jobs at once instead of after the default scheduling delays.
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0,bf_interval=1
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
KillWait=2
# Finished jobs stay visible to squeue/scontrol for 10 minutes (no accounting database here).
MinJobAge=600
${FIRST_JOB_ID:+FirstJobId=$FIRST_JOB_ID
}${SLURMD_TIMEOUT:+SlurmdTimeout=$SLURMD_TIMEOUT
}GresTypes=gpu
# Declared sizes, not the host's: config_overrides lets slurmd accept them on a small machine.
SlurmdParameters=config_overrides
$node_lines
PartitionName=debug Nodes=$NODE_PREFIX[1-${#NODES[@]}] Default=YES MaxTime=INFINITE State=UP
# A second, restricted partition: two nodes, one node per job, 10 minutes at most.
PartitionName=small Nodes=$NODE_PREFIX[1-$((${#NODES[@]} < 2 ? ${#NODES[@]} : 2))] MaxNodes=1 MaxTime=10 State=UP
EOF
}

write_gres_config() {
  echo "NodeName=$NODE_PREFIX[1-${#NODES[@]}] Name=gpu${GPU_GRES_TYPE:+ Type=$GPU_GRES_TYPE} File=$DIR/gpus/nvidia[0-$((GPUS_PER_NODE - 1))]"
}

# Writes $2's output to $1 if it differs; returns 0 when the file changed.
write_if_changed() {
  local file=$1 tmp
  tmp=$(mktemp "$file.XXXX")
  "$2" >"$tmp"
  if [[ -f $file ]] && cmp -s "$tmp" "$file"; then
    rm -f "$tmp"
    return 1
  fi
  mv "$tmp" "$file"
  chmod 0644 "$file"
  return 0
}

munge_works() {
  munge -n -S "$MUNGE_SOCKET" 2>/dev/null | unmunge -S "$MUNGE_SOCKET" >/dev/null 2>&1
}

start_munged() {
  if pid_alive "$(munged_pidfile)" munged && munge_works; then return 0; fi
  rm -f "$MUNGE_SOCKET" "$MUNGE_SOCKET.lock"
  runuser -u munge -- munged --socket="$MUNGE_SOCKET" --key-file="$DIR/munge/munge.key" \
    --pid-file="$(munged_pidfile)" --log-file="$DIR/munge/munged.log" \
    --seed-file="$DIR/munge/munged.seed" </dev/null >>"$DIR/log/munged.out" 2>&1 9>&- ||
    die "munged did not start:$(tail_file "$DIR/munge/munged.log")$(tail_file "$DIR/log/munged.out")"
  local i
  for ((i = 0; i < 50; i++)); do munge_works && return 0; sleep 0.1; done
  die "munged is not answering on $MUNGE_SOCKET:$(tail_file "$DIR/munge/munged.log")"
}

# setsid: the daemons leave the caller's session, so they outlive it and never hold its pipes;
# 9>&-: nor the lock of this script.
port_in_use() { (: </dev/tcp/127.0.0.1/"$1") 2>/dev/null; }

# Before starting anything: another cluster on our ports would make every daemon here fail.
check_ports_free() {
  pid_alive "$(ctld_pidfile)" slurmctld && return 0
  port_in_use "$CTLD_PORT" &&
    die "port $CTLD_PORT is taken, but not by this cluster's slurmctld ($DIR): another local cluster? (stop it with DISAGG_SLURM_DIR=<its folder> $0 down)"
  return 0
}

start_slurmctld() {
  pid_alive "$(ctld_pidfile)" slurmctld && return 0
  setsid slurmctld -D -f "$CONF" </dev/null >>"$DIR/log/slurmctld.out" 2>&1 9>&- &
  echo $! >"$(ctld_pidfile)"
}

start_slurmd() {
  local node=$1
  pid_alive "$(slurmd_pidfile "$node")" slurmd && return 0
  if ((NETNS)); then
    start_slurmd_in_netns "$node"
    return 0
  fi
  setsid slurmd -D -N "$node" -f "$CONF" </dev/null >>"$DIR/log/slurmd-$node.out" 2>&1 9>&- &
  echo $! >"$(slurmd_pidfile "$node")"
}

tail_file() {
  [[ -s $1 ]] || return 0
  printf '\n--- last lines of %s ---\n' "$1"
  tail -n 15 "$1"
}

all_log_tails() {
  local f
  for f in "$DIR/log/slurmctld.log" "$DIR/log/slurmctld.out" "$DIR"/log/slurmd-*.log "$DIR"/log/slurmd-*.out; do
    tail_file "$f"
  done
}

# Node lines "n1 idle" ...; empty when the controller does not answer.
node_states() { timeout 10 sinfo -h -N -o '%N %T' 2>/dev/null | sort -u || true; }

# All nodes registered and usable (idle, or busy with jobs from an earlier run).
nodes_ready() {
  local states node
  states=$(node_states)
  for node in "${NODES[@]}"; do
    grep -Eq "^$node (idle|mixed|allocated|completing)$" <<<"$states" || return 1
  done
}

# A node drained by an earlier run (e.g. "Kill task failed") would never take jobs again.
resume_drained_nodes() {
  local node state
  while read -r node state; do
    case $state in
    drain* | down* | fail*) scontrol update NodeName="$node" State=RESUME 2>/dev/null || true ;;
    esac
  done < <(node_states)
}

wait_until_ready() {
  local start=$SECONDS resumed=0
  until nodes_ready; do
    if ((SECONDS - start >= WAIT_SEC)); then
      die "nodes not idle after ${WAIT_SEC}s; sinfo says: $(node_states | tr '\n' ' ')$(all_log_tails)"
    fi
    pid_alive "$(ctld_pidfile)" slurmctld || die "slurmctld exited$(all_log_tails)"
    # Registered but drained/down nodes appear after the first few seconds; resume them once.
    if ((resumed == 0 && SECONDS - start >= 3)) && [[ -n $(node_states) ]]; then
      resume_drained_nodes
      resumed=1
    fi
    sleep 0.3
  done
}

all_daemons_alive() {
  local node
  pid_alive "$(munged_pidfile)" munged && pid_alive "$(ctld_pidfile)" slurmctld || return 1
  for node in "${NODES[@]}"; do pid_alive "$(slurmd_pidfile "$node")" slurmd || return 1; done
}

daemons_running() {
  local node
  pid_alive "$(ctld_pidfile)" slurmctld && return 0
  for node in "${NODES[@]}"; do pid_alive "$(slurmd_pidfile "$node")" slurmd && return 0; done
  return 1
}

# Sends SIGTERM to the daemon in pid file $1 (named $2), then SIGKILL after 10 s.
stop_pid() {
  local file=$1 name=$2 pid i
  if ! pid=$(read_pid "$file") || ! proc_alive "$pid" "$name"; then
    rm -f "$file"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    proc_alive "$pid" "$name" || { rm -f "$file"; return 0; }
    sleep 0.1
  done
  log "$name ($pid) ignored SIGTERM; killing it"
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$file"
}

# Cancels every job of this private cluster and waits (bounded) until they are gone, so that
# no job step outlives the daemons.
cancel_all_jobs() {
  pid_alive "$(ctld_pidfile)" slurmctld || return 0
  local ids i
  ids=$(timeout 10 squeue -h -o '%A' 2>/dev/null || true)
  [[ -z $ids ]] && return 0
  log "cancelling jobs: $(tr '\n' ' ' <<<"$ids")"
  # shellcheck disable=SC2086
  timeout 10 scancel $ids 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    [[ -z $(timeout 10 squeue -h -o '%A' 2>/dev/null || true) ]] && return 0
    sleep 0.2
  done
  log "warning: jobs still listed after cancelling: $(squeue -h -o '%A %T' 2>/dev/null | tr '\n' ' ')"
}

stop_slurm_daemons() {
  local node
  for node in "${NODES[@]}"; do stop_pid "$(slurmd_pidfile "$node")" slurmd; done
  stop_pid "$(ctld_pidfile)" slurmctld
}

cmd_up() {
  [[ $(id -u) == 0 ]] || die "must run as root (SlurmUser=root; munged runs as user munge)"
  mkdir -p "$DIR"
  # Two concurrent `up` (CI script and the test setup) must not install or start things twice.
  exec 9>"$DIR/.lock"
  flock -w 300 9 || die "another slurm-local.sh holds $DIR/.lock"
  ensure_packages
  prepare_dirs
  local changed=0
  write_if_changed "$CONF" write_config && changed=1
  write_if_changed "$DIR/etc/gres.conf" write_gres_config && changed=1
  if ((changed)) && daemons_running; then
    log "configuration changed: restarting the SLURM daemons"
    stop_slurm_daemons
  fi
  # sinfo alone is not enough: the controller notices a dead slurmd only after SlurmdTimeout.
  if ! ((changed)) && all_daemons_alive && munge_works && nodes_ready; then
    log "already up ($CONF)"
    return 0
  fi
  check_ports_free
  if ((NETNS)); then netns_up; fi
  start_munged
  start_slurmctld
  local node
  for node in "${NODES[@]}"; do start_slurmd "$node"; done
  wait_until_ready
  log "up: ${#NODES[@]} nodes idle; export SLURM_CONF=$CONF"
}

cmd_down() {
  [[ -d $DIR ]] || { log "nothing to stop ($DIR does not exist)"; return 0; }
  exec 9>"$DIR/.lock"
  flock -w 120 9 || die "another slurm-local.sh holds $DIR/.lock"
  cancel_all_jobs
  stop_slurm_daemons
  kill_leftover_job_processes
  stop_pid "$(munged_pidfile)" munged
  if ((NETNS)); then netns_down; fi
  log "down"
}

# The controller answers (a client command exits 0).
controller_answers() { timeout 10 scontrol ping 2>/dev/null | grep -q 'is UP'; }

# Stops slurmctld (by pid); jobs keep running and `up` or restart-controller brings it back.
cmd_stop_controller() {
  [[ -d $DIR ]] || die "no cluster in $DIR"
  exec 9>"$DIR/.lock"
  flock -w 120 9 || die "another slurm-local.sh holds $DIR/.lock"
  stop_pid "$(ctld_pidfile)" slurmctld
  log "controller stopped"
}

# Stops slurmctld and starts it again as `up` does; running jobs live on (their state is saved).
cmd_restart_controller() {
  [[ -d $DIR ]] || die "no cluster in $DIR"
  exec 9>"$DIR/.lock"
  flock -w 120 9 || die "another slurm-local.sh holds $DIR/.lock"
  stop_pid "$(ctld_pidfile)" slurmctld
  start_slurmctld
  local start=$SECONDS
  until controller_answers; do
    ((SECONDS - start < WAIT_SEC)) || die "slurmctld did not answer within ${WAIT_SEC}s after its restart$(all_log_tails)"
    pid_alive "$(ctld_pidfile)" slurmctld || die "slurmctld exited after its restart$(all_log_tails)"
    sleep 0.2
  done
  log "controller restarted (pid $(read_pid "$(ctld_pidfile)")) after $((SECONDS - start))s"
}

# Every descendant of process $1 (children first found, then theirs), from /proc.
descendants() {
  local parent=$1 child
  for child in $(awk -v p="$parent" '$4 == p { print $1 }' /proc/[0-9]*/stat 2>/dev/null); do
    echo "$child"
    descendants "$child"
  done
}

# Pids of job $1's processes: its steps' slurmstepd and everything under them, and every process
# that carries the job's id (servers a job script setsid'd included).
job_processes() {
  local job=$1 stepd
  for stepd in $(grep -lsE "^slurmstepd: \[$job\." /proc/[0-9]*/cmdline | cut -d/ -f3); do
    echo "$stepd"
    descendants "$stepd"
  done
  grep -lsz "^SLURM_JOB_ID=$job\$" /proc/[0-9]*/environ | cut -d/ -f3 || true
}

# A power loss of node $1: its slurmd and every process of its jobs die (SIGKILL), and nothing
# tells the controller; it notices when the node stops answering (SlurmdTimeout). slurmd goes
# first, so no step starts after it; its jobs' processes are then killed in rounds until a round
# finds none for a second: a step slurmd was launching as it died (its slurmstepd just forked,
# its task not yet started) is missed by one look, and would run on as an orphan.
cmd_kill_node() {
  local node=${1:-} pid job jobs victims=() round quiet=0 killed=0
  [[ -n $node ]] || die "usage: $0 kill-node NODE"
  [[ " ${NODES[*]} " == *" $node "* ]] || die "no node $node in this cluster (${NODES[*]})"
  # Job ids of this cluster (its FirstJobId keeps them apart from another cluster's).
  jobs=$(timeout 10 squeue -h -w "$node" -o '%A' 2>/dev/null || true)
  pid=$(read_pid "$(slurmd_pidfile "$node")") && proc_alive "$pid" slurmd && { kill -KILL "$pid" 2>/dev/null || true; killed=1; }
  rm -f "$(slurmd_pidfile "$node")"
  for ((round = 0; round < 100 && quiet < 5; round++)); do
    victims=()
    for job in $jobs; do victims+=($(job_processes "$job")); done
    if ((${#victims[@]} > 0)); then
      kill -KILL "${victims[@]}" 2>/dev/null || true
      killed=$((killed + ${#victims[@]}))
      quiet=0
    else
      quiet=$((quiet + 1))
    fi
    sleep 0.2
  done
  ((killed > 0)) || die "nothing of $node is running"
  log "killed $node: $killed process(es) (slurmd and its jobs' steps)"
}

# Processes of this cluster's jobs still alive once its daemons are stopped (a job step whose
# slurmd died under it, as kill-node does): what carries this cluster's SLURM_CONF and a job id,
# and its slurmstepds. This script and its callers are spared.
kill_leftover_job_processes() {
  local file pid spared=" $$ $BASHPID " ancestor=$PPID left=()
  while [[ $ancestor =~ ^[0-9]+$ && $ancestor -gt 1 ]]; do
    spared+="$ancestor "
    ancestor=$(awk '{ print $4 }' "/proc/$ancestor/stat" 2>/dev/null) || break
  done
  for file in $(grep -lsz "^SLURM_CONF=$CONF\$" /proc/[0-9]*/environ); do
    pid=$(cut -d/ -f3 <<<"$file")
    [[ $spared == *" $pid "* ]] && continue
    if grep -qsz '^SLURM_JOB_ID=' "$file" || grep -qsz '^slurmstepd:' "/proc/$pid/cmdline"; then left+=("$pid"); fi
  done
  ((${#left[@]} > 0)) || return 0
  log "warning: ${#left[@]} process(es) of this cluster's jobs outlived its daemons (killed): $(for pid in "${left[@]}"; do printf '%s ' "$pid:$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-80)"; done)"
  kill -KILL "${left[@]}" 2>/dev/null || true
}

cmd_pids() {
  local file name
  for file in "$(munged_pidfile)" "$(ctld_pidfile)" "$DIR"/run/slurmd-*.pid; do
    case $file in *munged.pid) name=munged ;; *slurmctld.pid) name=slurmctld ;; *) name=slurmd ;; esac
    pid_alive "$file" "$name" && read_pid "$file"
  done
  return 0
}

cmd_status() {
  if ! pid_alive "$(ctld_pidfile)" slurmctld; then
    echo "down (no slurmctld for $CONF)"
    return 3
  fi
  echo "SLURM_CONF=$CONF"
  sinfo -N -o '%N %P %T %c %m %G' || return 3
  squeue -o '%A %P %j %T %M %R' || return 3
}

case "${1:-}" in
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status ;;
env) echo "export SLURM_CONF=$CONF" ;;
pids) cmd_pids ;;
restart-controller) cmd_restart_controller ;;
stop-controller) cmd_stop_controller ;;
kill-node) cmd_kill_node "${2:-}" ;;
netns-check)
  # Exit 0 when DISAGG_SLURM_NETNS=1 clusters can be made here; else 3 and the reason.
  source "$(dirname "${BASH_SOURCE[0]}")/slurm-local-netns.sh"
  if why=$(netns_unsupported); then echo "$why"; exit 3; fi
  ;;
*)
  echo "usage: $0 up|down|status|env|pids|restart-controller|stop-controller|kill-node NODE|netns-check" >&2
  exit 2
  ;;
esac
