// SlurmScheduler against the real local cluster (scripts/slurm-local.sh, brought up by the unit
// project's global setup): real sbatch, squeue, sacct -c and scancel, real job scripts.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SchedulerError, type JobRequest, type JobResources, type JobStatus } from '../../framework/scheduler/scheduler.ts';
import { SlurmScheduler, type SlurmSchedulerOptions } from '../../framework/scheduler/slurm.ts';
import { parseSacctStatus, jobcompStatusArgs } from '../../framework/scheduler/slurm-status.ts';
import { clusterEnv, describeCluster } from '../setup/cluster.ts';
import { freePort } from '../../runners/common/free-port.ts';

const clusterNodes = ['n1', 'n2', 'n3', 'n4'];

describeCluster.concurrent('SlurmScheduler on the local cluster', () => {
  let dir: string;
  const submitted: string[] = [];

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slurm-sched-'));
  });
  afterAll(async () => {
    // Whatever a failed test left behind must not hold the cluster.
    await scheduler().cancel(submitted);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function scheduler(options: SlurmSchedulerOptions = {}): SlurmScheduler {
    return new SlurmScheduler({ env: clusterEnv(), retryBaseDelayMs: 100, ...options });
  }

  let scripts = 0;
  function job(body: string, resources: Partial<JobResources> = {}, extra: Partial<JobRequest> = {}): JobRequest {
    const name = `t${++scripts}`;
    const scriptPath = path.join(dir, `${name}.sh`);
    fs.writeFileSync(scriptPath, `#!/bin/bash\n${body}\n`, { mode: 0o755 });
    return {
      name,
      scriptPath,
      logDir: path.join(dir, 'logs', name),
      workDir: dir,
      resources: { nodes: 1, ntasks: 1, timeLimitSec: 300, ...resources },
      ...extra,
    };
  }

  async function submit(s: SlurmScheduler, request: JobRequest): Promise<string> {
    const id = await s.submit(request);
    submitted.push(id);
    return id;
  }

  /** Polls until `done` holds for the job's status (default: terminal). */
  async function waitFor(
    s: SlurmScheduler,
    id: string,
    done: (status: JobStatus) => boolean = (status) => status.terminal,
    limitMs = 60_000,
  ): Promise<JobStatus> {
    const deadline = Date.now() + limitMs;
    for (;;) {
      const status = (await s.poll([id])).get(id);
      if (status && done(status)) return status;
      if (Date.now() > deadline) throw new Error(`job ${id} still ${JSON.stringify(status)} after ${limitMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  // First: it takes a minute or more (SLURM enforces limits about every 30 s); the rest run meanwhile.
  it('ends a job past its time limit as TIMEOUT', { timeout: 240_000 }, async () => {
    const s = scheduler();
    const request = job('echo started; sleep 600', { timeLimitSec: 60 });
    const id = await submit(s, request);
    const status = await waitFor(s, id, undefined, 200_000);
    expect(status).toMatchObject({ id, state: 'TIMEOUT', terminal: true, reason: 'TimeLimit' });
    expect(status.endTime! - status.startTime!).toBeGreaterThanOrEqual(60_000);
    expect(fs.readFileSync(s.logs(id, request).stdout, 'utf8')).toContain('started');
    expect(fs.readFileSync(s.logs(id, request).stderr, 'utf8')).toMatch(new RegExp(`JOB ${id} ON \\S+ CANCELLED AT .* DUE TO TIME LIMIT`));
  });

  it('runs a job to COMPLETED with its output, env and working dir', async () => {
    const s = scheduler();
    const tricky = `spaces, 'quotes', "double" and $HOME; $(false)`;
    const request = job('echo "node=$SLURMD_NODENAME"; echo "value=$TRICKY"; echo "cwd=$(pwd)"; echo to-stderr >&2', {}, {
      env: { TRICKY: tricky },
    });
    const id = await submit(s, request);
    expect(id).toMatch(/^\d+$/);
    const status = await waitFor(s, id);
    expect(status).toMatchObject({ id, state: 'COMPLETED', terminal: true, exitCode: 0 });
    expect(status.signal).toBeUndefined();
    expect(status.nodes).toHaveLength(1);
    expect(clusterNodes).toContain(status.nodes![0]);
    expect(status.startTime).toBeGreaterThan(0);
    expect(status.endTime).toBeGreaterThanOrEqual(status.startTime!);

    const logs = s.logs(id, request);
    expect(logs.stdout).toBe(path.join(request.logDir, `slurm-${id}.out`));
    const out = fs.readFileSync(logs.stdout, 'utf8');
    expect(out).toContain(`node=${status.nodes![0]}`);
    expect(out).toContain(`value=${tricky}`);
    expect(out).toContain(`cwd=${dir}`);
    expect(fs.readFileSync(logs.stderr, 'utf8')).toBe('to-stderr\n');
    expect(s.commandsIssued.submit).toBe(1);
  });

  it('reports a failing job as FAILED with its exit code', async () => {
    const s = scheduler();
    const request = job('echo about to fail >&2; exit 3');
    const id = await submit(s, request);
    const status = await waitFor(s, id);
    expect(status).toMatchObject({ state: 'FAILED', terminal: true, exitCode: 3, reason: 'NonZeroExitCode' });
    expect(fs.readFileSync(s.logs(id, request).stderr, 'utf8')).toContain('about to fail');
  });

  it('cancels running jobs with one scancel; cancelling them again or unknown ids is a no-op', async () => {
    const s = scheduler();
    const ids = [await submit(s, job('sleep 600')), await submit(s, job('sleep 600'))];
    for (const id of ids) await waitFor(s, id, (status) => status.state === 'RUNNING');
    await s.cancel(ids);
    expect(s.commandsIssued.cancel).toBe(1);
    for (const id of ids) {
      expect(await waitFor(s, id)).toMatchObject({ state: 'CANCELLED', terminal: true });
    }
    await s.cancel([...ids, '99999999']);
    await s.cancel(['99999999']);
    await s.cancel([]);
    expect(s.commandsIssued.cancel).toBe(3);
  });

  it('runs a two-node job whose ranks see distinct node names', async () => {
    const s = scheduler();
    const request = job(`srun bash -c 'echo "rank=$SLURM_PROCID node=$SLURMD_NODENAME"'`, { nodes: 2, ntasks: 2, ntasksPerNode: 1 });
    const id = await submit(s, request);
    const status = await waitFor(s, id);
    expect(status.state).toBe('COMPLETED');
    expect(status.nodes).toHaveLength(2);
    const ranks = fs
      .readFileSync(s.logs(id, request).stdout, 'utf8')
      .trim()
      .split('\n')
      .map((line) => /^rank=(\d) node=(\S+)$/.exec(line)!.slice(1))
      .sort();
    expect(ranks.map(([rank]) => rank)).toEqual(['0', '1']);
    const nodes = ranks.map(([, node]) => node);
    expect(new Set(nodes).size).toBe(2);
    expect(nodes.sort()).toEqual([...status.nodes!].sort());
  });

  it('gives a job with --gres=gpu:2 two distinct fake GPUs of its node', async () => {
    const s = scheduler();
    const request = job('echo "gpus=$CUDA_VISIBLE_DEVICES"', { gpusPerNode: 2 });
    const id = await submit(s, request);
    expect((await waitFor(s, id)).state).toBe('COMPLETED');
    // Which two: the node's free ones (0,1 on an idle node; other tests' jobs may hold some).
    const gpus = /^gpus=([0-3]),([0-3])\n$/.exec(fs.readFileSync(s.logs(id, request).stdout, 'utf8'));
    expect(gpus).not.toBeNull();
    expect(gpus![1]).not.toBe(gpus![2]);
  });

  it('polls 12 jobs with exactly one status command per poll', async () => {
    const s = scheduler();
    await s.statusSource(); // the once-only accounting probe
    expect(s.commandsIssued.probe).toBe(1);
    // The jobs run until released: the first poll surely sees them unfinished, however slow this machine is.
    const gate = path.join(dir, 'poll-release');
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await submit(s, job(`until [ -e ${gate} ]; do sleep 0.1; done`)));
    let polls = 0;
    let statuses: Map<string, JobStatus>;
    do {
      const before = s.commandsIssued.status;
      statuses = await s.poll([...ids, ids[0]]); // a repeated id changes nothing
      polls++;
      expect(s.commandsIssued.status - before).toBe(1);
      expect([...statuses.keys()].sort()).toEqual([...ids].sort());
      if (polls === 1) {
        expect([...statuses.values()].some((status) => status.terminal)).toBe(false);
        fs.writeFileSync(gate, '');
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    } while (![...statuses.values()].every((status) => status.terminal));
    expect(polls).toBeGreaterThan(1);
    for (const status of statuses.values()) expect(status).toMatchObject({ state: 'COMPLETED', exitCode: 0 });
    expect(s.commandsIssued.probe).toBe(1);
  });

  it('refuses impossible requests at submission, without retrying them', async () => {
    const s = scheduler();
    const tooManyGpus = s.submit(job('true', { gpusPerNode: 5 }));
    await expect(tooManyGpus).rejects.toBeInstanceOf(SchedulerError);
    await expect(tooManyGpus).rejects.toMatchObject({
      exitCode: 1,
      stderr: expect.stringContaining('Requested node configuration is not available'),
      command: expect.stringMatching(/^sbatch --parsable .*--gres=gpu:5 /),
    });
    await expect(s.submit(job('true', { partition: 'nope' }))).rejects.toThrow(/invalid partition/i);
    expect(s.commandsIssued.submit).toBe(2);
    await expect(s.submit(job('true', { nodes: 0 }))).rejects.toThrow(/nodes must be a positive integer/);
    expect(s.commandsIssued.submit).toBe(2);
  });

  it('flags a queued job that can never start with its reason', async () => {
    const s = scheduler();
    // Partition `small` allows 10 minutes per job; SLURM queues a longer job rather than refusing it.
    const id = await submit(s, job('true', { partition: 'small', timeLimitSec: 20 * 60 }));
    const status = await waitFor(s, id, (st) => st.cannotStart !== undefined, 60_000);
    // SLURM says PartitionConfig at submission and PartitionTimeLimit from its next scheduling pass.
    expect(status).toMatchObject({ state: 'PENDING', terminal: false });
    expect(['PartitionConfig', 'PartitionTimeLimit']).toContain(status.reason);
    expect(status.cannotStart).toBe(status.reason);
    expect(status.startTime).toBeUndefined();
    await s.cancel([id]);
    expect(await waitFor(s, id)).toMatchObject({ state: 'CANCELLED' });
  });

  it('reports nothing for ids it cannot know, without a command for steps and non-ids', async () => {
    const s = scheduler();
    await s.statusSource();
    expect((await s.poll(['99999999'])).size).toBe(0); // squeue exits 1 for a lone unknown id
    const issued = s.commandsIssued.status;
    expect((await s.poll(['123.batch', 'not-an-id', ''])).size).toBe(0);
    expect((await s.poll([])).size).toBe(0);
    expect(s.commandsIssued.status).toBe(issued);
  });

  it('reads a finished job back from the jobcomp file as squeue reported it', async () => {
    const s = scheduler();
    const id = await submit(s, job('exit 4'));
    const live = await waitFor(s, id);
    // The jobcomp record is written as the job ends; wait until it has reached the file.
    let records: ReturnType<typeof parseSacctStatus> = [];
    for (const deadline = Date.now() + 60_000; records.length === 0 && Date.now() < deadline;) {
      const out = await execa('sacct', jobcompStatusArgs([id]), { env: clusterEnv() });
      records = parseSacctStatus(out.stdout);
      if (records.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(records).toHaveLength(1);
    expect(records[0].keys).toContain(id);
    expect(records[0].status).toMatchObject({ state: 'FAILED', terminal: true, exitCode: 4, nodes: live.nodes });
    expect(records[0].status.endTime).toBe(live.endTime);
  });

  it('retries a submission while the controller is unreachable, then succeeds', async () => {
    // A copy of the cluster's config whose controller port has nobody behind it until a plain TCP
    // forwarder to the real controller opens there: a real outage of a few hundred ms.
    const port = await freePort();
    const conf = cloneConf(port);
    const forwarder = net.createServer((client) => {
      const upstream = net.connect(16817, '127.0.0.1');
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    const s = scheduler({ env: { ...clusterEnv(), SLURM_CONF: conf }, retries: 6, retryBaseDelayMs: 150 });
    // The controller "comes back" once the first attempt has failed and the second is due.
    const watch = setInterval(() => {
      if (s.commandsIssued.submit < 2) return;
      clearInterval(watch);
      forwarder.listen(port, '127.0.0.1');
    }, 10);
    try {
      const id = await submit(s, job('echo via-retry'));
      expect(s.commandsIssued.submit).toBeGreaterThanOrEqual(2);
      expect((await waitFor(scheduler(), id)).state).toBe('COMPLETED');
    } finally {
      clearInterval(watch);
      await new Promise((resolve) => forwarder.close(resolve));
    }
  });

  it('gives up on a controller that stays unreachable, with the attempts and the error', async () => {
    const s = scheduler({ env: { ...clusterEnv(), SLURM_CONF: cloneConf(await freePort()) }, retries: 2, retryBaseDelayMs: 10 });
    const error = await s.submit(job('true')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchedulerError);
    expect((error as SchedulerError).message).toMatch(/after 3 attempts/);
    expect((error as SchedulerError).stderr).toMatch(/Unable to contact slurm controller/);
    expect(s.commandsIssued.submit).toBe(3);
    await expect(s.poll(['1'])).rejects.toThrow(/status query failed.*\n.*command: (squeue|sacct) /);
  });

  /** The cluster's slurm.conf with another controller port and a 1 s message timeout. */
  function cloneConf(port: number): string {
    const original = fs.readFileSync(clusterEnv().SLURM_CONF, 'utf8');
    const file = path.join(dir, `slurm-${port}.conf`);
    fs.writeFileSync(file, `${original.replace(/^SlurmctldPort=\d+$/m, `SlurmctldPort=${port}`)}\nMessageTimeout=1\n`);
    return file;
  }
});

