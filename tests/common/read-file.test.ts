// The one reading helper (runners/common/read-file.ts): regular files of a bounded size only.
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileReadError, readRegularFile, readRegularFileSync, readTailSync } from '../../runners/common/read-file.ts';
import { readMatrixFile } from '../../runners/xfer/matrix.ts';
import { extractMetrics } from '../../framework/metrics/log-parser.ts';
import { loadPlannedTest } from '../../framework/select/plan.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'read-file-'));
const at = (name: string) => path.join(dir, name);

describe('readRegularFile', () => {
  execFileSync('mkfifo', [at('fifo')]);
  symlinkSync('/dev/zero', at('zero'));
  writeFileSync(at('small'), 'abc');

  it('refuses a FIFO, a device, a folder and a missing file in one sentence each, sync and async', async () => {
    const cases: Array<[string, string]> = [
      [at('fifo'), 'is not a regular file (a FIFO)'],
      [at('zero'), 'is not a regular file (a character device)'],
      [dir, 'is not a regular file (a folder)'],
      [at('nope'), 'cannot be read: no such file (ENOENT)'],
    ];
    for (const [file, reason] of cases) {
      expect(() => readRegularFileSync(file, 1024)).toThrow(new FileReadError(file, reason, 'unreadable').message);
      await expect(readRegularFile(file, 1024)).rejects.toThrow(`${file} ${reason}`);
    }
  });

  it('reads a file up to its bound and refuses one past it', async () => {
    expect(readRegularFileSync(at('small'), 3).toString()).toBe('abc');
    expect((await readRegularFile(at('small'), 3)).toString()).toBe('abc');
    expect(() => readRegularFileSync(at('small'), 2)).toThrow(`${at('small')} is 3 B (3 bytes), more than the 2 B read at most from such a file`);
    await expect(readRegularFile(at('small'), 2)).rejects.toMatchObject({ code: 'too-large' });
  });

  it('reads only the tail of a large file', () => {
    writeFileSync(at('big.log'), 'x'.repeat(1 << 20));
    appendFileSync(at('big.log'), '\nlast line\n');
    expect(readTailSync(at('big.log'), 16)).toBe('xxxxx\nlast line\n');
  });

  it('matrix files and logs go through it: a FIFO matrix and a FIFO log are one sentence, not a hang', async () => {
    expect(() => readMatrixFile(at('fifo'), 2)).toThrow(`${at('fifo')}: the matrix file is not a regular file (a FIFO)`);
    const logDir = mkdtempSync(path.join(tmpdir(), 'read-file-log-'));
    symlinkSync(at('fifo'), path.join(logDir, 'bench.log'));
    const result = await extractMetrics(logDir, [{ logFile: 'bench.log', extractor: 'regex', pattern: 'x (\\d+)', names: ['X'] } as never]);
    expect(result.problems).toEqual(['bench.log is not a regular file (a FIFO)']);
  });

  it("a config's matrix_file naming a FIFO or /dev/zero fails validation in one sentence (no hang, no bad_alloc)", () => {
    const example = readFileSync(path.join(import.meta.dirname, '../../test_configs/nixl/perf/ct_seed_write_shm.yaml'), 'utf8');
    for (const [name, matrix, kind] of [['fifo-matrix', at('fifo'), 'a FIFO'], ['zero-matrix', '/dev/zero', 'a character device']]) {
      const absFile = at(`${name}.yaml`);
      writeFileSync(absFile, example.replace('matrix_file: matrices/seed-example.txt', `matrix_file: ${matrix}`));
      const planned = loadPlannedTest({ id: `nixl_perf_${name}`, testType: 'nixl', category: 'perf', stem: name, absFile, displayFile: `${name}.yaml` }, { gpuType: undefined, source: 'none' }, {});
      expect(planned.issues.map((i) => `${i.path}: ${i.message}`)).toEqual([`ct_perftest.traffic_pattern.matrix_file: ${matrix}: the matrix file is not a regular file (${kind})`]);
    }
  });
});
