// A history moved between the two stores through `history export --format history` and
// `history import` (the real bin, a real DuckDB file, a real PostgreSQL 15): DuckDB -> PostgreSQL
// -> DuckDB loses nothing: the same runs, records, metric values, and a checksum of every value
// with its series, time, branch and gate flag.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HistoryTarget } from '../../framework/settings.ts';
import { withHistory } from '../../framework/history/store.ts';
import { startPostgres, type LocalPostgres } from '../../scripts/postgres-local.ts';
import { entry, record } from '../fixtures/history/records.ts';

const root = path.resolve(import.meta.dirname, '../..');
const scratch = mkdtempSync(path.join(tmpdir(), 'history-move-'));
let postgres: LocalPostgres | undefined;
beforeAll(async () => {
  postgres = await startPostgres({ fsync: false });
}, 120_000);
afterAll(() => {
  postgres?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

const cli = (store: string, args: string[]) => execa('node', [path.join(root, 'bin/disagg-bench.js'), 'history', ...args], { cwd: scratch, reject: false, env: { DISAGG_HISTORY: store, OUTPUT_PATH: scratch } });

/** Counts and an order-free checksum of everything a value carries. */
async function fingerprint(target: HistoryTarget) {
  return withHistory(target, async (store) => {
    const runs = await store.runs();
    const records = await store.records(runs.map((r) => r.runId));
    // a sum of per-value hashes: order-free, as each store returns its rows in its own order
    let checksum = 0;
    let values = 0;
    for (const r of records) {
      for (const m of r.metrics) {
        const text = JSON.stringify([r.run!.id, r.testId, r.gpuType, r.run!.branch, r.run!.kind, r.run!.gate?.includes(m.name), m.name, m.labels, m.value, m.unit, m.higherIsBetter, r.timing.end, r.verdict]);
        let h = 0x811c9dc5;
        for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
        checksum = (checksum + (h >>> 0)) % 2 ** 32;
        values++;
      }
    }
    const sum = records.reduce((a, r) => a + r.metrics.reduce((b, m) => b + m.value, 0), 0);
    return { runs: runs.map((r) => [r.runId, r.kind, r.label, r.commit, r.branch, r.gpuTypes, r.tests]), records: records.length, values, sum, checksum };
  });
}

describe('moving a history between DuckDB and PostgreSQL', () => {
  it('export --format history, import into the other store, and back: counts and checksums equal', { timeout: 300_000 }, async () => {
    const duck = path.join(scratch, 'a.duckdb');
    const records = Array.from({ length: 12 }, (_, k) => {
      const r = record({ runId: `run${k % 4}`, day: k, testId: `disagg_perf_t${k % 3}`, ttft: 20 + k / 7, throughput: 1000 - k * 1.25, gpuType: k % 2 ? 'H100' : 'B200', kind: k % 4 === 3 ? 'local' : 'post-merge' });
      r.run = { ...r.run!, branch: k % 4 === 2 ? 'pr-7' : 'main', commit: `c${k}`, label: k % 4 === 1 ? 'nightly' : undefined, gate: ['SERVER_OUTPUT_TOKEN_THROUGHPUT'] };
      return r;
    });
    await withHistory({ kind: 'duckdb', file: duck }, (s) => s.append(records.map(entry)), { create: true });
    const before = await fingerprint({ kind: 'duckdb', file: duck });

    const out1 = path.join(scratch, 'a.jsonl');
    expect((await cli(duck, ['export', '--format', 'history', '-o', out1])).stderr).toMatch(/^12 record\(s\) written to/);
    const pg = postgres!.createDatabase('moved');
    const imported = await cli(pg, ['import', out1]);
    expect(imported.exitCode, imported.stderr).toBe(0);
    expect(imported.stdout).toMatch(/12 record\(s\) and 36 metric value\(s\) appended, 0 already there/);
    const inPostgres = await fingerprint({ kind: 'postgres', url: pg });
    expect(inPostgres).toEqual(before);

    const out2 = path.join(scratch, 'b.jsonl');
    await cli(pg, ['export', '--format', 'history', '-o', out2]);
    const back = path.join(scratch, 'b.duckdb');
    expect((await cli(back, ['import', out2])).exitCode).toBe(0);
    expect(await fingerprint({ kind: 'duckdb', file: back })).toEqual(before);
    // importing the same export again adds nothing
    expect((await cli(back, ['import', out2])).stdout).toMatch(/0 record\(s\) and 0 metric value\(s\) appended, 12 already there/);
  });
});
