// Grid Engine, for real: the local cell the cluster project's global setup brings up
// (scripts/gridengine-local.sh). The backend alone (an exit code, a job no queue can run, a
// cancelled job), then runs of the suite on it: a two-node nixl test whose ranks start with
// qrsh -inherit on the cell's two hosts, SIGTERM mid-run leaving no job in qstat, and `cleanup`
// after a SIGKILL ending the jobs left.
// Nothing waits on time: jobs held by a stand-in wait for a file the test creates.
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, expect, inject, it } from 'vitest';
import { GridEngineScheduler } from '../../framework/scheduler/gridengine.ts';
import { JOB_ENDED_FILE } from '../../framework/scheduler/log-folder.ts';
import type { JobRequest, JobStatus } from '../../framework/scheduler/scheduler.ts';
import { describeGridEngine, describeGridEngineHosts, gridEngineEnv } from '../setup/gridengine.ts';
import {
  jobOf, readOutputs, recordOf, releaseFile, removeWorkDirs, repoRoot, runSuite, standinConfig, startSuite, statesOf, testIdOf, waitUntil, writeWorkDir,
} from '../fixtures/reliability/suite-run.ts';

const scratch = mkdtempSync(path.join(tmpdir(), 'gridengine-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
afterAll(removeWorkDirs);

const submitted: string[] = [];
afterAll(async () => {
  if (submitted.length) await execa('qdel', submitted, { env: gridEngineEnv(), reject: false });
});

function job(name: string, body: string, resources: Partial<JobRequest['resources']> = {}): JobRequest {
  const dir = path.join(scratch, name);
  const scriptPath = path.join(scratch, `${name}.sh`);
  writeFileSync(scriptPath, `#!/usr/bin/env bash\n${body}\n`, { mode: 0o755 });
  return { name, scriptPath, logDir: dir, workDir: scratch, resources: { nodes: 1, ntasks: 1, timeLimitSec: 300, ...resources } };
}

async function until(scheduler: GridEngineScheduler, id: string, done: (s: JobStatus) => boolean): Promise<JobStatus> {
  return waitUntil(`job ${id}`, async () => {
    const status = (await scheduler.poll([id])).get(id);
    return status && done(status) ? status : undefined;
  }, 90_000);
}

/** Ids Grid Engine still lists (queued, running or being deleted). */
async function inQstat(ids: string[]): Promise<string[]> {
  const out = await execa('qstat', ['-u', '*'], { env: gridEngineEnv(), reject: false });
  const listed = new Set(out.stdout.split('\n').map((l) => l.trim().split(/\s+/)[0]));
  return ids.filter((id) => listed.has(id));
}

describeGridEngine('the Grid Engine backend on the local cell', () => {
  const scheduler = new GridEngineScheduler({ env: { ...process.env, ...gridEngineEnv() } });

  it('a job ends COMPLETED or FAILED with its exit code, its output where logs() says', { timeout: 120_000 }, async () => {
    const ok = job('ge-ok', 'echo "hello from $JOB_ID"');
    const bad = job('ge-bad', 'echo failing >&2; exit 3');
    const [okId, badId] = [await scheduler.submit(ok), await scheduler.submit(bad)];
    submitted.push(okId, badId);
    expect(await until(scheduler, okId, (s) => s.terminal)).toMatchObject({ state: 'COMPLETED', exitCode: 0 });
    expect(await until(scheduler, badId, (s) => s.terminal)).toMatchObject({ state: 'FAILED', exitCode: 3 });
    // The job's own lines end each file. Before them may stand what this machine's shell start files
    // print: the job's shell read the user's ~/.bashrc here, and on a developer's machine that can be
    // a tool's complaint (pyenv waiting 60 s on a lock a killed job's shell left).
    expect(readFileSync(scheduler.logs(okId, ok).stdout, 'utf8')).toMatch(new RegExp(`(^|\n)hello from ${okId}\n$`));
    expect(readFileSync(scheduler.logs(badId, bad).stderr, 'utf8')).toMatch(/(^|\n)failing\n$/);
  });

  it('a job no queue can ever run is refused at submission, in Grid Engine\'s words', { timeout: 60_000 }, async () => {
    await expect(scheduler.submit(job('ge-huge', 'true', { nodes: 1, ntasks: 999 }))).rejects.toThrow(/qsub of job "ge-huge" failed: exit code 1[\s\S]*no suitable queues/);
  });

  it('a running job cancelled: CANCELLED, and qstat no longer lists it', { timeout: 120_000 }, async () => {
    const id = await scheduler.submit(job('ge-long', 'sleep 600'));
    submitted.push(id);
    await until(scheduler, id, (s) => s.state === 'RUNNING');
    await scheduler.cancel([id]);
    expect(await until(scheduler, id, (s) => s.terminal)).toMatchObject({ state: 'CANCELLED' });
    expect(await inQstat([id])).toEqual([]);
  });
});

const env = { ...gridEngineEnv(), DISAGG_BATCH_SIZE: '0' };

describeGridEngineHosts('a job of two nodes on two Grid Engine hosts', () => {
  it('the two-node nixl config passes with a rank on each host (qrsh -inherit), over libfabric\'s TCP', { timeout: 180_000 }, async () => {
    const hosts = inject('gridEngineHosts');
    const config = readFileSync(path.join(repoRoot, 'test_configs/nixl/perf/sweep_libfabric_tcp_2nodes.yaml'), 'utf8');
    const dir = writeWorkDir({ 'nixl/perf/ct_ge': config }, 'gridengine-nixl-');
    const run = await runSuite({ ...dir, scheduler: 'gridengine', project: 'nixl', env });
    const id = testIdOf('ct_ge', 'nixl');
    const record = recordOf(run.records, id);
    expect(record, run.output).toMatchObject({ verdict: 'passed' });
    const jobId = jobOf(run.ledger, id)!;
    expect(run.ledger.find((e) => e.test === id)).toMatchObject({ scheduler: 'gridengine' });
    // Grid Engine's own account: the job's tasks ran on two hosts (its accounting records, job.json).
    const job = JSON.parse(readFileSync(path.join(record!.logDir!, 'job.json'), 'utf8')) as { status: { nodes: string[] } };
    expect([...job.status.nodes].sort()).toEqual(hosts.slice(0, 2));
    // And the ranks' own: each task of the node-artefacts step names the host it ran on.
    const out = readFileSync(path.join(record!.logDir!, `slurm-${jobId}.out`), 'utf8');
    expect(hosts.slice(0, 2).filter((host) => out.includes(`nixl-tool: ${host}: fi_info-${host}.txt`)), out).toEqual(hosts.slice(0, 2));
  });

  it('a serving config of two nodes passes: its generation server on one host, its context server on the other', { timeout: 180_000 }, async () => {
    const hosts = inject('gridEngineHosts');
    // The shipped CPU config with one "GPU" a node: its two servers need two nodes.
    const shipped = readFileSync(path.join(repoRoot, 'test_configs/disagg/perf/llamacpp-tiny_128-32_ctx1_gen1_cpu.yaml'), 'utf8');
    const config = shipped.replace(/^ {2}gpus_per_node: 2$/m, '  gpus_per_node: 1');
    expect(config).not.toBe(shipped);
    const dir = writeWorkDir({ llamacpp_ge: config }, 'gridengine-serving-');
    const run = await runSuite({ ...dir, scheduler: 'gridengine', env: { ...env, DISAGG_MODEL_CACHE: path.join(tmpdir(), 'disagg-bench-test-models') } });
    const record = recordOf(run.records, testIdOf('llamacpp_ge'));
    expect(record, run.output).toMatchObject({ verdict: 'passed' });
    const listening = (log: string) => /listening on ([^:\s]+):/.exec(readFileSync(path.join(record!.logDir!, log), 'utf8'))?.[1];
    // The job's first host (whichever Grid Engine picked) serves generation, the other context.
    expect([listening('3_output_GEN_0.log'), listening('3_output_CTX_0.log')].sort()).toEqual(hosts.slice(0, 2));
    // Under Grid Engine too the job's script marked its end (what the run's watcher polls on).
    expect(readFileSync(path.join(record!.logDir!, JOB_ENDED_FILE), 'utf8')).toBe('0\n');
  });
});

describeGridEngine('runs on Grid Engine', () => {
  // A config written for SLURM names a partition; on Grid Engine that would be a queue.
  const held = async (client: `wait:${string}` | 'ok') => standinConfig({ client, partition: '' });

  it('SIGTERM mid-run cancels every job: none is left in qstat', { timeout: 180_000 }, async () => {
    const never = releaseFile('never');
    const dir = writeWorkDir({ slow1: await held(`wait:${never}`), slow2: await held(`wait:${never}`) }, 'gridengine-term-');
    const child = startSuite({ ...dir, scheduler: 'gridengine', env, detached: true });
    await waitUntil('both jobs running', () => ['slow1', 'slow2'].every((n) => statesOf(dir.outputPath, testIdOf(n)).includes('RUNNING')), 120_000);
    const ids = ['slow1', 'slow2'].map((n) => jobOf(readOutputs(dir.outputPath).ledger, testIdOf(n))!);
    submitted.push(...ids);
    expect(await inQstat(ids)).toEqual(ids);
    process.kill(child.pid!, 'SIGTERM');
    expect((await child).exitCode).toBe(143);
    await waitUntil('the jobs to leave qstat', async () => (await inQstat(ids)).length === 0, 60_000);
    for (const n of ['slow1', 'slow2']) {
      expect(readOutputs(dir.outputPath).ledger.filter((e) => e.test === testIdOf(n)).at(-1)).toMatchObject({ state: 'CANCELLED', interrupted: true });
    }
  });

  it('after SIGKILL the jobs live on; disagg-bench cleanup ends them', { timeout: 180_000 }, async () => {
    const never = releaseFile('never');
    const dir = writeWorkDir({ left: await held(`wait:${never}`) }, 'gridengine-kill-');
    const child = startSuite({ ...dir, scheduler: 'gridengine', env, detached: true });
    await waitUntil('the job running', () => statesOf(dir.outputPath, testIdOf('left')).includes('RUNNING'), 120_000);
    const id = jobOf(readOutputs(dir.outputPath).ledger, testIdOf('left'))!;
    submitted.push(id);
    process.kill(-child.pid!, 'SIGKILL');
    await child;
    expect(await inQstat([id])).toEqual([id]);
    const cleanup = await execa('node', [path.join(repoRoot, 'bin/disagg-bench.js'), 'cleanup'], {
      env: { ...process.env, ...env, OUTPUT_PATH: dir.outputPath, SCHEDULER: 'gridengine' }, reject: false, all: true,
    });
    expect(cleanup.exitCode, cleanup.all).toBe(0);
    expect(cleanup.all).toContain(`${id} (${testIdOf('left')})`);
    await waitUntil('the job to leave qstat', async () => (await inQstat([id])).length === 0, 60_000);
  });
});
