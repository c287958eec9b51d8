// `disagg-bench run` keeps each run in OUTPUT_PATH/runs/<run id>/, `latest` naming the last: the
// commands that act on a run afterwards find it there, and a command that is refused changes
// nothing there. On the real local SLURM cluster with STAND-IN serving jobs (the serving engine
// cannot run here): a run is killed with SIGKILL while its job runs; commands refused afterwards
// (a GPU type, a test list) leave `latest` and the run folders as they were; `cleanup` with no
// options ends the killed run's job and `report` rebuilds its report. The job's secret (its
// processes prove it to each other) is in its environment only: no command line, no file of the
// run holds it. Every check reads what the commands recorded or printed; the job waits on a file
// the test never creates.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, expect, it } from 'vitest';
import { clusterEnv, describeCluster } from '../setup/cluster.ts';
import { canMountTmpfs } from '../fixtures/can-mount.ts';
import {
  HOST_VARIABLES, jobOf, readOutputs, recordOf, releaseFile, removeWorkDirs, repoRoot, standinConfig, statesOf, testIdOf, waitUntil, writeWorkDir,
} from '../fixtures/reliability/suite-run.ts';

afterAll(removeWorkDirs);

const bin = path.join(repoRoot, 'bin/disagg-bench.js');

function command(args: string[], workDir: string, env: Record<string, string> = {}, detached = false) {
  const base: Record<string, string | undefined> = { ...process.env };
  for (const name of [...HOST_VARIABLES, 'OUTPUT_PATH', 'SCHEDULER', 'DISAGG_BATCH_SIZE', 'GPU_TYPE', 'DISAGG_TEST_LIST', 'TEST_LIST']) delete base[name];
  return execa('node', [bin, ...args], {
    cwd: path.dirname(workDir), detached,
    env: { ...base, ...clusterEnv(), DISAGG_BIN: 'tsx', WORK_DIR: workDir, GPU_TYPE: 'GB200', NO_COLOR: '1', DISAGG_POLL_MAX_SEC: '1', DISAGG_BATCH_SIZE: '0', ...env },
    extendEnv: false, all: true, reject: false, stdin: 'ignore', timeout: 240_000,
  });
}

async function squeue(ids: string[]): Promise<string[]> {
  const out = await execa('squeue', ['-h', '-o', '%i', '-j', ids.join(',')], { env: clusterEnv(), reject: false });
  return out.stdout.split('\n').map((s) => s.trim()).filter(Boolean);
}

/** DISAGG_JOB_SECRET of a process of SLURM job `id` (read as root from /proc, as no other user can). */
function jobSecretOf(id: string): string | undefined {
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (env.includes(`SLURM_JOB_ID=${id}`)) return env.find((v) => v.startsWith('DISAGG_JOB_SECRET='))?.slice('DISAGG_JOB_SECRET='.length);
    } catch {
      // gone, or not ours to read
    }
  }
  return undefined;
}

/** Processes whose command line holds `text` (what `ps` shows every user). */
function commandLinesHolding(text: string): string[] {
  return readdirSync('/proc').filter((p) => /^\d+$/.test(p)).flatMap((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text) ? [pid] : [];
    } catch {
      return [];
    }
  });
}

/** Files under `folder` holding `text`. */
function filesHolding(folder: string, text: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name)).filter((file) => {
    try {
      return readFileSync(file, 'latin1').includes(text);
    } catch {
      return false;
    }
  });
}

/** What a refused command must leave as it was: where `latest` points and which run folders exist. */
function runsState(outputPath: string): string {
  return JSON.stringify({ latest: readlinkSync(path.join(outputPath, 'latest')), runs: readdirSync(path.join(outputPath, 'runs')).sort() });
}

describeCluster('a run of disagg-bench run, afterwards', () => {
  it('after SIGKILL: refused commands leave `latest` and the run folders alone, cleanup ends the run\'s job, report rebuilds its report', { timeout: 300_000 }, async () => {
    const dir = writeWorkDir({ fast: await standinConfig({ client: 'ok' }), slow: await standinConfig({ client: `wait:${releaseFile('never')}` }) }, 'run-after-');
    const output = dir.outputPath;
    const child = command(['run', 'disagg', '--scheduler', 'slurm', '--output', output], dir.workDir, {}, true);
    const runDir = path.join(output, 'latest');
    await waitUntil('the fast test recorded and the slow job running', () =>
      recordOf(readOutputs(runDir).records, testIdOf('fast')) !== undefined && statesOf(runDir, testIdOf('slow')).includes('RUNNING'), 240_000);
    const slowJob = jobOf(readOutputs(runDir).ledger, testIdOf('slow'))!;
    // The job's secret is in its processes' environment, and nowhere a user could read it: no command line, no file of the run.
    const secret = jobSecretOf(slowJob);
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    expect(commandLinesHolding(secret!)).toEqual([]);
    expect(filesHolding(output, secret!)).toEqual([]);
    process.kill(-child.pid!, 'SIGKILL');
    await child;
    expect(await squeue([slowJob])).toEqual([slowJob]);
    const before = runsState(output);

    // Each refused before anything is made, naming the setting as the user gave it, exit 2.
    const refusals: Array<[string[], Record<string, string>, RegExp]> = [
      [['--gpu-type', 'bogus'], {}, /^disagg-bench run: --gpu-type "bogus": bogus is no known GPU type/m],
      [['--gpu-type', 'h100'], {}, /^disagg-bench run: --gpu-type "h100": .* use --gpu-type H100$/m],
      [['--test-list', 'missing.txt'], {}, /^disagg-bench run: --test-list "missing.txt" \(.*missing\.txt\) cannot be read/m],
      [[], { TEST_LIST: 'testlist/x.txt' }, /TEST_LIST/],
      [['--resume', '--test-list', 'missing.txt'], {}, /^disagg-bench run: --test-list "missing.txt"/m],
    ];
    for (const [args, env, expected] of refusals) {
      const refused = await command(['run', 'disagg', '--scheduler', 'slurm', '--output', output, ...args], dir.workDir, env);
      expect(refused.exitCode, String(refused.all)).toBe(2);
      expect(String(refused.all)).toMatch(expected);
      expect(String(refused.all)).not.toMatch(/^\s+at /m);
      expect(runsState(output), args.join(' ')).toBe(before);
    }

    // No option: the run `latest` names, whose ledger is in its folder.
    const cleanup = await command(['cleanup'], dir.workDir, { OUTPUT_PATH: output });
    expect(cleanup.exitCode, String(cleanup.all)).toBe(0);
    expect(String(cleanup.all)).toContain(`${slowJob} (${testIdOf('slow')})`);
    await waitUntil('the slow job to leave the queue', async () => (await squeue([slowJob])).length === 0, 60_000);
    expect(readOutputs(runDir).ledger.at(-1)).toMatchObject({ test: testIdOf('slow'), state: 'CANCELLED', interrupted: true });
    const again = await command(['cleanup'], dir.workDir, { OUTPUT_PATH: output });
    expect(again.exitCode, String(again.all)).toBe(0);
    expect(String(again.all)).toMatch(/^nothing to cancel: /m);

    // The killed run never wrote its report; `report` with no input rebuilds it in the run's folder.
    const report = path.join(output, readlinkSync(runDir), 'report.html');
    expect(existsSync(report)).toBe(false);
    const rebuilt = await command(['report'], dir.workDir, { OUTPUT_PATH: output });
    expect(rebuilt.exitCode, String(rebuilt.all)).toBe(0);
    expect(String(rebuilt.all)).toContain(`${report}: `);
    expect(existsSync(report)).toBe(true);
  });

  it('cleanup --run names a run by its id; a run id with no ledger is an error naming both places', { timeout: 120_000 }, async () => {
    const dir = writeWorkDir({ a: await standinConfig({ client: 'ok' }) }, 'run-cleanup-');
    const missing = await command(['cleanup', '--run', 'run-nope'], dir.workDir, { OUTPUT_PATH: dir.outputPath });
    expect(missing.exitCode, String(missing.all)).toBe(1);
    expect(String(missing.all)).toContain(path.join(dir.outputPath, 'runs', 'run-nope', 'ledger.jsonl'));
    const ok = await command(['cleanup', '--missing-ok'], dir.workDir, { OUTPUT_PATH: dir.outputPath });
    expect(ok.exitCode, String(ok.all)).toBe(0);
  });
});

describeCluster('disagg-bench run on an OUTPUT_PATH it cannot write', () => {
  it.skipIf(!canMountTmpfs())(`a read-only file system: one line naming OUTPUT_PATH, exit 2, as under Vitest${canMountTmpfs() ? '' : ' (skipped: cannot mount a tmpfs here)'}`, { timeout: 120_000 }, async () => {
    const dir = writeWorkDir({ a: await standinConfig({ client: 'ok' }) }, 'run-rofs-');
    mkdirSync(dir.outputPath, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=64k', 'tmpfs', dir.outputPath]);
    try {
      const result = await command(['run', 'disagg', '--scheduler', 'local', '--output', dir.outputPath], dir.workDir);
      expect(result.exitCode, String(result.all)).toBe(2);
      expect(String(result.all)).toMatch(new RegExp(`^disagg-bench run: --output ${dir.outputPath} cannot be written: EROFS: read-only file system`, 'm'));
      expect(String(result.all)).not.toMatch(/^\s+at /m);
    } finally {
      execFileSync('umount', [dir.outputPath]);
    }
  });
});
