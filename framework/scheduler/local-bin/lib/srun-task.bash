# The second half of the local srun shim, sourced by it once the step is planned: starts the
# tasks, forwards signals to them, waits for all, and exits as srun does: with the highest task
# status (a task killed by signal N counts as 128 + N; srun(1), RETURN VALUE).
# Uses the shim's variables: step_nodes, job_nodes, tasks_on, first_task, ntasks, step_id...

# SLURM's compressed tasks-per-node form: 2,2,1 -> 2(x2),1.
compressed_counts() {
  local out='' prev='' run=0 count
  for count in "$@" ''; do
    if [[ $count == "$prev" ]]; then run=$((run + 1)); continue; fi
    if [[ -n $prev ]]; then
      out+=${out:+,}$prev
      ((run > 1)) && out+="(x$run)"
    fi
    prev=$count run=1
  done
  printf '%s' "$out"
}

# --export: ALL (default) keeps the environment; NONE or a list without ALL keeps only SLURM's
# variables (plus PATH, so the local shims stay reachable) and the named ones; VAR=value sets.
apply_export() {
  local item keep_all=0 name
  local -a items names=() assignments=()
  IFS=, read -ra items <<<"$export_opt"
  for item in "${items[@]}"; do
    case $item in
      ALL) keep_all=1 ;;
      NONE | '') ;;
      *=*) assignments+=("$item") ;;
      *) names+=("$item") ;;
    esac
  done
  if ((!keep_all)); then
    for name in $(compgen -e); do
      case $name in
        SLURM_* | SLURMD_* | DISAGG_LOCAL_* | CUDA_VISIBLE_DEVICES | PATH) ;;
        *) [[ " ${names[*]} " == *" $name "* ]] || unset "$name" ;;
      esac
    done
  fi
  for item in "${assignments[@]}"; do export "${item?}"; done
}

# One task, run in a background subshell: its environment, its output files, its label, and a
# SLURM-like report on srun's own stderr when it fails.
run_task() { # task node_index local_id command...
  local task=$1 node=$2 local_id=$3 node_name=${step_nodes[$2]} status i srun_err
  shift 3
  # A signal for the task goes to the command's whole tree but not to this wrapper, which reports.
  # One that lands before the command starts stops it from starting.
  local terminating='' child
  trap 'interrupted=1 terminating=TERM; signal_tree TERM $BASHPID' TERM
  trap 'interrupted=1 terminating=INT; signal_tree INT $BASHPID' INT
  exec {srun_err}>&2
  export SLURM_PROCID=$task SLURM_LOCALID=$local_id SLURM_NODEID=$node SLURMD_NODENAME=$node_name \
    SLURM_STEP_ID=$step_id SLURM_STEPID=$step_id SLURM_STEP_NUM_TASKS=$ntasks SLURM_NTASKS=$ntasks \
    SLURM_NPROCS=$ntasks SLURM_STEP_NUM_NODES=$step_node_count SLURM_NNODES=$step_node_count \
    SLURM_STEP_NODELIST=$step_nodelist SLURM_NODELIST=$step_nodelist \
    SLURM_STEP_TASKS_PER_NODE=$tasks_per_node SLURM_TASKS_PER_NODE=$tasks_per_node
  [[ -n $cpus_per_task ]] && export SLURM_CPUS_PER_TASK=$cpus_per_task
  if [[ -v DISAGG_LOCAL_NODE_GPUS ]]; then
    # A virtual node sees its own slice of the job's GPUs, as a real node sees its own.
    for i in "${!job_nodes[@]}"; do [[ ${job_nodes[i]} == "$node_name" ]] && break; done
    export CUDA_VISIBLE_DEVICES=${node_gpus[i]:-}
  fi
  apply_export
  [[ -n $output ]] && { exec >>"$(expand_pattern "$output" "$task" "$node" "$node_name")" || exit 1; }
  [[ -n ${error:-$output} ]] && { exec 2>>"$(expand_pattern "${error:-$output}" "$task" "$node" "$node_name")" || exit 1; }
  [[ -n $terminating ]] && exit $((128 + $(kill -l "$terminating")))
  # In the background and waited for: a shell prints "Terminated" for a killed foreground child.
  if ((label)); then
    local prefix
    printf -v prefix '%*d: ' "${#ntasks_last}" "$task"
    set -o pipefail
    { trap : TERM INT; "$@" {srun_err}>&- 2>&1 1>&3 3>&- | label_lines "$prefix" >&2; } 3>&1 | label_lines "$prefix" &
  else
    "$@" {srun_err}>&- &
  fi
  child=$!
  # A signal between the check above and here found no command to signal: deliver it now.
  [[ -n $terminating ]] && signal_tree "$terminating" "$BASHPID"
  wait_child "$child"
  if ((status > 128)); then
    printf 'srun: error: %s: task %d: Terminated by signal SIG%s\n' "$node_name" "$task" "$(kill -l $((status - 128)))" >&$srun_err
  elif ((status)); then
    printf 'srun: error: %s: task %d: Exited with exit code %d\n' "$node_name" "$task" "$status" >&$srun_err
  fi
  echo "$status" >"$status_dir/$task.tmp" && mv "$status_dir/$task.tmp" "$status_dir/$task"
  exit "$status"
}

# Waits for one child until it really ends, not merely until a trapped signal cuts the wait short,
# and sets `status`. (bash's `wait -n -p` can misreport a status when a trap runs meanwhile.)
wait_child() { # pid
  local again
  while :; do
    interrupted=0
    wait "$1"
    status=$?
    ((interrupted)) || return
    if ! kill -0 "$1" 2>/dev/null; then # reaped while the trap ran: its status is still kept
      wait "$1" 2>/dev/null
      again=$?
      ((again == 127)) || status=$again
      return
    fi
  done
}

# Label filters outlive a signal to the task, so the command's last lines still come out.
label_lines() {
  trap '' TERM INT
  awk -v prefix="$1" '{ print prefix $0; fflush() }'
}

# Signals every descendant of a process (all of a step shares the job's process group, so the tree
# is walked instead of signalling a group). Without pgrep, only the direct child is reached.
signal_tree() { # signal pid
  local -a pids=()
  local i=0 pid
  if command -v pgrep >/dev/null; then
    pids=($(pgrep -P "$2"))
    while ((i < ${#pids[@]})); do
      for pid in $(pgrep -P "${pids[i]}"); do pids+=("$pid"); done
      i=$((i + 1))
    done
  elif [[ -n ${child:-} ]]; then
    pids=("$child")
  fi
  ((${#pids[@]})) && kill -s "$1" "${pids[@]}" 2>/dev/null
}

# Signals the tasks started so far (each passes it on to its command's tree); tasks started later
# get it from the launch loop.
signal_tasks() { # signal
  forwarded=$1 signalled=${#task_pids[@]}
  ((signalled)) && kill -s "$1" "${task_pids[@]}" 2>/dev/null
}

if [[ -n $chdir ]]; then cd "$chdir" || die "cannot --chdir to '$chdir'"; fi
ntasks_last=$((ntasks - 1))
tasks_per_node=$(compressed_counts "${tasks_on[@]}")
if [[ -n $output && $open_mode != append ]]; then
  # Truncate each distinct file once here; the tasks append, so tasks sharing a file all show.
  for ((i = 0; i < step_node_count; i++)); do
    for ((t = first_task[i]; t < first_task[i] + tasks_on[i]; t++)); do
      for pattern in "$output" ${error:+"$error"}; do
        file=$(expand_pattern "$pattern" "$t" "$i" "${step_nodes[i]}")
        : >"$file" || die "cannot write '$file'"
      done
    done
  done
fi

task_pids=() forwarded='' signalled=0
trap 'signal_tasks TERM' TERM
trap 'signal_tasks INT' INT
for ((i = 0; i < step_node_count; i++)); do
  for ((t = first_task[i]; t < first_task[i] + tasks_on[i]; t++)); do
    run_task "$t" "$i" $((t - first_task[i])) "$@" &
    task_pids+=($!)
    # A signal forwarded before this task's pid was recorded missed it.
    if [[ -n $forwarded ]] && ((signalled < ${#task_pids[@]})); then
      kill -s "$forwarded" "${task_pids[@]:signalled}" 2>/dev/null
      signalled=${#task_pids[@]}
    fi
  done
done

# Tasks in the order they end, each by the status file it leaves; a task killed before it could
# write one counts once bash has reaped it. `wait -n` only wakes this loop up.
# The highest status, not the first failure seen: tasks that end together are reaped in no
# particular order, so which failure comes first here says nothing about which came first.
failed=0 highest=0
unfinished=("${!task_pids[@]}")
while ((${#unfinished[@]})); do
  wait -n 2>/dev/null || true
  still=()
  for t in "${unfinished[@]}"; do
    if [[ -e $status_dir/$t ]]; then
      status=$(<"$status_dir/$t")
    elif ! kill -0 "${task_pids[t]}" 2>/dev/null; then
      wait "${task_pids[t]}" 2>/dev/null
      status=$?
    else
      still+=("$t")
      continue
    fi
    if ((status && !failed)); then
      failed=1
      ((kill_on_bad_exit)) && signal_tasks TERM
    fi
    ((status > highest)) && highest=$status
  done
  unfinished=("${still[@]}")
done
exit "$highest"
