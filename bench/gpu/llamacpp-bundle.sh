#!/usr/bin/env bash
# Prepares .gpu-llama/ for the GPU machine (the `device` tool: no Node, no tsx, no npm there): Node
# (xz), llama.cpp's source (scripts/build-llama-cuda.sh --pack), the llamacpp commands and
# bench/llamacpp-serving.ts bundled to JavaScript (koffi left external), and the run script. Then,
# carrying .gpu-llama, node_modules/koffi and node_modules/@koromix/koffi-linux-x64:
#   bash .gpu-llama/run.sh        (builds llama.cpp with CUDA for sm_90, then the bench on the
#                                  llama-3.2-1b shape; logs and the result line in $OUT)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=.gpu-llama
mkdir -p "$out"
bundle() {
  npx --no-install esbuild "$1" --bundle --platform=node --format=esm --target=node20 --external:koffi \
    --outfile="$out/$2" --log-level=warning \
    --banner:js="import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
}
bundle bench/gpu/llamacpp-entry.ts llamacpp-entry.mjs
bundle bench/llamacpp-serving.ts llamacpp-serving.mjs
bundle bench/fixtures/xfer-read-rank.ts xfer-read-rank.mjs
[[ -s $out/llama-src.tar.xz ]] || bash scripts/build-llama-cuda.sh --pack "$out"
[[ -s $out/node.xz ]] || xz -T2 -6 -c "$(command -v node)" > "$out/node.xz"
cp bench/gpu/llamacpp-run.sh "$out/run.sh"
du -sh "$out"
