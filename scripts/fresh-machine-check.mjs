// What a run of the nixl configs on a machine without UCX and libfabric must have recorded: it
// ended green, every config on those backends was skipped with the reason and the Debian/Ubuntu
// package to install, said the same in results.json, the digest (summary.json, summary.md) and
// report.html, and every shm config passed. Used by scripts/fresh-machine.sh and by
// tests/select/fresh-machine.test.ts, so the script and CI check the same things.
//   node scripts/fresh-machine-check.mjs RUN_DIR CONFIG_DIR   (CONFIG_DIR: test_configs/nixl)
// Prints one line per check; exits 1 when one fails.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';

/** The package a fresh Debian/Ubuntu machine lacks for each transport backend. */
export const PACKAGE_OF_BACKEND = { ucx: 'libucx0', libfabric: 'libfabric1' };

/** Each nixl config's test id and backend (test_configs/nixl/<category>/<name>.yaml). */
export function backendsOf(configDir) {
  const found = new Map();
  for (const category of readdirSync(configDir, { withFileTypes: true }).filter((e) => e.isDirectory())) {
    for (const file of readdirSync(path.join(configDir, category.name)).filter((f) => f.endsWith('.yaml'))) {
      const config = parse(readFileSync(path.join(configDir, category.name, file), 'utf8'));
      found.set(`nixl_${category.name}_${file.replace(/\.yaml$/, '')}`, config?.benchmark?.backend);
    }
  }
  return found;
}

/** The checks, each { ok, what }; the run folder holds results.json, summary.json, summary.md, report.html. */
export function checkRun(runDir, configDir) {
  const read = (file) => readFileSync(path.join(runDir, file), 'utf8');
  const results = JSON.parse(read('results.json')).records.filter((r) => !r.saving);
  const summary = JSON.parse(read('summary.json'));
  const summaryMd = read('summary.md');
  const report = read('report.html');
  const checks = [];
  const check = (ok, what) => checks.push({ ok: Boolean(ok), what });

  const backends = backendsOf(configDir);
  const byId = new Map(results.map((r) => [r.testId, r]));
  const summaryById = new Map(summary.tests.map((t) => [t.testId, t]));
  check(results.length === backends.size, `results.json holds a record for each of the ${backends.size} configs (${results.length})`);
  const failed = results.filter((r) => r.verdict !== 'passed' && r.verdict !== 'skipped').map((r) => `${r.testId} ${r.verdict}`);
  check(failed.length === 0, `no test failed${failed.length ? `: ${failed.join(', ')}` : ''}`);
  check(summary.totals.failed === 0 && summary.totals.notRun === 0, `summary.json: ${summary.totals.passed} passed, ${summary.totals.failed} failed, ${summary.totals.skipped} skipped, ${summary.totals.notRun} not run`);

  for (const [backend, pkg] of Object.entries(PACKAGE_OF_BACKEND)) {
    const ids = [...backends].filter(([, b]) => b === backend).map(([id]) => id);
    check(ids.length > 0, `at least one config on ${backend} (${ids.join(', ') || 'none'})`);
    for (const id of ids) {
      const record = byId.get(id);
      const reason = record?.skipReason ?? '';
      const names = reason.includes(`backend ${backend} needs`) && reason.includes(`install the Debian/Ubuntu package ${pkg} (apt-get install ${pkg})`);
      check(record?.verdict === 'skipped' && record.jobId === null && names, `${id}: skipped without a job in results.json, naming ${pkg}: ${reason || '(no reason)'}`);
      const digest = summaryById.get(id);
      check(digest?.verdict === 'skipped' && digest.skipReason === reason, `${id}: skipped in summary.json with the same reason`);
      check(summaryMd.split('\n').some((l) => l.startsWith(`- ${id}: `) && l.includes(`apt-get install ${pkg}`)), `${id}: skipped in summary.md, naming ${pkg}`);
      check(report.includes(id) && report.includes(`install the Debian/Ubuntu package ${pkg} (apt-get install ${pkg})`), `${id}: its reason and ${pkg} in report.html`);
    }
  }
  const shm = [...backends].filter(([, b]) => b === 'shm').map(([id]) => id);
  const shmPassed = shm.filter((id) => byId.get(id)?.verdict === 'passed');
  check(shm.length > 0 && shmPassed.length === shm.length, `every shm config passed (${shmPassed.length} of ${shm.length})`);
  return checks;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [runDir, configDir] = process.argv.slice(2);
  if (!runDir || !configDir) {
    console.error('usage: node scripts/fresh-machine-check.mjs RUN_DIR CONFIG_DIR');
    process.exit(2);
  }
  const checks = checkRun(runDir, configDir);
  for (const c of checks) console.log(`${c.ok ? 'ok  ' : 'FAIL'} ${c.what}`);
  process.exit(checks.every((c) => c.ok) ? 0 : 1);
}
