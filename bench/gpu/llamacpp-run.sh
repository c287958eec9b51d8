#!/usr/bin/env bash
# On the GPU machine (bench/gpu/llamacpp-bundle.sh made .gpu-llama/): build llama.cpp with CUDA,
# then bench/llamacpp-serving.ts on the llama-3.2-1b shape, every layer on the GPU. $OUT gets the
# build's outcome, the bench's log and its result line.
set -uo pipefail
cd "$(dirname "$0")/.."
here=$PWD/.gpu-llama
out=${OUT:-/tmp/out}
mkdir -p "$out"
[[ -x /tmp/node ]] || { xz -dc "$here/node.xz" > /tmp/node && chmod +x /tmp/node; }
nvidia-smi -L > "$out/gpu.txt" 2>&1
start=$(date +%s)
bash scripts/build-llama-cuda.sh "$here/llama-src.tar.xz" > "$out/build.txt" 2>&1
status=$?
echo "build: exit $status after $(($(date +%s) - start)) s" | tee -a "$out/build.txt"
prefix=$(bash scripts/build-llama-cuda.sh --prefix)
tail -c 20000 "$prefix/build.log" > "$out/build-log-tail.txt" 2>/dev/null
ls -la "$prefix/lib" >> "$out/build.txt" 2>&1
[[ $status -eq 0 ]] || exit "$status"
export LLAMA_CPP_LIB_DIR=$prefix/lib DISAGG_LLAMA_BIN=$here/llamacpp-entry.mjs XFER_READ_RANK_ENTRY=$here/xfer-read-rank.mjs DISAGG_MODEL_CACHE=/tmp/models
timeout "${BENCH_TIMEOUT_S:-300}" /tmp/node "$here/llamacpp-serving.mjs" --shapes llama-3.2-1b --threads 4 --rounds "${ROUNDS:-5}" --prompt 512 --tokens 128 > "$out/bench.log" 2>&1
echo "bench: exit $?" | tee -a "$out/build.txt"
cp results/llamacpp-serving.jsonl "$out/" 2>/dev/null
grep -v '^llama_\|^print_info\|^load\|graph_reserve\|sched_\|resolve_fused\|create_tensor\|^\.\|state_\|done_get\|set_abort\|~llama' "$out/bench.log" | tail -40
