#!/usr/bin/env bash
# The project's test command (npm test): typecheck, then the unit project (which brings up the
# real local SLURM cluster in its global setup and runs the end-to-end suites against it).
# Ends with one plain `unit: N passed, N failed, N skipped` line.
# DISAGG_TEST_REPORT=FILE keeps Vitest's JSON report there (bench/suite-durations.ts makes a
# per-file duration table from it); the typecheck's and the whole run's seconds are printed.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
npx tsc --noEmit -p .
echo "typecheck: $((SECONDS - start)) s"
report=$(mktemp -t vitest-report.XXXXXX.json)
trap 'rm -f "$report"' EXIT
rc=0
npx vitest run --project unit --reporter=default --reporter=json --outputFile.json="$report" "$@" || rc=$?
[[ -z ${DISAGG_TEST_REPORT:-} ]] || cp "$report" "$DISAGG_TEST_REPORT" 2>/dev/null || echo "could not keep the JSON report at DISAGG_TEST_REPORT=$DISAGG_TEST_REPORT" >&2
echo "npm test: $((SECONDS - start)) s"
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const skipped = r.numPendingTests + r.numTodoTests;
  console.log(`unit: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
' "$report" 2>/dev/null || echo "unit: no test report (vitest exited $rc before writing one)"
exit "$rc"
