#!/usr/bin/env bash
# The plain baseline of bench/orchestration.ts: submit jobs in batches with sbatch, then poll
# squeue every POLL_SEC until every job of the batch has left the queue, then the next batch.
# (`sbatch --wait` is no fast poll: it checks every 2 s.) Times go to EVENTS_FILE:
#   submitted <job id> <epoch s>   ended <job id> <epoch s>   poll <epoch s>
#
#   bench/orchestration-baseline.sh BATCH_SIZE POLL_SEC EVENTS_FILE ARGS_FILE...
# Each ARGS_FILE holds one job's sbatch arguments (with --parsable), one per line. --help: this
# header, exit 0; anything else it cannot use: one line, exit 2.
set -euo pipefail

usage='usage: bench/orchestration-baseline.sh BATCH_SIZE POLL_SEC EVENTS_FILE ARGS_FILE... (--help: more)'
[[ ${1:-} == --help || ${1:-} == -h ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0; }
for arg; do [[ $arg != -* ]] || { echo "orchestration-baseline.sh: unknown option '$arg'; $usage" >&2; exit 2; }; done
(($# >= 4)) || { echo "orchestration-baseline.sh: $# arguments; $usage" >&2; exit 2; }
batch_size=$1 poll_sec=$2 events=$3
[[ $batch_size =~ ^[1-9][0-9]*$ ]] || { echo "orchestration-baseline.sh: BATCH_SIZE '$batch_size': expected a whole number of at least 1" >&2; exit 2; }
[[ $poll_sec =~ ^[0-9]*\.?[0-9]+$ ]] || { echo "orchestration-baseline.sh: POLL_SEC '$poll_sec': expected seconds, e.g. 0.1" >&2; exit 2; }
shift 3
jobs=("$@")

# States in which a job is still in flight (squeue -j keeps finished ones known for MinJobAge).
IN_FLIGHT=PENDING,CONFIGURING,RUNNING,COMPLETING,SUSPENDED

for ((first = 0; first < ${#jobs[@]}; first += batch_size)); do
  pending=()
  for file in "${jobs[@]:first:batch_size}"; do
    mapfile -t args <"$file"
    id=$(sbatch "${args[@]}")
    id=${id%%;*}
    echo "submitted $id $EPOCHREALTIME" >>"$events"
    pending+=("$id")
  done
  while ((${#pending[@]} > 0)); do
    ids=$(IFS=,; echo "${pending[*]}")
    if ! listed=$(squeue -h -j "$ids" -t "$IN_FLIGHT" -o %i 2>&1); then
      # A job id the controller has already purged: the others are asked again next time.
      [[ $listed == *"Invalid job id"* ]] || { echo "squeue failed: $listed" >&2; sleep "$poll_sec"; continue; }
      listed=''
    fi
    now=$EPOCHREALTIME
    echo "poll $now" >>"$events"
    still=()
    for id in "${pending[@]}"; do
      if [[ $'\n'$listed$'\n' == *$'\n'$id$'\n'* ]]; then still+=("$id"); else echo "ended $id $now" >>"$events"; fi
    done
    pending=("${still[@]}")
    ((${#pending[@]} == 0)) || sleep "$poll_sec"
  done
done
