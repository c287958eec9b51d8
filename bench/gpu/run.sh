#!/usr/bin/env bash
# On the GPU machine, from the repository root: bash .gpu-bundle/run.sh PART... with PART one of
#   engine    self-tests of every backend (verified) and the engine's peer-copy benchmark
#   ct        CT perftest (cuda, nccl; verified runs) and a llama-405b sequential workload
#   nixl      the three below: sweep VRAM->VRAM (cuda, nccl), EP data and control plane, KV pipe
#   sweep | ep | kvpipe   one of them (ep: GPU-initiated against the host-posted emulation)
#   alltoall  all-to-all: CT perftest (cuda: copy engines, staggered, copy kernel) vs NCCL (torch), 2 and 4 GPUs
#   device    the copy kernel on ONE GPU (2+ ranks sharing it: correctness of every path it drives,
#             verified) and its benchmark against cudaMemcpyAsync (device-copy.mjs)
#   inflight  requests in flight: a small cuda copy overtakes a large one; sweeps with
#             --pipeline_depth (cuda, nccl) verified
# Each part's results and logs go to $OUT/<part>.tgz; the console shows each step's tail.
set -uo pipefail
cd "$(dirname "$0")/.."
export D=${D:-$(basename "$(dirname "$(readlink -f "$0")")")}
[[ -x /tmp/node ]] || { xz -dc $D/node.xz > /tmp/node && chmod +x /tmp/node; }
export PATH=/tmp:$PATH XFER_TIMEOUT_S=120
nvidia-smi -L
step() { # name timeout command...
  local name=$1 limit=$2; shift 2; echo "=== $name: $*"; local t0=$SECONDS
  timeout "$limit" "$@" > "$R/$name.log" 2>&1; echo "=== $name rc=$? ($((SECONDS - t0)) s)"; tail -n 14 "$R/$name.log"
}
ranks() { local name=$1 limit=$2 n=$3 entry=$4; shift 4; step "$name" "$limit" node $D/launch.mjs --ranks "$n" "$D/$entry" "$@"; }

engine() {
  for backend in cuda nccl; do
    ranks selftest-$backend 90 2 selftest.mjs --backend $backend --max-bytes 40000000 --shards 3 --iters 2
  done
  ranks selftest-cuda-4 90 4 selftest.mjs --backend cuda --max-bytes 20000000 --iters 2
  step engine-gpu 150 node $D/engine-gpu.mjs --iters 30 --out "$R/engine-gpu.jsonl"
}

ct() {
  printf '0 256M\n256M 0\n' > "$R/pair-256m.txt"
  printf '0 16M 0\n0 0 16M\n16M 0 0\n' > "$R/ring-16m.txt"
  for op in WRITE READ; do
    printf 'iters: 30\nwarmup_iters: 5\ntraffic_pattern:\n  matrix_file: pair-256m.txt\n  mem_type: cuda\n  xfer_op: %s\n' "$op" > "$R/ct-pair-${op,,}.yaml"
  done
  printf 'iters: 3\ntraffic_pattern:\n  matrix_file: pair-256m.txt\n  mem_type: cuda\n  shards: 4\n  xfer_op: READ\n' > "$R/ct-pair-verify.yaml"
  printf 'iters: 3\ntraffic_pattern:\n  matrix_file: ring-16m.txt\n  mem_type: cuda\n' > "$R/ct-ring-verify.yaml"
  for backend in cuda nccl; do
    for op in write read; do
      ranks ct-$backend-$op 90 2 commands.mjs ct-perftest "$R/ct-pair-$op.yaml" --backend $backend --json-output-path "$R/ct-$backend-$op.json"
    done
  done
  ranks ct-cuda-verified 90 2 commands.mjs ct-perftest "$R/ct-pair-verify.yaml" --backend cuda --verify-buffers --json-output-path "$R/ct-cuda-verified.json"
  ranks ct-cuda-ring-verified 90 3 commands.mjs ct-perftest "$R/ct-ring-verify.yaml" --backend cuda --verify-buffers --json-output-path "$R/ct-cuda-ring-verified.json"
  local mg=(--model llama-405b --num-prefill-nodes 1 --num-decode-nodes 1 --ppn 1 --prefill-tp 1 --decode-tp 1 --mem-type cuda)
  step matgen 60 node $D/commands.mjs matgen "${mg[@]}" --num-user-requests 20 --seed 1 --results-dir "$R/llama"
  ranks seq-llama 150 2 commands.mjs sequential-ct-perftest "$R/llama/metadata.yaml" --share-buffers --sleep-scale 0.001 --isolation-iters 10 --warmup-iters 3 --json-output-path "$R/seq-llama.json"
  step matgen-short 60 node $D/commands.mjs matgen "${mg[@]}" --num-user-requests 4 --seed 2 --isl-mean 256 --isl-scale 64 --min-isl 64 --max-isl 512 --results-dir "$R/llama-short"
  ranks seq-llama-verified 90 2 commands.mjs sequential-ct-perftest "$R/llama-short/metadata.yaml" --verify-buffers --sleep-scale 0.001 --isolation-iters 3 --warmup-iters 1 --workload-iters 2 --json-output-path "$R/seq-llama-verified.json"
}

sweep() {
  local vram=(--initiator_seg_type VRAM --target_seg_type VRAM --op_type WRITE,READ --check_consistency)
  ranks sweep-cuda 240 2 commands.mjs sweep --backend cuda "${vram[@]}"
  ranks sweep-nccl 150 2 commands.mjs sweep --backend nccl "${vram[@]}" --num_iter 200 --warmup_iter 32
}

ep() {
  local gpus; gpus=$(nvidia-smi -L | wc -l)
  local seed=(--tokens 128 --hidden 7168 --topk 8 --experts-per-rank 36 --mode dispatch,combine,e2e)
  # GPU-initiated (one kernel per phase) against the host-posted emulation as it was measured
  # before the kernel existed (copy engines), same bytes, verified; then npx tsx bench/gpu/summarize-ep.ts.
  for by in gpu host; do
    local copy=auto; [[ $by == host ]] && copy=copy-engine
    XFER_CUDA_COPY=$copy ranks ep-cuda-2-$by 120 2 commands.mjs ep --backend cuda --initiated-by $by "${seed[@]}"
    ((gpus >= 4)) && XFER_CUDA_COPY=$copy ranks ep-cuda-4-$by 120 4 commands.mjs ep --backend cuda --initiated-by $by "${seed[@]}"
  done
  ranks ep-control-2 90 2 commands.mjs ep --backend cuda --control-plane --experts-per-rank 8,32 --tokens 128 --hidden 7168 --topk 8
}

kvpipe() {
  ranks kvpipe-cuda 150 2 commands.mjs kvpipe --backend cuda --num-objs 500 --num-rounds 3
  ranks kvpipe-cuda-work 150 2 commands.mjs kvpipe --backend cuda --num-objs 500 --num-rounds 2 --simulate-work
}

nixl() { sweep; ep; kvpipe; }

alltoall() { bash $D/alltoall.sh; }

device() {
  local gpus; gpus=$(nvidia-smi -L | wc -l)
  # Ranks beyond the GPUs share them (local rank modulo GPUs): two processes on one GPU open each
  # other's IPC handles, the path peers on other GPUs take too.
  for copy in kernel auto; do
    ranks selftest-$copy-2 120 2 selftest.mjs --backend cuda --cuda-copy $copy --max-bytes 40000000 --shards 3 --iters 2
  done
  ranks selftest-kernel-4 120 4 selftest.mjs --backend cuda --cuda-copy kernel --max-bytes 20000000 --shards 2 --iters 2
  printf '0 16M 16M 16M\n16M 0 16M 16M\n16M 16M 0 16M\n16M 16M 16M 0\n' > "$R/a2a-4x16m.txt"
  printf 'iters: 3\ntraffic_pattern:\n  matrix_file: a2a-4x16m.txt\n  mem_type: cuda\n  shards: 3\n' > "$R/ct-a2a-verify.yaml"
  for copy in kernel copy-engine; do
    ranks ct-a2a-$copy-verified 120 4 commands.mjs ct-perftest "$R/ct-a2a-verify.yaml" --backend cuda --cuda-copy $copy --verify-buffers --json-output-path "$R/ct-a2a-$copy-verified.json"
  done
  local seed=(--tokens 128 --hidden 7168 --topk 8 --experts-per-rank 36 --mode dispatch,combine,e2e --warmup 5 --iters 30)
  for by in gpu host; do
    local copy=auto; [[ $by == host ]] && copy=copy-engine
    XFER_CUDA_COPY=$copy ranks ep-$by-2 180 2 commands.mjs ep --backend cuda --initiated-by $by "${seed[@]}"
  done
  # A rank that launches nothing: the others' kernels stop waiting (0.9 x XFER_TIMEOUT_S) and name it (exit 1 expected).
  XFER_TIMEOUT_S=4 ranks ep-gpu-silent-rank 60 2 commands.mjs ep --backend cuda --initiated-by gpu --tokens 16 --hidden 512 --mode dispatch --test-silent-rank 1
  ranks ep-gpu-4-per-message 180 4 commands.mjs ep --backend cuda --initiated-by gpu --layout per-message --tokens 64 --hidden 1024 --topk 4 --experts-per-rank 4 --mode e2e --warmup 2 --iters 5
  local share=(); ((gpus < 2)) && share=(--ranks-share-gpu)
  step device-copy 300 node $D/device-copy.mjs "${share[@]}" ${DEVICE_COPY_ARGS:-} --out "$R/device-copy.jsonl"
  step device-copy-cached 300 node $D/device-copy.mjs "${share[@]}" --kernel 512/4/cached --out "$R/device-copy.jsonl"
}

inflight() {
  step inflight-cuda 60 node $D/inflight.mjs
  local vram=(--initiator_seg_type VRAM --target_seg_type VRAM --op_type WRITE,READ --check_consistency --max_block_size 16M --max_batch_size 4)
  ranks sweep-cuda-depth4 240 2 commands.mjs sweep --backend cuda "${vram[@]}" --pipeline_depth 4
  ranks sweep-nccl-depth4 240 2 commands.mjs sweep --backend nccl "${vram[@]}" --pipeline_depth 4 --num_iter 200 --warmup_iter 32
  ranks sweep-cuda-depth1 240 2 commands.mjs sweep --backend cuda "${vram[@]}"
}

for part in "$@"; do
  declare -F "$part" >/dev/null || { echo "unknown part '$part' (engine, ct, nixl, sweep, ep, kvpipe, alltoall, device, inflight)"; exit 2; }
  export R=/tmp/gpu-results/$part
  mkdir -p "$R"
  echo "##### $part"
  "$part"
  [[ -n ${OUT:-} ]] && tar czf "$OUT/$part.tgz" -C /tmp/gpu-results "$part"
done
