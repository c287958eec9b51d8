#!/usr/bin/env bash
# The README's quick start (`disagg-bench run nixl`) on the GPU machine (the `device` tool: no Node,
# no npm there). Here:
#   bash bench/gpu/quickstart-bundle.sh        writes .gpu-quick/: Node (xz) and the production
#                                              node_modules without DuckDB and llama.cpp (xz, ~16 MB;
#                                              the run keeps no history, so DuckDB is not loaded)
# then on the GPU machine, carrying .gpu-quick (the tree plus it stays under the 64 MiB a call takes):
#   bash .gpu-quick/run.sh [nixl|disagg]       the run's console, summary and results.json in $OUT
set -euo pipefail
cd "$(dirname "$0")/../.."
out=.gpu-quick
mkdir -p "$out"
if [[ ! -s $out/nm.tar.xz ]]; then
  npm ls --omit=dev --all --parseable 2>/dev/null | sed "s#^$PWD/##" | grep '^node_modules/' |
    grep -v '@duckdb\|node-llama-cpp' | sort -u >"$out/modules.txt"
  tar -cf - -T "$out/modules.txt" | xz -T2 -6 >"$out/nm.tar.xz"
fi
[[ -s $out/node.xz ]] || xz -T2 -6 -c "$(command -v node)" >"$out/node.xz"
cat >"$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# On the GPU machine, from the repository root: the quick start with the carried Node and modules.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/out}
mkdir -p "$out"
xz -dc .gpu-quick/node.xz >/tmp/node && chmod +x /tmp/node
export PATH=/tmp:$PATH
[[ -d node_modules/vitest ]] || xz -dc .gpu-quick/nm.tar.xz | tar -x
nvidia-smi -L >"$out/gpu.txt" 2>&1
SCHEDULER=local DISAGG_HISTORY=off OUTPUT_PATH=/tmp/qs-results timeout 540 node bin/disagg-bench.js run "${1:-nixl}" >"$out/console.txt" 2>&1
status=$?
echo "exit $status" >>"$out/console.txt"
latest=$(ls -d /tmp/qs-results/runs/run-* 2>/dev/null | tail -1)
[[ -n $latest ]] && cp "$latest/summary.md" "$latest/results.json" "$out/" 2>/dev/null
tail -40 "$out/console.txt"
RUN
du -sh "$out"
