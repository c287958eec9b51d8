#!/usr/bin/env bash
# The whole test suite (scripts/test.sh: typecheck + the unit and cluster projects), N times in a row, while
# two busy CPU loops run beside it: a flaky test shows up here before it shows up in CI.
#
#   scripts/loaded-suite.sh [-n RUNS] [-l LOOPS] [-c CONNS] [vitest arguments...]
#
#   -n RUNS    how many runs (default 3)
#   -l LOOPS   how many busy loops (default 2)
#   -c CONNS   also hold CONNS loopback TCP connections whose ports wander over the ephemeral
#              range (scripts/port-churn.mjs; default 0): finds tests that bind a port some other
#              socket may hold
#   vitest arguments go to every run (e.g. a file filter: tests/select/testlist.test.ts)
#
# Each run's output goes to results/loaded-suite/<start time>/run-<k>.log; a table of every run
# (duration, exit code, the suite's own summary line) and the median duration are printed at the
# end and written to summary.txt there. Exits 0 when every run passed. The loops (and the churn)
# are stopped (by their pids) when the script ends, however it ends (Ctrl-C included).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3
loops=2
conns=0
while getopts 'n:l:c:h' opt; do
  case $opt in
  n) runs=$OPTARG ;;
  l) loops=$OPTARG ;;
  c) conns=$OPTARG ;;
  *) sed -n '2,18p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "loaded-suite: -n takes a whole number >= 1, got '$runs'" >&2; exit 2; }
[[ $loops =~ ^[0-9]+$ ]] || { echo "loaded-suite: -l takes a whole number >= 0, got '$loops'" >&2; exit 2; }
[[ $conns =~ ^[0-9]+$ ]] && ((conns <= 8000)) || { echo "loaded-suite: -c takes a whole number from 0 to 8000, got '$conns'" >&2; exit 2; }

out="results/loaded-suite/$(date -u +%Y-%m-%dT%H-%M-%SZ)"
mkdir -p "$out"

loop_pids=()
stop_loops() {
  local pid
  for pid in "${loop_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${loop_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  loop_pids=()
}
trap stop_loops EXIT
trap 'echo "loaded-suite: interrupted" >&2; exit 130' INT TERM

for ((i = 0; i < loops; i++)); do
  # A shell that spins: one core's worth of load, no I/O.
  bash -c 'while :; do :; done' &
  loop_pids+=("$!")
done
if ((conns > 0)); then
  node scripts/port-churn.mjs "$conns" &
  loop_pids+=("$!")
fi
echo "loaded-suite: $runs run(s) of scripts/test.sh $*, beside $loops busy loop(s) and $conns churning connection(s) (pids ${loop_pids[*]:-none}); logs in $out"

durations=()
failed=0
{
  printf '%-4s %-10s %-5s %s\n' run seconds exit summary
} >"$out/summary.txt"
for ((k = 1; k <= runs; k++)); do
  log="$out/run-$k.log"
  start=$(date +%s.%N)
  rc=0
  bash scripts/test.sh "$@" >"$log" 2>&1 || rc=$?
  end=$(date +%s.%N)
  seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  summary=$(grep -E '^unit: ' "$log" | tail -n 1 || true)
  [[ -n $summary ]] || summary="(no summary line: see $log)"
  durations+=("$seconds")
  ((rc == 0)) || failed=$((failed + 1))
  printf '%-4s %-10s %-5s %s\n' "$k" "$seconds" "$rc" "$summary" | tee -a "$out/summary.txt"
done

median=$(printf '%s\n' "${durations[@]}" | sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
{
  echo "median: ${median} s over $runs run(s); $failed failed; $(nproc) CPU(s), $loops busy loop(s), $conns churning connection(s); $(date -u +%Y-%m-%d)"
} | tee -a "$out/summary.txt"
((failed == 0))
