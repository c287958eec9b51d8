#!/usr/bin/env bash
# On the GPU machine, from the repository root: bash .gpu-bundle/run.sh PART... with PART one of
#   engine    self-tests of every backend (verified) and the engine's peer-copy benchmark
#   ct        CT perftest (cuda, nccl; verified runs) and a llama-405b sequential workload
#   nixl      the three below: sweep VRAM->VRAM (cuda, nccl), EP data and control plane, KV pipe
#   sweep | ep | kvpipe   one of them (ep: GPU-initiated against the host-posted emulation)
#   alltoall  all-to-all: CT perftest (cuda: copy engines, staggered, copy kernel) vs NCCL (torch), 2 and 4 GPUs
#   device    the copy kernel on ONE GPU (2+ ranks sharing it: correctness of every path it drives,
#             verified) and its benchmark against cudaMemcpyAsync (device-copy.mjs)
#   inflight  requests in flight: a small cuda copy overtakes a large one; 2-rank sweeps with
#             --pipeline_depth (cuda, nccl) verified (2 GPUs: NCCL cannot put two ranks on one)
#   libfabric the libfabric backend there: providers with FI_HMEM, host and VRAM self-tests over
#             shm and tcp (VRAM needs FI_HMEM with CUDA: otherwise each says why), a VRAM sweep
#   limits    the hardware's limits and the engine in the same run, RUNS times (default 1),
#             on RANKS GPUs (default 2): peer copies one way / every GPU with every other at once,
#             timed per GPU and between gates on the GPUs (engine-limits.mjs, also the engine's
#             all-to-all per variant, host-timed and gated), NCCL all_to_all_single, EP at the
#             low-latency (128 tokens) and normal (4096) shapes GPU-initiated and host-posted, the
#             KV pipe (2 GPUs); then summarize-limits.mjs. LIMITS_EP=0: engine-limits and NCCL only.
#             LIMITS_ARGS, EP_ARGS: more arguments for engine-limits.mjs and every EP run;
#             EP_VARIANTS, KV_SCHEDULES: extra runs to compare (see below).
#             4 GPUs: RANKS=4 RUNS=3 bash .gpu-bundle/run.sh limits
#   nixl-tools  the real-tool GPU checks on ONE GPU: --enable_vmm (cuMemCreate buffers shared through
#             POSIX fds), --mode MG, VRAM picking a GPU backend, the GPU-per-node refusals and the
#             per-rank device record, LMCache's CacheEngine test; each check prints CHECK ... ok|FAILED
# Parts whose ranks outnumber the GPUs are refused (ranks would share a GPU) unless
# XFER_RANKS_MAY_SHARE_GPU=1 is exported; `device` and `nixl-tools` share on purpose and say so.
# Each part's results and logs go to $OUT/<part>.tgz; the console shows each step's tail.
# --help: this header, exit 0; a part it does not have: one line, exit 2, before any part runs.
set -uo pipefail
[[ ${1:-} == --help || ${1:-} == -h ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0; }
PARTS=(engine ct nixl sweep ep kvpipe alltoall device libfabric nixl-tools inflight limits)
for part in "$@"; do
  [[ " ${PARTS[*]} " == *" $part "* ]] || { echo "run.sh: unknown part '$part': expected some of ${PARTS[*]}" >&2; exit 2; }
done
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

limits() {
  local runs=${RUNS:-1} n shape setting rk=${RANKS:-2}
  rm -rf "$R"/run* "$R"/summary.* # a warm machine keeps /tmp: start from nothing (engine-limits appends)
  # Gates wait on streams (cuStreamWaitValue32): one hardware queue per stream, so a waiting
  # stream never holds up another that shares its queue.
  export CUDA_DEVICE_MAX_CONNECTIONS=32
  # The copy kernel moves every byte below: odd sizes, shards, READ and WRITE verified first.
  XFER_CUDA_COPY=kernel ranks selftest-kernel 120 "$rk" selftest.mjs --backend cuda --max-bytes 20000000 --shards 3 --iters 2
  for ((n = 1; n <= runs; n++)); do
    mkdir -p "$R/run$n"
    step run$n/limits 300 node $D/engine-limits.mjs --ranks "$rk" --out "$R/run$n/limits.jsonl" ${LIMITS_ARGS:-}
    # NCCL_SIZES=none: no NCCL (it cannot put two ranks on one GPU: RANKS above the GPUs)
    if [[ ${NCCL_SIZES:-} != none ]]; then
      echo "=== run$n/nccl"
      timeout 240 python3 -m torch.distributed.run --nproc_per_node "$rk" --master_port $((29410 + n)) \
        $D/nccl_alltoall.py ${NCCL_SIZES:-1M 16M 64M 256M} 2>"$R/run$n/nccl.err" > "$R/run$n/nccl.jsonl"
      echo "=== rc=$?"; cat "$R/run$n/nccl.jsonl"
    fi
    [[ ${LIMITS_EP:-1} == 0 ]] && continue
    local ep=(--backend cuda --hidden 7168 --topk 8 --experts-per-rank 36 --mode dispatch,combine,e2e ${EP_ARGS:-})
    for by in gpu host; do
      local copy=auto; [[ $by == host ]] && copy=copy-engine # the host-posted emulation on the copy engines
      XFER_CUDA_COPY=$copy ranks run$n/ep-ll-$by 180 "$rk" commands.mjs ep --initiated-by $by --tokens 128 "${ep[@]}"
      XFER_CUDA_COPY=$copy ranks run$n/ep-normal-$by 240 "$rk" commands.mjs ep --initiated-by $by --tokens 4096 --warmup 5 --iters 20 "${ep[@]}"
    done
    # EP_VARIANTS: more GPU-initiated runs, each with one VAR=value set (e.g. XFER_CUDA_KERNEL=1024/4/streaming)
    for setting in ${EP_VARIANTS:-}; do
      ( export "$setting"
        ranks run$n/ep-ll-gpu-${setting//[^A-Za-z0-9]/-} 180 "$rk" commands.mjs ep --initiated-by gpu --tokens 128 "${ep[@]}"
        ranks run$n/ep-normal-gpu-${setting//[^A-Za-z0-9]/-} 240 "$rk" commands.mjs ep --initiated-by gpu --tokens 4096 --warmup 5 --iters 20 "${ep[@]}" )
    done
    # the KV pipe is a pair (prefill to decode): 2 GPUs whatever RANKS
    ranks run$n/kvpipe 240 2 commands.mjs kvpipe --backend cuda --num-objs 500 --num-rounds 3
    # KV_SCHEDULES: the KV pipe again with other copy-engine schedules (XFER_CUDA_SCHEDULE)
    for shape in ${KV_SCHEDULES:-}; do
      XFER_CUDA_SCHEDULE=$shape ranks run$n/kvpipe-$shape 240 2 commands.mjs kvpipe --backend cuda --num-objs 500 --num-rounds 3
    done
  done
  step summary 60 node $D/summarize-limits.mjs "$R"
  cat "$R/summary.log"
}

alltoall() { bash $D/alltoall.sh; }

device() {
  export XFER_RANKS_MAY_SHARE_GPU=1 # ranks share the GPU on purpose here
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
  # two-sided slots rebuilt per request (--recreate_xfer): every rank must still post in one order
  ranks sweep-nccl-depth4-recreate 240 2 commands.mjs sweep --backend nccl "${vram[@]}" --pipeline_depth 4 --recreate_xfer --num_iter 64 --warmup_iter 16
  ranks sweep-cuda-depth1 240 2 commands.mjs sweep --backend cuda "${vram[@]}"
}

libfabric() {
  step fi-info-hmem 30 bash -c 'fi_info -t FI_EP_RDM -c FI_HMEM || echo "(no fi_info there)"'
  for p in shm tcp; do
    ranks selftest-libfabric-$p-host 90 2 selftest.mjs --backend libfabric --fi-provider $p --max-bytes 20000000 --shards 3 --iters 2
    ranks selftest-libfabric-$p-vram 90 2 selftest.mjs --backend libfabric --fi-provider $p --memory gpu --max-bytes 20000000 --shards 3 --iters 2
  done
  FI_PROVIDER=shm ranks sweep-libfabric-shm-vram 240 2 commands.mjs sweep --backend LIBFABRIC --initiator_seg_type VRAM --target_seg_type VRAM --op_type WRITE,READ --check_consistency --num_iter 64 --warmup_iter 8
}

# check NAME LOG REGEX: says whether the log of step NAME shows what the check expects
check() { if grep -Eq -- "$3" "$R/$2.log"; then echo "CHECK $1: ok"; else echo "CHECK $1: FAILED (no /$3/ in $2.log)"; fi; }

nixl-tools() {
  local vram=(--initiator_seg_type VRAM --target_seg_type VRAM --check_consistency --max_block_size 16M --num_iter 64 --warmup_iter 16 --large_blk_iter_ftr 4)
  # two ranks on one GPU are refused with the reason unless sharing is allowed; the node
  # check refuses gpus_per_node 2 on a 1-GPU machine; each rank records its device
  step gpu-check-2 30 node $D/commands.mjs gpu-check --gpus-per-node 2 --ranks-per-node 2
  check 'gpus_per_node 2 on 1 GPU refused' gpu-check-2 'asks for 2 GPU\(s\) per node .* has 1 GPU\(s\).*refused before any rank starts'
  step gpu-check-shared 30 node $D/commands.mjs gpu-check --gpus-per-node 1 --ranks-per-node 2 --ranks-may-share-gpu
  check 'sharing allowed' gpu-check-shared 'ranks share GPUs, as the config allows'
  ranks sweep-unshared 60 2 commands.mjs sweep --backend cuda "${vram[@]}"
  check 'ranks sharing a GPU unasked refused' sweep-unshared 'ranks would share a GPU'
  export XFER_RANKS_MAY_SHARE_GPU=1
  # no --backend with VRAM picks a GPU backend (cuda), not shm
  ranks sweep-vram-default 180 2 commands.mjs sweep "${vram[@]}"
  check 'VRAM picks cuda' sweep-vram-default 'Backend \(--backend=\[shm,ucx,cuda,nccl\]\) +: cuda'
  check 'VRAM sweep verified' sweep-vram-default 'Consistency check passed'
  check 'device of each rank recorded' sweep-vram-default 'GPU of rank 1: device 0, .*, bus [0-9A-Fa-f:.]+, node .*, shared by 2 ranks'
  # --enable_vmm: buffers from cuMemCreate/cuMemMap, peers map them through POSIX fds
  ranks sweep-vmm 180 2 commands.mjs sweep --backend cuda --enable_vmm "${vram[@]}"
  check 'enable_vmm banner' sweep-vmm 'Enable VMM \(--enable_vmm=\[0,1\]\) +: 1'
  check 'enable_vmm verified' sweep-vmm 'Consistency check passed'
  # huge pages where the machine has some reserved (else the refusal says how to reserve them)
  ranks sweep-hugepages 120 2 commands.mjs sweep --backend shm --use_hugepages --check_consistency --max_block_size 1M --num_iter 16 --warmup_iter 4
  check 'use_hugepages verified or refused with the count' sweep-hugepages 'Consistency check passed|huge page\(s\) of 2 MiB, but'
  # --mode MG, one process per side driving its device(s)
  ranks sweep-mg 180 2 commands.mjs sweep --backend cuda --mode MG --num_initiator_dev 1 --num_target_dev 1 "${vram[@]}"
  check 'MG mode' sweep-mg 'Mode \(--mode=\[SG,MG\]\) +: MG'
  check 'MG verified' sweep-mg 'Consistency check passed'
  # LMCache's CacheEngine test (its shape, fewer chunks and blocks than its 500 x 10,000)
  ranks cache-engine 300 2 commands.mjs cache-engine --backend cuda --num-chunks 60 --num-blocks 1000 --num-rounds 3
  check 'cache engine verified' cache-engine 'Data verification successful'
  ranks ep-control-rounds 120 2 commands.mjs ep --backend cuda --control-plane --warmup 1 --rounds 3 --experts-per-rank 8 --tokens 128 --hidden 7168 --topk 8
  check 'EP control plane rounds' ep-control-rounds 'Warmup: 1, Measure: 3 rounds'
  unset XFER_RANKS_MAY_SHARE_GPU
}

for part in "$@"; do
  export R=/tmp/gpu-results/$part
  mkdir -p "$R"
  echo "##### $part"
  "$part"
  [[ -n ${OUT:-} ]] && tar czf "$OUT/$part.tgz" -C /tmp/gpu-results "$part"
done
