#!/usr/bin/env bash
# disagg-bench nixl job for engine_sweep (kind sweep): generated from its config; rebuild it instead of editing.
set -euo pipefail
LOG_DIR=/work/wt/nixl/bench/results/nixl-side-by-side-2026-11-28-3/shm-write-b1/engine-r1
RANK_LOG=/work/wt/nixl/bench/results/nixl-side-by-side-2026-11-28-3/shm-write-b1/engine-r1/sweep.log
NODE_BIN="${DISAGG_NODE:-node}"
export UCX_TLS=shm,self
mkdir -p "$LOG_DIR"
echo "job ${SLURM_JOB_ID:-local} of "'engine_sweep: sweep, 2 ranks on 1 node(s), backend ucx'" on $(hostname) at $(date -Iseconds)"
status=0
srun --nodes 1 --ntasks 2 --ntasks-per-node 2 '--kill-on-bad-exit=1' "$NODE_BIN" /work/wt/nixl/bin/disagg-bench.js sweep --backend ucx --op_type WRITE --initiator_seg_type DRAM --target_seg_type DRAM --start_block_size 4096 --max_block_size 67108864 --start_batch_size 1 --max_batch_size 1 --num_iter 200 --warmup_iter 20 --total_buffer_size 67108864 >"$RANK_LOG" 2>&1 || status=$?
if ((status != 0)); then
  ((status == 75)) && why=': ranks that stopped because another rank ended first; that rank names its own error in the log' || why=''
  echo "the ranks failed (exit code $status$why); last 40 lines of $RANK_LOG:" >&2
  tail -n 40 "$RANK_LOG" >&2 || true
else
  echo "the ranks finished; output in $RANK_LOG"
fi
exit "$status"
