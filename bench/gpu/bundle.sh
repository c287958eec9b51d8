#!/usr/bin/env bash
# Prepares ONE folder for the GPU machine (the `device` tool: no Node, no tsx there): Node (xz),
# every GPU entry point bundled to JavaScript (koffi left external), and the run scripts.
# Then, carrying .gpu-bundle, node_modules/koffi and node_modules/@koromix/koffi-linux-x64:
#   bash .gpu-bundle/run.sh engine|ct|nixl|alltoall|device|inflight|limits ...   (results: $OUT/<part>.tgz and logs)
# BUNDLE=<folder> names another folder (e.g. .gpu-bundle-17, to carry from another checkout).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${BUNDLE:-.gpu-bundle}
mkdir -p "$out"
bundle() {
  npx --no-install esbuild "$1" --bundle --platform=node --format=esm --target=node20 --external:koffi \
    --outfile="$out/$2" --log-level=warning \
    --banner:js="import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
}
bundle runners/xfer/launch.ts launch.mjs
bundle runners/xfer/selftest.ts selftest.mjs
bundle bench/engine-gpu.ts engine-gpu.mjs
bundle bench/gpu/commands.ts commands.mjs
bundle bench/gpu/device-copy.ts device-copy.mjs
bundle bench/gpu/inflight.ts inflight.mjs
bundle bench/gpu/engine-limits.ts engine-limits.mjs
bundle bench/gpu/summarize-limits.ts summarize-limits.mjs
cp bench/gpu/run.sh bench/gpu/alltoall.sh bench/gpu/nccl_alltoall.py "$out/"
[[ -s $out/node.xz ]] || xz -T2 -6 -c "$(command -v node)" > "$out/node.xz"
du -sh "$out"
