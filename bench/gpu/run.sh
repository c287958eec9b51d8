#!/usr/bin/env bash
# On the GPU machine, from the repository root: bash .gpu-bundle/run.sh PART... with PART one of
#   engine    self-tests of every backend (verified) and the engine's peer-copy benchmark
#   ct        CT perftest (cuda, nccl; verified runs) and a llama-405b sequential workload
#   nixl      sweep VRAM->VRAM (cuda, nccl), EP data and control plane, KV pipe
#   alltoall  all-to-all: CT perftest (cuda) vs NCCL (torch), 2 and 4 GPUs
#   inflight  requests in flight: a small cuda copy overtakes a large one; sweeps with
#             --pipeline_depth (cuda, nccl) verified
# Each part's results and logs go to $OUT/<part>.tgz; the console shows each step's tail.
set -uo pipefail
cd "$(dirname "$0")/.."
export D=.gpu-bundle
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

nixl() {
  local gpus; gpus=$(nvidia-smi -L | wc -l)
  local vram=(--initiator_seg_type VRAM --target_seg_type VRAM --op_type WRITE,READ --check_consistency)
  ranks sweep-cuda 240 2 commands.mjs sweep --backend cuda "${vram[@]}"
  ranks sweep-nccl 150 2 commands.mjs sweep --backend nccl "${vram[@]}" --num_iter 200 --warmup_iter 32
  local seed=(--tokens 128 --hidden 7168 --topk 8 --experts-per-rank 36 --mode dispatch,combine,e2e)
  ranks ep-cuda-2 120 2 commands.mjs ep --backend cuda "${seed[@]}"
  ((gpus >= 4)) && ranks ep-cuda-4 120 4 commands.mjs ep --backend cuda "${seed[@]}"
  ranks ep-control-2 90 2 commands.mjs ep --backend cuda --control-plane --experts-per-rank 8,32 --tokens 128 --hidden 7168 --topk 8
  ranks kvpipe-cuda 150 2 commands.mjs kvpipe --backend cuda --num-objs 500 --num-rounds 3
  ranks kvpipe-cuda-work 150 2 commands.mjs kvpipe --backend cuda --num-objs 500 --num-rounds 2 --simulate-work
}

alltoall() { bash $D/alltoall.sh; }

inflight() {
  step inflight-cuda 60 node $D/inflight.mjs
  local vram=(--initiator_seg_type VRAM --target_seg_type VRAM --op_type WRITE,READ --check_consistency --max_block_size 16M --max_batch_size 4)
  ranks sweep-cuda-depth4 240 2 commands.mjs sweep --backend cuda "${vram[@]}" --pipeline_depth 4
  ranks sweep-nccl-depth4 240 2 commands.mjs sweep --backend nccl "${vram[@]}" --pipeline_depth 4 --num_iter 200 --warmup_iter 32
  ranks sweep-cuda-depth1 240 2 commands.mjs sweep --backend cuda "${vram[@]}"
}

for part in "$@"; do
  export R=/tmp/gpu-results/$part
  mkdir -p "$R"
  echo "##### $part"
  "$part"
  [[ -n ${OUT:-} ]] && tar czf "$OUT/$part.tgz" -C /tmp/gpu-results "$part"
done
