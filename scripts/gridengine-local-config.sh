# Sourced by gridengine-local.sh: the cell's configuration, set through qconf (cell_qconf: with the
# qmaster's view of the hosts' names) and loaded back only where it differs from what is asked:
# the global configuration, the scheduler's, submit and admin hosts, the parallel environments,
# the queue and the `gpu` consumable. Each setting's reason is in gridengine-local.sh's header.

# A configuration object (qconf -s$1 NAME) with `key value` lines replaced, loaded back with qconf -M$1.
# Loaded back only when an edit changed it (each qconf is a round trip to the qmaster).
modify() {
  local kind=$1 name=$2 file edits=()
  shift 2
  while (($#)); do edits+=(-e "s|^$1 .*|$1 $2|"); shift 2; done
  file=$(mktemp -d)/${name:-$kind}
  # Continued lines (`value \` then more) joined first, so that a replaced value leaves none behind.
  cell_qconf "-s$kind" ${name:+"$name"} | sed -e ':a' -e '/\\$/{N;s/\\\n[[:space:]]*/ /;ba' -e '}' >"$file.now"
  sed "${edits[@]}" "$file.now" >"$file"
  cmp -s "$file.now" "$file" || quietly cell_qconf "-M$kind" "$file"
  rm -rf "$(dirname "$file")"
}

# A command whose chatter (qconf's "root@vm modified ...") is shown only when it fails.
quietly() {
  local out
  out=$("$@" 2>&1) || { log "error: $* failed: $out"; return 1; }
}

# A parallel environment $1 with allocation rule $2, unless there is one.
add_pe() {
  local name=$1 rule=$2 file
  cell_qconf -spl 2>/dev/null | grep -qxF "$name" && return 0
  file=$(mktemp -d)/$name
  cat >"$file" <<EOF
pe_name            $name
slots              $((SLOTS * HOST_COUNT))
user_lists         NONE
xuser_lists        NONE
start_proc_args    NONE
stop_proc_args     NONE
allocation_rule    $rule
control_slaves     TRUE
job_is_first_task  FALSE
urgency_slots      min
accounting_summary FALSE
qsort_args         NONE
EOF
  quietly cell_qconf -Ap "$file"
  rm -rf "$(dirname "$file")"
}

# `disagg` and disagg.1 .. disagg.SLOTS.
pe_names() {
  local k
  echo "$PE"
  for ((k = 1; k <= SLOTS; k++)); do echo "$PE.$k"; done
}

configure() {
  local host file pe pes
  modify conf global min_uid 0 min_gid 0 execd_params ENABLE_ADDGRP_KILL=TRUE \
    reporting_params 'accounting=true reporting=false flush_time=00:00:01 joblog=false sharelog=00:00:00 accounting_flush_time=00:00:00'
  modify sconf '' schedule_interval 0:0:1 flush_submit_sec 1 flush_finish_sec 1 job_load_adjustments NONE \
    load_adjustment_decay_time 0:0:0 schedd_job_info true
  # This machine submits; the hosts too (a job's tasks start others with qrsh -inherit), and they
  # are admin hosts, so that their execution daemons register themselves.
  for host in "$(host_name)" "${EXEC_HOSTS[@]}"; do
    cell_qconf -ss 2>/dev/null | grep -qx "$host" || quietly cell_qconf -as "$host"
  done
  if ((HOST_COUNT > 1)); then
    for host in "${EXEC_HOSTS[@]}"; do
      cell_qconf -sh 2>/dev/null | grep -qx "$host" || quietly cell_qconf -ah "$host"
    done
    configure_host_gids
  fi
  add_pe "$PE" '$pe_slots'
  local k
  for ((k = 1; k <= SLOTS; k++)); do add_pe "$PE.$k" "$k"; done
  pes=$(pe_names | tr '\n' ' ')
  if ! cell_qconf -sql 2>/dev/null | grep -qx "$QUEUE"; then
    file=$(mktemp -d)/$QUEUE
    cell_qconf -sq | sed -e "s|^qname .*|qname $QUEUE|" -e 's|^load_thresholds .*|load_thresholds NONE|' \
      -e 's|^shell .*|shell /bin/bash|' -e "s|^pe_list .*|pe_list $pes|" >"$file"
    quietly cell_qconf -Aq "$file"
    rm -rf "$(dirname "$file")"
  fi
  # Fake GPUs as the local SLURM cluster's nodes have them: a consumable `gpu` complex, counted per
  # slot, GPUS_PER_HOST of them on each host. Nothing binds a job to a device: a count.
  if ! cell_qconf -sc | grep -q '^gpu .* YES YES '; then
    file=$(mktemp -d)/complexes
    { cell_qconf -sc | grep -v -e '^#' -e '^gpu '; echo "gpu gpu INT <= YES YES 0 0"; } >"$file"
    quietly cell_qconf -Mc "$file"
    rm -rf "$(dirname "$file")"
  fi
  # Hosts, slots and environments as asked, also on a cell configured before with others.
  for pe in $pes; do modify p "$pe" slots "$((SLOTS * HOST_COUNT))"; done
  modify q "$QUEUE" hostlist "${EXEC_HOSTS[*]}" slots "$SLOTS" pe_list "$pes" tmpdir "$JOB_TMPDIR"
}
