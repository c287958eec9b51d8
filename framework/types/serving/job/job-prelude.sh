# --- disagg-bench job functions (framework/types/serving/job/job-prelude.sh, pasted into every job.sh) ---
# Expects: LOG_DIR, HEALTH_TIMEOUT, HEALTH_INTERVAL, STOP_GRACE, TAIL_LINES set by the job script;
# JOB_TIME_LIMIT (the job's time limit in seconds; 0 or unset: none); mark_job_ended (defined by
# the job script: writes the exit status to the log folder's job.ended as the job exits).

SERVER_PIDS=()   # long-running steps (workers, router): one process group each
SERVER_NAMES=()
SERVER_LOGS=()
FG_PID=''        # the step being waited for (client, accuracy...)
SLEEP_PID=''
NODE_ADDR_TIMEOUT=120 # seconds node_address keeps asking a controller that does not answer
# What SLURM's clients print when the controller cannot be reached (slurm_strerror's texts).
CONTROLLER_UNREACHABLE='Unable to contact slurm controller|Socket timed out|Zero Bytes were transmitted|Connection refused'

log() { printf '[%s] %s\n' "$(date '+%Y-%m-%d %H:%M:%S')" "$*"; }

# Sets NOW_MS to the wall clock in milliseconds. Deadlines are kept in ms: bash's SECONDS ticks on
# the wall clock's whole seconds, so a deadline of SECONDS + 1 can pass a moment after it is set (a
# 1 s health wait gave up before its first check was logged). EPOCHREALTIME is bash >= 5.0; an
# older bash keeps whole seconds.
NOW_MS=0
clock_ms() {
  if [[ -n ${EPOCHREALTIME:-} ]]; then
    local us=${EPOCHREALTIME//[!0-9]/}
    NOW_MS=$((10#$us / 1000))
  else
    NOW_MS=$((SECONDS * 1000))
  fi
}
clock_ms
JOB_START_MS=$NOW_MS
JOB_TIME_LIMIT=${JOB_TIME_LIMIT:-0}
# Seconds the job keeps after a failed health wait, before its time limit: to show the servers'
# logs and stop its steps (STOP_GRACE) while the scheduler still lets it.
REPORT_MARGIN=15

# Writes a message to the job's stderr and appends it to a log file.
say_to() {
  local file=$1
  shift
  log "$*" | tee -a "$file" >&2
}

# Appends the last lines of a step's log to a file and to stderr.
tail_to() {
  local file=$1 src=$2
  {
    echo "----- last ${TAIL_LINES} lines of ${src} -----"
    tail -n "$TAIL_LINES" "$src" 2>/dev/null || echo '(no output)'
  } | tee -a "$file" >&2
}

# set_aside_attempt RESTARTS PATH...: on a restart of the job (SLURM requeued it: RESTARTS is
# SLURM_RESTART_COUNT, 0 on the first run), moves the PATHs the attempt before wrote into
# $LOG_DIR/attempt-RESTARTS/, keeping their places under $LOG_DIR. The step logs are appended to,
# so without this the killed attempt's cut-off output would come first in them and be judged.
set_aside_attempt() {
  local restarts=$1 dest path rel moved=0
  shift
  [[ $restarts =~ ^[1-9][0-9]*$ ]] || return 0
  dest="$LOG_DIR/attempt-$restarts"
  for path in "$@"; do
    [[ -e $path || -L $path ]] || continue
    rel=${path#"$LOG_DIR"/}
    mkdir -p "$dest/$(dirname "$rel")"
    mv -f -- "$path" "$dest/$rel"
    moved=$((moved + 1))
  done
  log "restart $restarts of this job (requeued): $moved file(s) of the attempt before moved to $dest"
}

# Starts a command in the background in its own process group (so stopping it stops its children).
spawn() {
  local logfile=$1
  shift
  if command -v setsid >/dev/null 2>&1; then
    setsid "$@" </dev/null >>"$logfile" 2>&1 &
  else
    "$@" </dev/null >>"$logfile" 2>&1 &
  fi
}

# start_server NAME LOG COMMAND...: a step that must stay up until the job ends.
start_server() {
  local name=$1 logfile=$2
  shift 2
  log "starting ${name} (log: ${logfile})"
  spawn "$logfile" "$@"
  SERVER_PIDS+=("$!")
  SERVER_NAMES+=("$name")
  SERVER_LOGS+=("$logfile")
}

# run_step NAME LOG COMMAND...: a step that runs to completion; its failure fails the job.
# It runs in the background and is waited for, so a signal to the job is handled at once.
run_step() {
  local name=$1 logfile=$2 rc=0
  shift 2
  log "running ${name} (log: ${logfile})"
  spawn "$logfile" "$@"
  FG_PID=$!
  wait "$FG_PID" || rc=$?
  FG_PID=''
  if ((rc != 0)); then
    log "${name} failed with exit status ${rc}" >&2
    tail_to /dev/null "$logfile"
    return "$rc"
  fi
}

# split_dataset LOG SOURCE WARMUP MEASUREMENT W N: the first W rows of a dataset for the exact-shape
# warm-up, the next N for the measured run, as run_benchmark.sh splits them; a dataset with fewer
# than W + N rows stops the job with run_benchmark.sh's message (also in LOG).
split_dataset() {
  local logfile=$1 source=$2 warmup=$3 measurement=$4 w=$5 n=$6 rows
  rows=$(wc -l <"$source") || { say_to "$logfile" "cannot read the dataset ${source}"; return 1; }
  if ((rows < w + n)); then
    say_to "$logfile" "Dataset has ${rows} rows but warmup plus measurement requires $((w + n))"
    return 1
  fi
  mkdir -p "$(dirname "$warmup")" "$(dirname "$measurement")"
  sed -n "1,${w}p" "$source" >"$warmup"
  sed -n "$((w + 1)),$((w + n))p" "$source" >"$measurement"
}

# Fails (and says which, with its log) when a server step has exited.
check_servers() {
  local report=${1:-/dev/null} i rc
  for i in "${!SERVER_PIDS[@]}"; do
    if ! kill -0 "${SERVER_PIDS[$i]}" 2>/dev/null; then
      rc=0
      wait "${SERVER_PIDS[$i]}" || rc=$?
      say_to "$report" "${SERVER_NAMES[$i]} exited with status ${rc} while it should be serving"
      tail_to "$report" "${SERVER_LOGS[$i]}"
      return 1
    fi
  done
}

# Interruptible sleep: a signal to the job ends it at once.
pause() {
  sleep "$1" &
  SLEEP_PID=$!
  wait "$SLEEP_PID" || true
  SLEEP_PID=''
}

# True when the URL answers with a 2xx status (curl, else bash's /dev/tcp). When not, HTTP_ERROR
# says why (curl's message), for the health wait's log.
HTTP_ERROR=''
http_ok() {
  local url=$1
  HTTP_ERROR=''
  if command -v curl >/dev/null 2>&1; then
    HTTP_ERROR=$(curl -fsS -o /dev/null --max-time 5 "$url" 2>&1) && return 0
    HTTP_ERROR=${HTTP_ERROR//$'\n'/ }
    return 1
  fi
  local rest=${url#http://} fd status
  local hostport=${rest%%/*} path=/${rest#*/}
  [[ $rest == */* ]] || path=/
  exec {fd}<>"/dev/tcp/${hostport%:*}/${hostport##*:}" 2>/dev/null || { HTTP_ERROR="cannot connect to ${hostport}"; return 1; }
  printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$path" "$hostport" >&"$fd"
  IFS= read -r -t 5 status <&"$fd" || status=''
  exec {fd}>&-
  [[ $status =~ ^HTTP/[0-9.]+\ 2[0-9][0-9] ]] && return 0
  HTTP_ERROR="answered '${status%$'\r'}'"
  return 1
}

# wait_for_health URL LOG: polls until healthy; on timeout reports every server log and fails.
# The wait ends before the job's time limit would (JOB_TIME_LIMIT less the time to report and stop
# the steps): a wait longer than the job's limit (the default 1800 s in a job of a few minutes)
# would otherwise end at the limit, killed without a word about the servers.
wait_for_health() {
  local url=$1 logfile=$2
  local deadline left limit='' job_end within=$HEALTH_TIMEOUT
  clock_ms
  deadline=$((NOW_MS + HEALTH_TIMEOUT * 1000))
  if ((JOB_TIME_LIMIT > 0)); then
    job_end=$((JOB_START_MS + (JOB_TIME_LIMIT - STOP_GRACE - REPORT_MARGIN) * 1000))
    ((job_end < NOW_MS)) && job_end=$NOW_MS
    if ((job_end < deadline)); then
      deadline=$job_end
      within=$(((deadline - NOW_MS) / 1000))
      limit=": the job's time limit of ${JOB_TIME_LIMIT} s leaves no more of the ${HEALTH_TIMEOUT} s health timeout"
    fi
  fi
  log "waiting for ${url} (every ${HEALTH_INTERVAL} s, up to ${within} s${limit})" >>"$logfile"
  until http_ok "$url"; do
    check_servers "$logfile" || return 1
    clock_ms
    if ((NOW_MS >= deadline)); then
      say_to "$logfile" "Server did not become healthy within ${within} s${limit}"
      local i
      for i in "${!SERVER_LOGS[@]}"; do tail_to "$logfile" "${SERVER_LOGS[$i]}"; done
      return 1
    fi
    left=$(((deadline - NOW_MS + 999) / 1000)) # whole seconds, rounded up
    log "not healthy yet (${left} s left)${HTTP_ERROR:+: ${HTTP_ERROR}}" >>"$logfile"
    pause $((left < HEALTH_INTERVAL ? left : HEALTH_INTERVAL))
  done
  log "healthy: ${url} after ${SECONDS} s of job time" >>"$logfile"
}

# The address others reach a node at: SLURM's NodeAddr when it knows one, else the node's name.
# The controller answers this; while it is down (a restart, a failover) `scontrol` fails after its
# own retries, and the job asks again, up to NODE_ADDR_TIMEOUT s: falling back to the name at once
# sent a job on a cluster whose names do not resolve to wait for health at an address that could
# never answer, until its time limit. Any other failure falls back at once, saying so.
node_address() {
  local node=$1 line deadline err
  clock_ms
  deadline=$((NOW_MS + NODE_ADDR_TIMEOUT * 1000))
  until line=$(scontrol show node -o "$node" 2>&1); do
    err=${line//$'\n'/ }
    clock_ms
    if [[ $err =~ $CONTROLLER_UNREACHABLE ]] && ((NOW_MS < deadline)); then
      log "scontrol show node ${node} failed (${err}); asking again" >&2
      pause 2
      continue
    fi
    [[ $err =~ $CONTROLLER_UNREACHABLE ]] && err="for ${NODE_ADDR_TIMEOUT} s (${err})" || err="(${err})"
    log "scontrol show node ${node} failed ${err}; using the name ${node} as its address" >&2
    # Said now: otherwise the only sign is a health wait that never reaches the router.
    if command -v getent >/dev/null 2>&1 && ! getent hosts "$node" >/dev/null 2>&1; then
      log "warning: the name ${node} does not resolve here (getent hosts): URLs at it cannot be reached" >&2
    fi
    line=''
    break
  done
  if [[ $line =~ NodeAddr=([^[:space:]]+) && ${BASH_REMATCH[1]} != '(null)' ]]; then
    printf '%s\n' "${BASH_REMATCH[1]}"
  else
    printf '%s\n' "$node"
  fi
}

# NODES: node names of the allocation, in SLURM's order (for --nodelist), or the hosts of a Grid
# Engine job's parallel environment in its host file's order (the job's own host first); HOSTS:
# their addresses (for URLs and --host): SLURM's NodeAddr, a Grid Engine host's name. Without
# either every node is this host.
resolve_nodes() {
  local needed=$1 i
  NODES=()
  HOSTS=()
  if [[ -n ${SLURM_JOB_NODELIST:-} ]]; then
    mapfile -t NODES < <(scontrol show hostnames "$SLURM_JOB_NODELIST")
  elif [[ -n ${PE_HOSTFILE:-} && -r ${PE_HOSTFILE:-} ]]; then
    mapfile -t NODES < <(awk 'NF { print $1 }' "$PE_HOSTFILE")
  else
    for ((i = 0; i < needed; i++)); do NODES+=(127.0.0.1); done
  fi
  if ((${#NODES[@]} < needed)); then
    log "this job needs ${needed} nodes but its allocation has ${#NODES[@]}: ${NODES[*]:-none}" >&2
    return 1
  fi
  for ((i = 0; i < needed; i++)); do
    if [[ -n ${SLURM_JOB_NODELIST:-} ]]; then HOSTS+=("$(node_address "${NODES[$i]}")"); else HOSTS+=("${NODES[$i]}"); fi
  done
  log "nodes: ${NODES[*]:0:needed} (addresses: ${HOSTS[*]})"
}

# Replaces <nodeN> in a template (stdin) with the N-th node's address.
render_nodes() {
  local text i
  text=$(cat)
  for i in "${!HOSTS[@]}"; do text=${text//"<node${i}>"/"${HOSTS[$i]}"}; done
  printf '%s\n' "$text"
}

# Stops every step still running: TERM to each process group, then KILL after STOP_GRACE s.
stop_steps() {
  local pids=() pid alive deadline
  clock_ms
  deadline=$((NOW_MS + STOP_GRACE * 1000))
  for pid in "${SERVER_PIDS[@]}" "$FG_PID" "$SLEEP_PID"; do [[ -n $pid ]] && pids+=("$pid"); done
  ((${#pids[@]} > 0)) || return 0
  log "stopping ${#pids[@]} step(s)"
  for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true; done
  # Checked every 0.1 s: steps usually stop at once, and a whole second here is in every job's time.
  # The grace is wall time, not a count of naps: on a loaded node each `sleep 0.1` takes far
  # longer, and STOP_GRACE * 10 of them outlasted the job's time limit.
  while clock_ms && ((NOW_MS < deadline)); do
    alive=0
    for pid in "${pids[@]}"; do
      if kill -0 -- "-$pid" 2>/dev/null || kill -0 "$pid" 2>/dev/null; then alive=1; fi
    done
    ((alive)) || break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true; done
  # Only the steps just stopped: a bare `wait` also waits for any other child the shell has.
  wait "${pids[@]}" 2>/dev/null || true
}

on_exit() {
  local rc=$?
  set +e
  trap - EXIT
  trap '' TERM INT HUP
  stop_steps
  if ((rc != 0)); then log "job failed with exit status ${rc}" >&2; else log 'job finished'; fi
  # Last: the run watching the job polls the scheduler when this appears.
  if declare -F mark_job_ended >/dev/null; then mark_job_ended "$rc"; fi
  exit "$rc"
}

on_signal() {
  log "received SIG$1: stopping every step" >&2
  exit "$2"
}

trap on_exit EXIT
trap 'on_signal TERM 143' TERM
trap 'on_signal INT 130' INT
trap 'on_signal HUP 129' HUP
trap 'log "job.sh line ${LINENO}: a command exited with status $?" >&2' ERR
# --- end of job functions ---
