#!/usr/bin/env bash
# disagg-bench nixl job for nixlbench (kind nixlbench): generated from its config; rebuild it instead of editing.
set -euo pipefail
LOG_DIR=/work/main/bench/results/nixl-side-by-side-vm-defaults-2026-12-08/shm-read-b1/nixlbench-r2
RANK_LOG=/work/main/bench/results/nixl-side-by-side-vm-defaults-2026-12-08/shm-read-b1/nixlbench-r2/nixlbench.log
NODE_BIN="${DISAGG_NODE:-node}"
export XFER_RANK_VARIABLES=slurm
mkdir -p "$LOG_DIR"
echo "job ${SLURM_JOB_ID:-local} of "'nixlbench: nixlbench, 2 ranks on 1 node(s), backend ucx'" on $(hostname) at $(date -Iseconds)"
mark_job_ended() { printf '%s\n' "$1" >/work/main/bench/results/nixl-side-by-side-vm-defaults-2026-12-08/shm-read-b1/nixlbench-r2/job.ended 2>/dev/null || true; }
cleanup() {
  "$NODE_BIN" /work/main/bin/disagg-bench.js nixl-tool report /work/main/bench/results/nixl-side-by-side-vm-defaults-2026-12-08/shm-read-b1/nixlbench-r2/nixl-tool-spec.json || true
}
trap 'exit_status=$?; cleanup; mark_job_ended "$exit_status"' EXIT
status=0
srun --nodes 1 --ntasks 2 --ntasks-per-node 2 '--kill-on-bad-exit=1' "$NODE_BIN" /work/main/bin/disagg-bench.js nixl-tool run /work/main/bench/results/nixl-side-by-side-vm-defaults-2026-12-08/shm-read-b1/nixlbench-r2/nixl-tool-spec.json >"$RANK_LOG" 2>&1 || status=$?
if ((status != 0)); then
  ((status == 75)) && why=': ranks that stopped because another rank ended first; that rank names its own error in the log' || why=''
  echo "the ranks failed (exit code $status$why); last 40 lines of $RANK_LOG:" >&2
  tail -n 40 "$RANK_LOG" >&2 || true
else
  echo "the ranks finished; output in $RANK_LOG"
fi
exit "$status"
