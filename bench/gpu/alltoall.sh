#!/usr/bin/env bash
# On the GPU machine (inside bench/gpu/run.sh): all-to-all with every rank sending SIZE to every
# other rank, through the engine's CT perftest (cuda backend) and through NCCL (torch), same bytes,
# 2 and 4 GPUs (4 only when the machine has them). Variants of the cuda backend (SCHEDULES):
# parallel and staggered copy engines (XFER_CUDA_COPY=copy-engine), kernel (the copy kernel: one
# launch per iteration writes to every peer from the GPU's threads). JSON lines go to $R/alltoall.jsonl; the
# comparison table is made here by bench/gpu/summarize.ts.
set -uo pipefail
D=${D:?bundle folder} R=${R:?results folder}
# GPUS and SIZES override what is run (GPUS above the GPUs there are: ranks share them, a check
# of the script only; NCCL refuses two ranks on one GPU).
gpus=${GPUS:-$(nvidia-smi -L | wc -l)}
read -ra sizes <<< "${SIZES:-1M 16M 64M 256M}"
matrix() { # n size -> file
  local n=$1 s=$2 f=$R/a2a-$1x$2.txt i j
  for ((i = 0; i < n; i++)); do
    row=(); for ((j = 0; j < n; j++)); do ((i == j)) && row+=(0) || row+=("$s"); done
    echo "${row[*]}"
  done > "$f"
  echo "$f"
}
# The staggered schedule and the kernel move the same bytes otherwise: verified self-tests first.
echo "=== selftest cuda kernel, $gpus ranks"
XFER_CUDA_COPY=kernel timeout 120 node "$D/launch.mjs" --ranks "$gpus" "$D/selftest.mjs" --backend cuda \
  --max-bytes 20000000 --shards 2 --iters 2 > "$R/selftest-kernel.log" 2>&1
echo "=== rc=$?"; tail -n 3 "$R/selftest-kernel.log"
echo "=== selftest cuda staggered, $gpus ranks"
XFER_CUDA_COPY=copy-engine XFER_CUDA_SCHEDULE=staggered timeout 120 node "$D/launch.mjs" --ranks "$gpus" "$D/selftest.mjs" --backend cuda \
  --max-bytes 20000000 --shards 2 --iters 2 > "$R/selftest-staggered.log" 2>&1
echo "=== rc=$?"; tail -n 3 "$R/selftest-staggered.log"
for n in 2 4; do
  ((n <= gpus)) || { echo "=== skip $n ranks: only $gpus GPU(s)"; continue; }
  for s in "${sizes[@]}"; do
    m=$(matrix "$n" "$s")
    printf 'iters: 20\nwarmup_iters: 5\ntraffic_pattern:\n  matrix_file: %s\n  mem_type: cuda\n  xfer_op: WRITE\n' "$m" > "$R/a2a-$n-$s.yaml"
    for schedule in ${SCHEDULES:-parallel staggered kernel}; do
      name=a2a-ct-$schedule-$n-$s
      copy=copy-engine; [[ $schedule == kernel ]] && copy=kernel
      echo "=== ct-perftest cuda ($schedule) $n ranks, $s per peer"
      XFER_CUDA_COPY=$copy XFER_CUDA_SCHEDULE=${schedule/kernel/parallel} timeout 180 node "$D/launch.mjs" --ranks "$n" "$D/commands.mjs" ct-perftest "$R/a2a-$n-$s.yaml" \
        --backend cuda --json-output-path "$R/$name.json" >"$R/$name.log" 2>&1
      echo "=== rc=$?"; grep -A2 'Iterations' "$R/$name.log" | tail -n 1
      node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1]));console.log(JSON.stringify({tool:"disagg-bench ct-perftest cuda",schedule:process.argv[4],ranks:+process.argv[2],size:process.argv[3],report:r}))' \
        "$R/$name.json" "$n" "$s" "$schedule" >> "$R/alltoall.jsonl" 2>/dev/null || echo "no CT report for $name"
    done
  done
  echo "=== nccl all_to_all_single, $n ranks"
  timeout 240 python3 -m torch.distributed.run --nproc_per_node "$n" --master_port $((29400 + n)) \
    $D/nccl_alltoall.py "${sizes[@]}" 2>"$R/a2a-nccl-$n.err" | tee -a "$R/alltoall.jsonl"
  echo "=== rc=${PIPESTATUS[0]}"; tail -n 5 "$R/a2a-nccl-$n.err"
done
