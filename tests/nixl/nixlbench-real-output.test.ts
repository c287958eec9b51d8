// The nixlbench extractor on REAL nixlbench output, from the nixlbench built by
// scripts/build-nixl.sh (tests/fixtures/nixl-real/), named <runtime>-[<UCX_TLS>-]<op>-batch<N>-<file>:
// `-rank0`: the log of the task that was nixlbench's rank 0; `-job`: the job's whole rank log
// (nixlbench.log: both tasks' output, UCX's info lines, the adapter's lines), as the framework
// reads it; `-by-hand`: two processes started by hand against a real etcd. Every table row the tool
// printed becomes one B/W and one latency per {block_size, batch_size, op_type}; nothing else in
// those logs (the banner, UCX's lines, the runtimes' lines, a failure after the table) is taken
// for a row or reported as a problem. Where UCX logged its lanes, they are the transport the
// file's name says was asked for.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { extractNixlbenchMetrics } from '../../framework/metrics/extractors/nixlbench.ts';
import { ucxLanes } from '../../runners/nixl/ucx-lanes.ts';

const dir = path.resolve(import.meta.dirname, '../fixtures/nixl-real');
const logs = fs.readdirSync(dir).filter((f) => f.endsWith('.log')).sort();
const read = (file: string) => fs.readFileSync(path.join(dir, file), 'utf8');

/** The table rows as nixlbench printed them: lines of 10 numbers after the header. */
function printedRows(text: string): string[][] {
  const lines = text.split('\n');
  const header = lines.findIndex((l) => l.startsWith('Block Size (B)'));
  return lines.slice(header + 1).map((l) => l.trim().split(/\s+/)).filter((w) => w.length === 10 && w.every((x) => /^\d+(\.\d+)?$/.test(x)));
}

describe('nixlbench extractor on real nixlbench output', () => {
  it('has the real logs it reads', () => {
    expect(logs.length).toBeGreaterThan(0);
  });

  for (const file of logs) {
    it(`${file}: every printed row, no problems`, () => {
      const text = read(file);
      const { metrics, problems } = extractNixlbenchMetrics(text);
      expect(problems).toEqual([]);
      const rows = printedRows(text);
      expect(rows.length).toBeGreaterThan(0);
      const bw = metrics.filter((m) => m.name === 'BW_GBPS');
      const lat = metrics.filter((m) => m.name === 'AVG_LAT_US');
      expect(bw).toHaveLength(rows.length);
      expect(lat).toHaveLength(rows.length);
      rows.forEach((row, i) => {
        expect(bw[i].labels).toMatchObject({ block_size: Number(row[0]), batch_size: Number(row[1]) });
        expect(bw[i].value).toBe(Number(row[2]));
        expect(lat[i].value).toBe(Number(row[3]));
        expect(metrics.find((m) => m.name === 'P99_TX_US' && m.labels.block_size === Number(row[0]) && m.labels.batch_size === Number(row[1]))?.value).toBe(Number(row[9]));
      });
      // the banner's op type labels every row
      const op = /Op type \(--op_type[^)]*\)\s*:\s*(\S+)/.exec(text)?.[1];
      expect(op).toMatch(/^(READ|WRITE)$/);
      expect(new Set(bw.map((m) => m.labels.op_type))).toEqual(new Set([op]));
      expect(file).toContain(`-${op!.toLowerCase()}-`);
    });
  }

  // UCX_TLS=shm (with UCX_MM_ERROR_HANDLING=y): shared memory only; tcp: tcp only
  const lanesWanted: Record<string, { want: RegExp; not: RegExp }> = {
    shm: { want: /^intra-node: rma\(sysv\/memory posix\/memory\)/, not: /tcp\// },
    tcp: { want: /^intra-node: rma_am\(tcp\/lo\)/, not: /(posix|sysv|cma)\/memory/ },
  };
  for (const file of logs.filter((f) => /^[a-z]+-(shm|tcp)-/.test(f))) {
    it(`${file}: UCX's lanes are the transport asked for`, () => {
      const { want, not } = lanesWanted[file.split('-')[1]];
      const lanes = ucxLanes(read(file));
      expect(lanes.some((l) => want.test(l)), lanes.join('\n')).toBe(true);
      expect(lanes.filter((l) => not.test(l))).toEqual([]);
    });
  }
});
