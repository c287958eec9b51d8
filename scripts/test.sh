#!/usr/bin/env bash
# The project's test command (npm test): the linter (Biome, biome.jsonc; seconds), the typecheck and,
# beside it, the project's whole test
# suite: the `unit` project (logic alone) and the `cluster` project (which brings up the real local
# SLURM cluster in its global setup and runs the end-to-end suites against it). `npm run test:unit`
# runs the unit project alone. Ends with one plain `unit: N passed, N failed, N skipped` line, which
# counts the whole suite (both projects; its name is older than the split, and tools read it).
# DISAGG_TEST_REPORT=FILE keeps Vitest's JSON report there (bench/suite-durations.ts makes a
# per-file duration table from it); the typecheck's and the whole run's seconds are printed.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
report=$(mktemp -t vitest-report.XXXXXX.json)
typecheck_log=$(mktemp -t typecheck.XXXXXX.log)
trap 'rm -f "$report" "$typecheck_log"' EXIT
# The typecheck runs beside the tests (it needs one CPU for a few seconds while the cluster comes up
# and the first files wait on their jobs); its verdict is printed, and counts, once both are done.
( npx tsc --noEmit -p . >"$typecheck_log" 2>&1; echo "typecheck: exit $? after $((SECONDS - start)) s" >>"$typecheck_log" ) &
typecheck_pid=$!
rc=0
# the linter first: a finding fails the command, after the suite has still run
lint_rc=0
npx biome lint --error-on-warnings --max-diagnostics=50 . || lint_rc=$?
echo "lint: exit $lint_rc (npx biome lint .)"
npx vitest run --project unit --project cluster --reporter=default --reporter=json --outputFile.json="$report" "$@" || rc=$?
wait "$typecheck_pid" || true
cat "$typecheck_log"
typecheck_rc=$(sed -n 's/^typecheck: exit \([0-9]*\) after.*/\1/p' "$typecheck_log")
[[ ${typecheck_rc:-1} == 0 ]] || { echo "typecheck failed (tsc --noEmit -p .): see above" >&2; ((rc != 0)) || rc=1; }
((lint_rc == 0)) || { echo "lint failed (npx biome lint .): see its findings at the start" >&2; ((rc != 0)) || rc=1; }
[[ -z ${DISAGG_TEST_REPORT:-} ]] || cp "$report" "$DISAGG_TEST_REPORT" 2>/dev/null || echo "could not keep the JSON report at DISAGG_TEST_REPORT=$DISAGG_TEST_REPORT" >&2
echo "npm test: $((SECONDS - start)) s"
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const skipped = r.numPendingTests + r.numTodoTests;
  console.log(`unit: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
' "$report" 2>/dev/null || echo "unit: no test report (vitest exited $rc before writing one)"
exit "$rc"
