// OUTPUT_PATH under stress, end to end: two runs writing one OUTPUT_PATH at the same moment (on
// the real SLURM cluster) leave no torn CSV, JSON or ledger; an OUTPUT_PATH whose file system
// fills up mid-run (a tmpfs of a few hundred KiB, filled by the test) keeps whole everything written
// before, and the test that could not be saved fails with one clear error.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { clusterEnv, describeCluster } from '../setup/cluster.ts';
import {
  readOutputs, recordOf, release, releaseFile, removeWorkDirs, standinConfig, startSuite, statesOf, csvRowPrefixOf, testIdOf, waitUntil, writeWorkDir,
} from '../fixtures/reliability/suite-run.ts';
import { readCsv } from '../fixtures/reliability/csv-read.ts';
import { PERF_CSV_COLUMNS, PERF_CSV_FILE } from '../../framework/results/csv.ts';
import { LEDGER_FILE } from '../../framework/jobs/ledger.ts';
import { canMountTmpfs } from '../fixtures/can-mount.ts';

afterAll(removeWorkDirs);

const read = (outputPath: string, file: string) => readFileSync(path.join(outputPath, file), 'utf8');

/** Every line of the ledger is one whole JSON object. */
function ledgerLines(outputPath: string): Array<{ run: string; test: string; state: string }> {
  return read(outputPath, LEDGER_FILE).split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

const canMount = canMountTmpfs();

describeCluster.concurrent('OUTPUT_PATH under stress', () => {
  it('two runs writing one OUTPUT_PATH at once: every record, row and ledger line whole, nothing lost', { timeout: 240_000 }, async () => {
    // All six jobs end together (one gate), so both runs write results at the same moment.
    const gate = releaseFile('both-runs');
    const names = { a: ['a1', 'a2', 'a3'], b: ['b1', 'b2', 'b3'] };
    const dirs = await Promise.all(Object.values(names).map(async (list) =>
      writeWorkDir(Object.fromEntries(await Promise.all(list.map(async (n) => [n, await standinConfig({ client: `wait:${gate}` })] as const))), 'shared-output-')));
    const outputPath = dirs[0].outputPath;
    const runs = dirs.map(({ workDir }) => startSuite({ workDir, outputPath, scheduler: 'slurm', env: clusterEnv() }));
    try {
      await waitUntil('all six jobs running', () => [...names.a, ...names.b].every((n) => statesOf(outputPath, testIdOf(n)).includes('RUNNING')), 180_000);
    } finally {
      release(gate);
    }
    const results = await Promise.all(runs);
    for (const r of results) expect(r.exitCode, String(r.all)).toBe(0);

    const { records } = readOutputs(outputPath); // results.json parses
    for (const n of [...names.a, ...names.b]) expect(recordOf(records, testIdOf(n)), n).toMatchObject({ verdict: 'passed' });
    const csv = read(outputPath, PERF_CSV_FILE);
    expect(csv.split('\n').filter((l) => l.startsWith('network_name,'))).toHaveLength(1);
    const rows = readCsv(csv);
    for (const row of rows) expect(Object.keys(row)).toEqual([...PERF_CSV_COLUMNS]);
    const rowsOf = (n: string) => rows.filter((r) => r.network_name.startsWith(csvRowPrefixOf(n))).length;
    const perTest = [...names.a, ...names.b].map(rowsOf);
    expect(new Set(perTest).size, JSON.stringify(perTest)).toBe(1);
    expect(perTest[0]).toBeGreaterThan(0);
    expect(rows).toHaveLength(6 * perTest[0]);
    const ledger = ledgerLines(outputPath);
    expect(new Set(ledger.map((e) => e.run)).size).toBe(2);
    expect(read(outputPath, 'report.html').trimEnd()).toMatch(/<\/html>$/);
  });

  it.skipIf(!canMount)(`OUTPUT_PATH filling up mid-run: what was written stays whole, the test that cannot be saved fails saying so${canMount ? '' : ' (skipped: cannot mount a tmpfs here)'}`, { timeout: 240_000 }, async () => {
    const gate = releaseFile('second');
    const { workDir, outputPath } = writeWorkDir({
      first: await standinConfig({ client: 'ok' }),
      second: await standinConfig({ client: `wait:${gate}` }),
    }, 'full-output-');
    mkdirSync(outputPath);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', outputPath]);
    try {
      const run = startSuite({ workDir, outputPath, scheduler: 'local' });
      let before: ReturnType<typeof readOutputs> & { csv: string };
      try {
        await waitUntil('first written, second running', () => {
          const outputs = readOutputs(outputPath);
          return recordOf(outputs.records, testIdOf('first')) && outputs.csvRows.length > 0 && statesOf(outputPath, testIdOf('second')).includes('RUNNING');
        }, 120_000);
        before = { ...readOutputs(outputPath), csv: read(outputPath, PERF_CSV_FILE) };
        // The disk fills up (as another writer would fill it) while the second job runs.
        try {
          writeFileSync(path.join(outputPath, 'filler'), Buffer.alloc(1024 * 1024));
        } catch (error) {
          expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
        }
      } finally {
        release(gate);
      }
      const result = await run;
      const output = String(result.all);
      expect(result.exitCode, output).toBe(1);
      // Written before: whole and unchanged.
      const after = readOutputs(outputPath);
      expect(after.records).toEqual(before.records);
      expect(read(outputPath, PERF_CSV_FILE)).toBe(before.csv);
      const ledger = ledgerLines(outputPath); // every line whole
      expect(ledger.slice(0, before.ledger.length)).toEqual(before.ledger);
      // The second test failed, saying the disk is full; no crash, no stack of an unhandled error.
      expect(output).toMatch(new RegExp(`FAIL .*${testIdOf('second')}[\\s\\S]*no space left on device`));
      expect(output).not.toMatch(/Unhandled (Error|Rejection)/);
      expect(recordOf(after.records, testIdOf('second'))).toBeUndefined();
    } finally {
      execFileSync('umount', ['-l', outputPath]);
    }
  });
});
