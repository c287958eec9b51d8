// A matrix file that changes between validation (when the run is planned) and the job's build
// (when its batch is submitted, possibly hours later): what the job runs is checked as it is
// copied into the log folder, so a file that no longer passes fails the test, naming the rule it
// breaks now, and nothing is submitted with it; one that still passes but is not the text that was
// validated fails naming the change: what runs is what was checked.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPlannedTest } from '../../framework/select/plan.ts';
import { nixlType } from '../../framework/types/nixl.ts';
import { matrixText } from '../../framework/types/nixl/kinds/traffic-patterns.ts';

const repo = path.resolve(import.meta.dirname, '../..');
const workDir = mkdtempSync(path.join(tmpdir(), 'matrix-changed-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));
const configDir = path.join(workDir, 'test_configs/nixl/perf');
mkdirSync(path.join(configDir, 'matrices'), { recursive: true });
cpSync(path.join(repo, 'test_configs/nixl/perf/ct_seed_read_shm.yaml'), path.join(configDir, 'ct.yaml'));
cpSync(path.join(repo, 'test_configs/nixl/perf/matrices/seed-example.txt'), path.join(configDir, 'matrices/seed-example.txt'), { force: true });
const matrix = path.join(configDir, 'matrices/seed-example.txt');
const file = { id: 'nixl_perf_ct', testType: 'nixl', category: 'perf', stem: 'ct', absFile: path.join(configDir, 'ct.yaml'), displayFile: 'test_configs/nixl/perf/ct.yaml' };

const plan = () => loadPlannedTest(file, { gpuType: undefined, source: 'none' }, {});
const build = (config: Record<string, unknown>, name: string) =>
  nixlType.buildJob({ testId: file.id, category: 'perf', config, logDir: path.join(workDir, name), workDir, packageRoot: repo, gpuType: undefined });

describe('a matrix file changed after validation', () => {
  it('no longer passing: the build fails naming the rule it breaks now; nothing is copied to run', async () => {
    const planned = plan();
    expect(planned.issues).toEqual([]);
    writeFileSync(matrix, '0 1M 1M\n0 0 1M\n0 0 0\n'); // 3 x 3 for a run of 4 ranks
    await expect(build(planned.resolved!.config, 'bad')).rejects.toThrow(
      /ct_perftest\.traffic_pattern\.matrix_file: .*seed-example\.txt: the matrix is 3 x 3 but the run has 4 ranks \(a file the config names changed since the config was validated\); not run$/,
    );
  });

  it('still passing but not the text validated: the build fails naming the change; nothing runs that was not checked', async () => {
    cpSync(path.join(repo, 'test_configs/nixl/perf/matrices/seed-example.txt'), matrix);
    const planned = plan();
    expect(planned.issues).toEqual([]);
    // Every cell doubled: a valid 4 x 4 matrix that moves twice the bytes of the one validated.
    const doubled = readFileSync(matrix, 'utf8').replace(/(\d+(?:\.\d+)?)([KMG]?)/g, (_m, n: string, u: string) => `${Number(n) * 2}${u}`);
    writeFileSync(matrix, doubled);
    await expect(build(planned.resolved!.config, 'changed')).rejects.toThrow(
      /ct_perftest\.traffic_pattern\.matrix_file: .*seed-example\.txt is not the text validated \(sha-256 [0-9a-f]{12}\.\.\. then, [0-9a-f]{12}\.\.\. now, \d+ bytes\); what runs must be what was checked: start the run again to validate it .*; not run$/,
    );
    expect(() => readFileSync(path.join(workDir, 'changed', 'ct_matrix.txt'))).toThrow(/ENOENT/);
    // Validated again (a new plan), the same text runs.
    const again = plan();
    expect(again.issues).toEqual([]);
    await build(again.resolved!.config, 'good');
    expect(readFileSync(path.join(workDir, 'good', 'ct_matrix.txt'), 'utf8')).toBe(doubled);
  });

  it('the copy is checked as it is read: a change after the rules looked is refused there too', () => {
    writeFileSync(matrix, '0 1M\n0 0\n');
    expect(() => matrixText(configDir, 'matrices/seed-example.txt', 4, ['ct_perftest', 'traffic_pattern', 'matrix_file'])).toThrow(
      /^matrices\/seed-example\.txt ct_perftest\.traffic_pattern\.matrix_file: the matrix file changed since the config was validated and no longer passes: .*seed-example\.txt: the matrix is 2 x 2 but the run has 4 ranks; not run$/,
    );
  });
});
