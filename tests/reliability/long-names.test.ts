// Names the file system cannot hold are refused when the config is validated, naming the limit;
// a test whose id fits runs again on the same OUTPUT_PATH, its earlier job's logs kept beside the
// new ones (slurm_logs/<test id>.<job id>/). End to end on the local scheduler with a transfer
// benchmark on shared memory (nothing stands in for anything).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_TEST_ID_BYTES } from '../../framework/config/ids.ts';
import { JOB_ENDED_FILE } from '../../framework/scheduler/log-folder.ts';
import { planRun } from '../../framework/select/plan.ts';
import { readSettings } from '../../framework/settings.ts';
import { removeWorkDirs, repoRoot, runSuite, writeWorkDir } from '../fixtures/reliability/suite-run.ts';

afterAll(removeWorkDirs);

const config = readFileSync(path.join(repoRoot, 'test_configs/nixl/perf/kvpipe_shm_16x8M.yaml'), 'utf8');
const prefix = 'nixl_perf_';
/** A stem whose test id is `bytes` long, in two-byte characters where it can be (é is 2 bytes of UTF-8). */
const stemFor = (bytes: number) => {
  const left = bytes - prefix.length;
  return 'é'.repeat(Math.floor(left / 2)) + 'x'.repeat(left % 2);
};

describe('names against the file system\'s limits', () => {
  it(`a test id over ${MAX_TEST_ID_BYTES} bytes is refused at validation, naming the limit; one at it is valid`, () => {
    const long = stemFor(MAX_TEST_ID_BYTES + 1);
    const fits = stemFor(MAX_TEST_ID_BYTES);
    const { workDir, outputPath } = writeWorkDir({ [`nixl/perf/${long}`]: config, [`nixl/perf/${fits}`]: config }, 'long-names-');
    const tests = planRun({ settings: readSettings({ WORK_DIR: workDir, OUTPUT_PATH: outputPath }), gpu: { gpuType: undefined, source: 'none' }, env: {} }).tests;
    const refused = tests.find((t) => t.stem === long)!;
    expect(refused.issues.map((i) => i.message)).toEqual([
      `the test id ${(prefix + long).slice(0, 40)}... is ${MAX_TEST_ID_BYTES + 1} bytes, more than the ${MAX_TEST_ID_BYTES} taken: it names the test's log folder (and, with the earlier job's id, the folder its logs are kept in on a later run), and a file name holds at most 255 bytes; shorten the config's file name by 1 bytes`,
    ]);
    expect(tests.find((t) => t.stem === fits)!.issues).toEqual([]);
  });

  it(`a test of a ${MAX_TEST_ID_BYTES}-byte id runs twice on one OUTPUT_PATH; the second keeps the first's logs`, { timeout: 300_000 }, async () => {
    const stem = stemFor(MAX_TEST_ID_BYTES);
    const id = prefix + stem;
    const { workDir, outputPath } = writeWorkDir({ [`nixl/perf/${stem}`]: config }, 'long-names-run-');
    const first = await runSuite({ workDir, outputPath, scheduler: 'local', project: 'nixl' });
    expect(first.exitCode, first.output).toBe(0);
    const second = await runSuite({ workDir, outputPath, scheduler: 'local', project: 'nixl' });
    expect(second.exitCode, second.output).toBe(0);
    expect(second.output).not.toMatch(/ENAMETOOLONG/);
    const [firstJob, secondJob] = second.ledger.filter((e) => e.test === id && e.state === 'SUBMITTED').map((e) => e.job);
    expect(secondJob).toBeDefined();
    const logs = path.join(outputPath, 'slurm_logs');
    const kept = readdirSync(logs).filter((name) => name.startsWith(`${id}.`));
    expect(kept).toHaveLength(1);
    expect(Buffer.byteLength(kept[0])).toBeLessThanOrEqual(255);
    expect(existsSync(path.join(logs, kept[0], `slurm-${firstJob}.out`))).toBe(true);
    expect(existsSync(path.join(logs, id, `slurm-${secondJob}.out`))).toBe(true);
    // The nixl job's script marked its end, with its exit status (the watcher polls on it).
    expect(readFileSync(path.join(logs, id, JOB_ENDED_FILE), 'utf8')).toBe('0\n');
  });
});
