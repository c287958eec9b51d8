// A user's mistake in the environment: one line naming the variable, its value and what is
// expected, before anything is submitted; never Vitest's "Unhandled Error" frame with a stack.
// Every variable of README's Environment table has a case here (the table is read, so a new
// variable without a case fails this file). End to end: `vitest run --project nixl` as a child.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkRunEnvironment } from '../../framework/suite/env-check.ts';
import { readSettings } from '../../framework/settings.ts';
import { schedulerProblem } from '../../framework/scheduler/create.ts';
import { repoRoot, removeWorkDirs, runSuite, writeWorkDir } from '../fixtures/reliability/suite-run.ts';

afterAll(removeWorkDirs);

/** The variables of README.md's "### Environment" table. */
function readmeVariables(): string[] {
  const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const table = readme.slice(readme.indexOf('### Environment')).split('\n\n')[1];
  return table.split('\n').slice(2).flatMap((row) => [...row.split('|')[1].matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]));
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A wrong value and the line it must produce; or why any value is taken as it is. */
type Case = { bad: string; says: RegExp } | { free: string };
const cases: Record<string, Case> = {
  WORK_DIR: { bad: '/nonexistent/work', says: /^WORK_DIR="\/nonexistent\/work": does not exist; expected the folder that holds test_configs\/ and testlist\/$/ },
  OUTPUT_PATH: { bad: '/proc/version/results', says: /^OUTPUT_PATH=\/proc\/version\/results cannot be written: \/proc\/version is a file, not a folder\./ },
  // The registry's words: every registered scheduler and the order a run with SCHEDULER unset tries them in.
  SCHEDULER: { bad: 'bogus', says: new RegExp(`^${escapeRegExp(schedulerProblem({ SCHEDULER: 'bogus' })!)}$`) },
  DISAGG_BATCH_SIZE: { free: 'an invalid value warns and means 5, as in the Python framework (tested below)' },
  DISAGG_TEST_LIST: { bad: 'testlist/missing.txt', says: /^DISAGG_TEST_LIST="testlist\/missing\.txt" \(.*\) cannot be read: no such file \(ENOENT\); expected a file with one test id per line/ },
  GPU_TYPE: { bad: 'bogus', says: /^GPU_TYPE="bogus": bogus is no known GPU type \(GB200, .*\) and no config lists it in metadata\.supported_gpus; every config that needs a GPU would be skipped$/ },
  DEBUG_MODE: { bad: 'maybe', says: /^DEBUG_MODE="maybe": expected 1 or 0/ },
  DEBUG_JOB_ID: { free: 'a job id, whatever the scheduler calls it' },
  RESUME: { bad: 'please', says: /^RESUME="please": expected 1 or 0/ },
  DISAGG_QUEUE_ALLOWANCE_SEC: { bad: 'an hour', says: /^DISAGG_QUEUE_ALLOWANCE_SEC="an hour": expected a number of seconds > 0/ },
  DISAGG_POLL_MAX_SEC: { bad: '-1', says: /^DISAGG_POLL_MAX_SEC="-1": expected a number of seconds > 0/ },
  DISAGG_PROGRESS: { bad: 'fancy', says: /^DISAGG_PROGRESS="fancy": expected plain or live or off/ },
  DISAGG_CSV_EXTRA_ROWS: { bad: 'maybe', says: /^DISAGG_CSV_EXTRA_ROWS="maybe": expected 1 or 0/ },
  DISAGG_PRINT_METRICS: { bad: 'maybe', says: /^DISAGG_PRINT_METRICS="maybe": expected 1 or 0/ },
  DISAGG_FAIL_UNFIT: { bad: 'sometimes', says: /^DISAGG_FAIL_UNFIT="sometimes": expected 1 or 0/ },
  SLURM_PARTITION: { free: 'a value for the configs (sbatch refuses an unknown partition, failing the test with its message)' },
  SLURM_ACCOUNT: { free: 'a value for the configs' },
  CONTAINER_IMAGE: { free: 'a value for the configs' },
  CONTAINER_MOUNT: { free: 'a mount list for the configs, as the cluster\'s container runtime takes it' },
  MODEL_DIR: { free: 'a path on the cluster\'s nodes, not necessarily on this machine' },
  DATASET_DIR: { free: 'a path on the cluster\'s nodes' },
  SCRIPT_DIR: { free: 'a path on the cluster\'s nodes' },
  DISAGG_HISTORY: { bad: 'mysql://db/perf', says: /^DISAGG_HISTORY="mysql:\/\/db\/perf": expected off, a postgres:\/\/user@host:port\/database URL or a file path \(DuckDB\)$/ },
  DISAGG_RUN_KIND: { bad: 'nightly', says: /^DISAGG_RUN_KIND="nightly": expected post-merge or pre-merge/ },
  DISAGG_REGRESSION: { bad: 'maybe', says: /^DISAGG_REGRESSION="maybe": expected fail or warn or off/ },
  DISAGG_REGRESSION_THRESHOLD: { bad: 'five', says: /^DISAGG_REGRESSION_THRESHOLD="five": expected a percentage > 0/ },
  DISAGG_RUN_LABEL: { free: 'a name for the run, kept with its records' },
  DISAGG_FORCE_ENV: { bad: 'SLURM_PARTITON', says: /^DISAGG_FORCE_ENV="SLURM_PARTITON": SLURM_PARTITON is not a variable that fills config values; expected all, or names among .*SLURM_PARTITION/ },
};

describe('environment variables', () => {
  it('README lists exactly the variables that have a case here', () => {
    expect(readmeVariables().sort()).toEqual(Object.keys(cases).sort());
  });

  for (const [name, c] of Object.entries(cases)) {
    if ('free' in c) continue;
    it(`${name}=${JSON.stringify(c.bad)} is refused with one line naming it`, async () => {
      const error = await checkRunEnvironment({ [name]: c.bad }).then(
        () => undefined,
        (err: Error) => err,
      );
      expect(error, `${name} was accepted`).toBeDefined();
      expect(error!.message.split('\n')).toHaveLength(1);
      expect(error!.message).toMatch(c.says);
    });
  }

  it('names every wrong variable at once, one line each', async () => {
    // SCHEDULER is checked against the scheduler registry (a scheduler may be registered later than the settings are read).
    await expect(checkRunEnvironment({ SCHEDULER: 'slurmm', RESUME: 'maybe', DISAGG_POLL_MAX_SEC: '0' })).rejects.toThrow(
      /^SCHEDULER="slurmm": .*\nRESUME="maybe": .*\nDISAGG_POLL_MAX_SEC="0": .*$/,
    );
  });

  it('an invalid DISAGG_BATCH_SIZE warns in one line and uses 5 (upstream behaviour); 0 means all at once', async () => {
    expect(await checkRunEnvironment({ DISAGG_BATCH_SIZE: 'ten', OUTPUT_PATH: writeWorkDir({}).outputPath })).toMatchObject({
      settings: { batchSize: 5 },
      warnings: ['DISAGG_BATCH_SIZE="ten" is not a whole number as Python\'s int() reads it (jobs per batch, 0 = all at once); using 5, as the Python framework does'],
    });
    expect(readSettings({ DISAGG_BATCH_SIZE: '0' }).batchSize).toBe(0);
  });

  it("DISAGG_BATCH_SIZE is read as Python's int() reads it: 1e9, 0x2 and 2.0 warn; 1_000 and ' 7 ' are numbers; 0 or less is all at once", () => {
    for (const bad of ['1e9', '0x2', '2.0', ' ', '1__0', '_1']) {
      expect(readSettings({ DISAGG_BATCH_SIZE: bad }), bad).toMatchObject({ batchSize: 5, batchSizeWarning: expect.stringMatching(/^DISAGG_BATCH_SIZE=.* is not a whole number as Python's int\(\) reads it/) });
    }
    expect(readSettings({ DISAGG_BATCH_SIZE: '1_000' }).batchSize).toBe(1000);
    expect(readSettings({ DISAGG_BATCH_SIZE: ' 7 \n' }).batchSize).toBe(7);
    expect(readSettings({ DISAGG_BATCH_SIZE: '+3' }).batchSize).toBe(3);
    // BatchManager: `if batch_size is None or batch_size <= 0: unlimited`.
    expect(readSettings({ DISAGG_BATCH_SIZE: '-3' })).toMatchObject({ batchSize: 0, batchSizeWarning: undefined });
    // Beyond every count of tests it is all at once as well, without rounding surprises.
    expect(readSettings({ DISAGG_BATCH_SIZE: '99999999999999999999999' }).batchSize).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('a wait in seconds longer than a timer can hold is refused, not fired at once', () => {
    expect(() => readSettings({ DISAGG_QUEUE_ALLOWANCE_SEC: '1e300' })).toThrow(
      /^DISAGG_QUEUE_ALLOWANCE_SEC="1e300": expected a number of seconds > 0, at most 2147483, the longest a timer can wait \(2\^31 - 1 ms, 24\.8 days\) \(default 3600\)$/,
    );
    expect(() => readSettings({ DISAGG_POLL_MAX_SEC: 'Infinity' })).toThrow(/^DISAGG_POLL_MAX_SEC="Infinity": expected a number of seconds > 0/);
  });

  it('GPU_TYPE of a type some config lists is taken, known or not', async () => {
    const { workDir, outputPath } = writeWorkDir({}, 'env-gpu-');
    mkdirSync(path.join(workDir, 'test_configs/nixl/perf'), { recursive: true });
    writeFileSync(path.join(workDir, 'test_configs/nixl/perf/l40s.yaml'), 'metadata:\n  supported_gpus: [L40S]\nbenchmark: {kind: sweep, ranks: 2, backend: shm}\n');
    expect((await checkRunEnvironment({ GPU_TYPE: 'L40S', WORK_DIR: workDir, OUTPUT_PATH: outputPath })).settings.workDir).toBe(workDir);
    await expect(checkRunEnvironment({ GPU_TYPE: 'L4OS', WORK_DIR: workDir, OUTPUT_PATH: outputPath })).rejects.toThrow(/^GPU_TYPE="L4OS": L4OS is no known GPU type/);
  });
});

describe('environment mistakes, end to end', () => {
  const errorLines = (output: string) => output.split('\n').filter((l) => l.startsWith('disagg-bench: error: '));
  const noStack = (output: string) => expect(output).not.toMatch(/Unhandled Error|❯|\n\s+at .*:\d+:\d+/);

  it('SCHEDULER=bogus: one line, exit 2, nothing submitted or written', { timeout: 120_000 }, async () => {
    const { workDir, outputPath } = writeWorkDir({}, 'env-scheduler-');
    const run = await runSuite({ workDir, outputPath, scheduler: 'bogus' as 'local', project: 'nixl' });
    expect(run.exitCode, run.output).toBe(2);
    expect(errorLines(run.output)).toEqual([
      `disagg-bench: error: ${schedulerProblem({ SCHEDULER: 'bogus' })}`,
    ]);
    noStack(run.output);
    expect(existsSync(outputPath)).toBe(false);
  });

  it('several wrong variables: one line each, exit 2', { timeout: 120_000 }, async () => {
    const { workDir, outputPath } = writeWorkDir({}, 'env-several-');
    const run = await runSuite({ workDir, outputPath, scheduler: 'local', project: 'nixl', env: { DISAGG_POLL_MAX_SEC: 'soon', RESUME: 'maybe', DISAGG_PROGRESS: 'fancy' } });
    expect(run.exitCode, run.output).toBe(2);
    expect(errorLines(run.output).map((l) => l.split('=')[0])).toEqual(['disagg-bench: error: RESUME', 'disagg-bench: error: DISAGG_POLL_MAX_SEC', 'disagg-bench: error: DISAGG_PROGRESS']);
    noStack(run.output);
  });

  it('an invalid DISAGG_BATCH_SIZE: one warning line, and the run goes on', { timeout: 120_000 }, async () => {
    const { workDir, outputPath } = writeWorkDir({}, 'env-batch-');
    const run = await runSuite({ workDir, outputPath, scheduler: 'local', project: 'nixl', env: { DISAGG_BATCH_SIZE: 'ten' } });
    expect(run.exitCode, run.output).toBe(0);
    expect(run.output.split('\n').filter((l) => l.includes('DISAGG_BATCH_SIZE'))).toEqual([
      'disagg-bench: warning: DISAGG_BATCH_SIZE="ten" is not a whole number as Python\'s int() reads it (jobs per batch, 0 = all at once); using 5, as the Python framework does',
    ]);
  });
});
