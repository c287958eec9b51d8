#!/usr/bin/env bash
# disagg-bench nixl job for engine_sweep (kind sweep): generated from its config; rebuild it instead of editing.
set -euo pipefail
LOG_DIR=/work/main/bench/results/nixl-side-by-side-vm-defaults-2026-12-08/tcp1m-write-b1/engine-r2
RANK_LOG=/work/main/bench/results/nixl-side-by-side-vm-defaults-2026-12-08/tcp1m-write-b1/engine-r2/sweep.log
NODE_BIN="${DISAGG_NODE:-node}"
export XFER_RANK_VARIABLES=slurm
export UCX_TLS=tcp,self
mkdir -p "$LOG_DIR"
echo "job ${SLURM_JOB_ID:-local} of "'engine_sweep: sweep, 2 ranks on 1 node(s), backend ucx'" on $(hostname) at $(date -Iseconds)"
mark_job_ended() { printf '%s\n' "$1" >/work/main/bench/results/nixl-side-by-side-vm-defaults-2026-12-08/tcp1m-write-b1/engine-r2/job.ended 2>/dev/null || true; }
trap 'mark_job_ended "$?"' EXIT
status=0
srun --nodes 1 --ntasks 2 --ntasks-per-node 2 '--kill-on-bad-exit=1' "$NODE_BIN" /work/main/bin/disagg-bench.js sweep --backend ucx --op_type WRITE --initiator_seg_type DRAM --target_seg_type DRAM --start_block_size 4096 --max_block_size 1048576 --start_batch_size 1 --max_batch_size 1 --num_iter 1000 --warmup_iter 100 --total_buffer_size 67108864 >"$RANK_LOG" 2>&1 || status=$?
if ((status != 0)); then
  ((status == 75)) && why=': ranks that stopped because another rank ended first; that rank names its own error in the log' || why=''
  echo "the ranks failed (exit code $status$why); last 40 lines of $RANK_LOG:" >&2
  tail -n 40 "$RANK_LOG" >&2 || true
else
  echo "the ranks finished; output in $RANK_LOG"
fi
exit "$status"
