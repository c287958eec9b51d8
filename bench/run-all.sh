#!/usr/bin/env bash
# `npm run bench`: every benchmark that needs no GPU, one after the other. Each prints its table
# and appends one JSON line to bench/results/<name>.jsonl. Name some to run only those:
#   npm run bench -- collection rendezvous
# orchestration needs the local SLURM cluster (it brings it up as root if it is down, and down
# again after); netns-link needs root too (it brings its own two-node cluster up and down).
# history needs Debian's postgresql (it starts a throw-away server). engine-gpu.ts runs on a GPU
# machine instead (bench/README.md). --help: this header, exit 0; a name with no bench/<name>.ts:
# one line, exit 2, before anything runs.
set -uo pipefail
[[ ${1:-} == --help || ${1:-} == -h ]] && { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0; }
cd "$(dirname "$0")/.."

all=(collection startup config-load rendezvous orchestration engine-host engine-host-sweep engine-ucx engine-inflight libfabric-shm netns-link ct-verify-timing history llamacpp-serving)
selected=("${@:-${all[@]}}")
for name in "${selected[@]}"; do
  [[ $name != -* && $name != */* && -f bench/$name.ts ]] || { echo "run-all.sh: '$name': expected a benchmark's name, one of ${all[*]} (or another bench/<name>.ts)" >&2; exit 2; }
done
failed=()
for name in "${selected[@]}"; do
  echo
  echo "=== bench/$name.ts"
  node --import tsx "bench/$name.ts" || failed+=("$name")
done

if ((${#failed[@]} > 0)); then
  echo "bench: failed: ${failed[*]}" >&2
  exit 1
fi
