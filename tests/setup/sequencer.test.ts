// The file order's input on a fresh clone (scripts/test-sequencer.ts): the committed duration tables.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tableDurations } from '../../scripts/test-sequencer.ts';

const root = mkdtempSync(path.join(tmpdir(), 'sequencer-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('tableDurations', () => {
  it('takes each file\'s longest time over every table, and nothing from the other lines', () => {
    mkdirSync(path.join(root, 'bench/results'), { recursive: true });
    const table = (rows: string) => `# machine: vm\ntests: 3 in 2 files\n\n## Per file\n seconds  share tests  file\n${rows}\n\n## The 20 slowest tests\n    95.0  tests/a.test.ts > a slow test\n`;
    writeFileSync(path.join(root, 'bench/results/suite-durations-1-before.txt'), table('    12.5  60.0%     2  tests/a.test.ts\n     8.0  40.0%     1  tests/b.test.ts (failed)'));
    writeFileSync(path.join(root, 'bench/results/suite-durations-2-after.txt'), table('    30.0  90.0%     2  tests/b.test.ts\n     3.0  10.0%     1  tests/a.test.ts'));
    writeFileSync(path.join(root, 'bench/results/other.txt'), table('   999.0 100.0%     1  tests/c.test.ts'));
    expect(tableDurations(root)).toEqual(new Map([['tests/a.test.ts', 12.5], ['tests/b.test.ts', 30]]));
  });

  it('reads the committed tables of this repository (the slowest files are in them)', () => {
    const durations = tableDurations(path.resolve(import.meta.dirname, '../..'));
    expect(durations.size).toBeGreaterThan(100);
    expect(durations.get('tests/reliability/cluster-faults.test.ts')).toBeGreaterThan(30);
  });

  it('a root without tables gives nothing', () => {
    expect(tableDurations(path.join(root, 'nowhere')).size).toBe(0);
  });
});
