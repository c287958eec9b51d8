#!/usr/bin/env bash
# NIXL and nixlbench on the GPU machine (the `device` tool: Ubuntu 24.04, CUDA, no Node, no
# gflags, UCX libraries without headers or CUDA transports), beside the engine. Here first:
#   bash bench/nixl/gpu-run.sh prepare     # .nixl-src/ (pinned sources), .nixl-gpu/ (Node, bundles)
# then on the GPU machine, from the repository root, carrying .nixl-src, .nixl-gpu, node_modules/koffi
# and node_modules/@koromix/koffi-linux-x64 (all four git-ignored; 41 MiB together):
#   bash bench/nixl/gpu-run.sh build       # scripts/build-nixl.sh into /tmp/nixl (UCX with CUDA)
#   bash bench/nixl/gpu-run.sh host|vram   # side-by-side.ts on host memory (ucx) / VRAM (engine cuda)
# Logs and figures go to $OUT (build-logs.tgz, <part>.tgz with the side-by-side logs and jsonl).
# LABEL=name names a run's logs (default gpu-machine-<part>-<date>); ENGINE_BUNDLE=dir runs the
# engine bundled there (launch.mjs, commands.mjs): `BASE_REV=<commit> ... prepare` bundles that
# commit's engine into .nixl-gpu/base, a baseline for the same call.
# On one GPU, vram puts both ranks of each side on it and says so (side-runs.ts).
# --help: this header, exit 0; a part it does not have: one line, exit 2.
set -uo pipefail
[[ ${1:-} == --help || ${1:-} == -h ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0; }
cd "$(dirname "$0")/../.."
D=.nixl-gpu
export NIXL_SOURCES=$PWD/.nixl-src NIXL_PREFIX=${NIXL_PREFIX:-/tmp/nixl}
OUT=${OUT:-/tmp/nixl-out}
mkdir -p "$OUT"

prepare() {
  # the pinned sources from the mirror (NIXL_SOURCES, set above, is where they are read on the GPU machine)
  NIXL_SOURCES=${NIXL_MIRROR:-/work/.mirror} bash scripts/build-nixl.sh --pack .nixl-src
  mkdir -p $D
  bundle() {
    npx --no-install esbuild "$1" --bundle --platform=node --format=esm --target=node20 --external:koffi \
      --outfile="$D/$2" --log-level=warning \
      --banner:js="import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
  }
  bundle bench/nixl/side-by-side.ts side-by-side.mjs
  bundle runners/xfer/launch.ts launch.mjs
  bundle bench/gpu/commands.ts commands.mjs
  # BASE_REV=rev: that commit's engine too, in $D/base (ENGINE_BUNDLE=$D/base runs it there)
  if [[ -n ${BASE_REV:-} ]]; then
    local tree root=$PWD
    tree=$(mktemp -d)
    git archive "$BASE_REV" runners bench/gpu framework package.json | tar -x -C "$tree"
    ln -s "$root/node_modules" "$tree/node_modules"
    mkdir -p $D/base
    (cd "$tree" && for pair in "runners/xfer/launch.ts launch.mjs" "bench/gpu/commands.ts commands.mjs"; do
      set -- $pair
      npx --no-install esbuild "$1" --bundle --platform=node --format=esm --target=node20 --external:koffi \
        --outfile="$root/$D/base/$2" --log-level=warning \
        --banner:js="import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
    done)
    rm -rf "$tree"
    echo "$D/base: the engine at $(git rev-parse --short "$BASE_REV")"
  fi
  [[ -s $D/node.xz ]] || xz -T2 -6 -c "$(command -v node)" >"$D/node.xz"
  du -sh .nixl-src $D
}

node_up() {
  [[ -x /tmp/node ]] || { xz -dc $D/node.xz >/tmp/node && chmod +x /tmp/node; }
  export PATH=/tmp:$PATH
}

build() {
  NIXL_BUILD_NICE=0 bash scripts/build-nixl.sh 2>&1 | tee "$OUT/build.log"
  local rc=${PIPESTATUS[0]}
  tar -C "$NIXL_PREFIX" -czf "$OUT/build-logs.tgz" logs
  "$NIXL_PREFIX/ucx/bin/ucx_info" -v -d 2>&1 | grep -E 'Version|Transport:|Device:' | sort -u | head -40 >"$OUT/ucx-info.txt"
  return "$rc"
}

# One side-by-side run; $1 = label, the rest its arguments.
compare() {
  local label=$1; shift
  node_up
  nvidia-smi -L
  # The engine's ucx backend loads the same UCX as nixlbench (the one built with CUDA).
  local E=${ENGINE_BUNDLE:-$D}
  LD_LIBRARY_PATH=$NIXL_PREFIX/ucx/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    node $D/side-by-side.mjs --nixlbench "$NIXL_PREFIX/bin/nixlbench" --label "$label" \
    --engine "node $E/launch.mjs --ranks 2 $E/commands.mjs sweep" "$@" 2>&1 | tee "$OUT/$label.txt"
  tar -czf "$OUT/$label.tgz" "results/nixl-side-by-side-$label" results/nixl-side-by-side.jsonl
}

case "${1:-}" in
  prepare) prepare ;;
  build) build ;;
  host) compare "${LABEL:-gpu-machine-host-$(date -u +%F)}" --seg DRAM --engine-backend ucx "${@:2}" ;;
  vram) compare "${LABEL:-gpu-machine-vram-$(date -u +%F)}" --seg VRAM --engine-backend cuda "${@:2}" ;;
  *) echo "gpu-run.sh: ${1:+unknown part '$1': }expected prepare, build, host or vram [side-by-side arguments] (--help: more)" >&2; exit 2 ;;
esac
