#!/usr/bin/env bash
# Runs kvbench's inference_workload_matgen.py and `disagg-bench matgen --cell-format upstream` with
# the same arguments into the same folder, one after the other, and diffs the files byte for byte.
# Give --isl-scale 0 (every ISL = --isl-mean): kvbench's ISLs are unseeded, so only then do both
# draw the same requests. kvbench's script needs numpy, PyYAML and click; its `nixl.logging` and
# `tqdm` imports are stubbed here when missing.
#   bash scripts/matgen-upstream-diff.sh /path/to/nixl/benchmark/kvbench/test/inference_workload_matgen.py \
#     --model llama-405b --num-prefill-nodes 1 --num-decode-nodes 2 --prefill-tp 4 --decode-tp 8 \
#     --num-user-requests 3 --isl-scale 0 --isl-mean 12345
set -euo pipefail
script=${1:?usage: matgen-upstream-diff.sh KVBENCH_MATGEN_PY [matgen options]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/stub/nixl"
printf 'import logging\ndef get_logger(name):\n    return logging.getLogger(name)\n' > "$work/stub/nixl/logging.py"
touch "$work/stub/nixl/__init__.py"
if ! python3 -c 'import tqdm' 2>/dev/null; then
  mkdir -p "$work/stub/tqdm"
  printf 'def tqdm(items, **kwargs):\n    return items\n' > "$work/stub/tqdm/__init__.py"
fi
(cd "$work" && PYTHONPATH="$work/stub" python3 "$script" generate "$@" --results-dir "$work/out" >/dev/null 2>&1)
mv "$work/out" "$work/kvbench"
node "$root/bin/disagg-bench.js" matgen generate "$@" --results-dir "$work/out" --cell-format upstream >/dev/null
diff -r "$work/kvbench" "$work/out"
echo "identical: $(ls "$work/out" | wc -l) files ($*)"
