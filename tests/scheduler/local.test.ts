// The local scheduler with real bash jobs, real process groups and real files.
import { execa } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalScheduler, type LocalSchedulerOptions } from '../../framework/scheduler/local.ts';
import { SchedulerError, type JobRequest, type JobResources, type JobStatus } from '../../framework/scheduler/scheduler.ts';

const localTs = fileURLToPath(new URL('../../framework/scheduler/local.ts', import.meta.url));
let dir: string;
let schedulers: LocalScheduler[];

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'local-sched-'));
  schedulers = [];
});
afterEach(async () => {
  await Promise.all(schedulers.map((s) => s.close()));
  fs.rmSync(dir, { recursive: true, force: true });
});

function scheduler(options: LocalSchedulerOptions = {}): LocalScheduler {
  const s = new LocalScheduler({ cpus: 2, gpus: 0, stateDir: path.join(dir, 'state'), killGraceSec: 0.5, ...options });
  schedulers.push(s);
  return s;
}

let scripts = 0;
function job(body: string, resources: Partial<JobResources> = {}, extra: Partial<JobRequest> = {}): JobRequest {
  const scriptPath = path.join(dir, `job-${++scripts}.sh`);
  fs.writeFileSync(scriptPath, `#!/bin/bash\n${body}\n`, { mode: 0o755 });
  return {
    name: `job-${scripts}`,
    scriptPath,
    logDir: path.join(dir, 'logs'),
    workDir: dir,
    resources: { nodes: 1, ntasks: 1, timeLimitSec: 60, ...resources },
    ...extra,
  };
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, limitMs = 20_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function status(s: LocalScheduler, id: string): Promise<JobStatus> {
  const found = (await s.poll([id])).get(id);
  if (!found) throw new Error(`job ${id} unknown`);
  return found;
}

async function finished(s: LocalScheduler, id: string): Promise<JobStatus> {
  return until(`job ${id} to end`, async () => {
    const st = await status(s, id);
    return st.terminal ? st : undefined;
  });
}

async function running(s: LocalScheduler, id: string): Promise<JobStatus> {
  return until(`job ${id} to run`, async () => {
    const st = await status(s, id);
    return st.state === 'RUNNING' ? st : undefined;
  });
}

/** Live (non-zombie) processes whose command line contains the marker. */
function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const state = fs.readFileSync(`/proc/${entry}/stat`, 'utf8').replace(/^.*\) /, '')[0];
      if (cmdline.includes(marker) && state !== 'Z') pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/** The process exists and is not a zombie. */
function alive(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '')[0] !== 'Z';
  } catch {
    return false;
  }
}

const gone = (marker: string) => until(`no process with ${marker}`, () => (processesWith(marker).length === 0 ? true : undefined));
const read = (file: string) => fs.readFileSync(file, 'utf8');
const marker = (name: string) => `${name}-${process.pid}-${Date.now()}`;

describe('LocalScheduler', () => {
  it('runs a job to COMPLETED with a SLURM-like environment and its output in the log folder', async () => {
    const s = scheduler({ nodeName: 'laptop' });
    const request = job(
      'echo "$SLURM_JOB_ID|$SLURM_JOBID|$SLURM_JOB_NAME|$SLURM_JOB_NODELIST|$SLURM_NNODES|$SLURM_NTASKS|$SLURM_JOB_PARTITION|$SLURM_SUBMIT_DIR|$PWD|$EXTRA"\n' +
        'command -v srun\necho to-stderr >&2',
      { ntasks: 2 },
      { env: { EXTRA: 'from-request' } },
    );
    const id = await s.submit(request);
    expect(id).toMatch(new RegExp(`^L${process.pid}-[0-9a-z]+-\\d+$`));
    const end = await finished(s, id);
    expect(end).toMatchObject({ id, state: 'COMPLETED', terminal: true, exitCode: 0, nodes: ['laptop'] });
    expect(end.endTime!).toBeGreaterThanOrEqual(end.startTime!);
    const logs = s.logs(id, request);
    expect(logs.stdout).toBe(path.join(dir, 'logs', `slurm-${id}.out`));
    const [env, srun] = read(logs.stdout).trim().split('\n');
    expect(env).toBe(`${id}|${id}|${request.name}|laptop|1|2|local|${dir}|${dir}|from-request`);
    expect(srun).toBe(path.resolve(localTs, '../local-bin/srun'));
    expect(read(logs.stderr)).toBe('to-stderr\n');
    const record = JSON.parse(read(path.join(s.stateDir, id, 'local-job.json')));
    expect(record.status.state).toBe('COMPLETED');
  });

  it('gives ids unique across schedulers of one process', async () => {
    const a = scheduler();
    const b = scheduler();
    const ids = await Promise.all([a.submit(job('true')), b.submit(job('true')), a.submit(job('true'))]);
    expect(new Set(ids).size).toBe(3);
  });

  it('reports a non-zero exit as FAILED with the exit code, a signal as FAILED with the signal', async () => {
    const s = scheduler();
    const exit3 = await s.submit(job('exit 3'));
    const killed = await s.submit(job('kill -KILL $$'));
    expect(await finished(s, exit3)).toMatchObject({ state: 'FAILED', exitCode: 3, reason: 'NonZeroExitCode' });
    expect(await finished(s, killed)).toMatchObject({ state: 'FAILED', signal: 9 });
  });

  it('ends a job past its time limit as TIMEOUT and leaves none of its processes', async () => {
    const s = scheduler({ nodeName: 'n0' });
    const mark = marker('timeout');
    const pids = path.join(dir, 'timeout.pids');
    // One child ignores SIGTERM, so only the SIGKILL after the grace ends it. The job records its
    // children's pids: the check below reads them instead of hoping to see them in time.
    const request = job(
      `bash -c 'trap "" TERM; sleep 300; : ${mark}' &\necho $! >> ${pids}\nbash -c 'sleep 300; : ${mark}' &\necho $! >> ${pids}\nwait`,
      { timeLimitSec: 1.5 },
    );
    const id = await s.submit(request);
    const end = await finished(s, id);
    expect(end).toMatchObject({ state: 'TIMEOUT', terminal: true, reason: 'TimeLimit' });
    expect(read(s.logs(id, request).stderr)).toMatch(
      new RegExp(`\\*\\*\\* JOB ${id} ON n0 CANCELLED AT \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d DUE TO TIME LIMIT \\*\\*\\*`),
    );
    const started = fs.existsSync(pids) ? read(pids).trim().split('\n').map(Number) : [];
    await until('the job\'s children to end', () => (started.every((pid) => !alive(pid)) ? true : undefined));
    await gone(mark);
  });

  it('cancels a running job (CANCELLED, processes gone) and a pending one (never starts)', async () => {
    const s = scheduler({ cpus: 1 });
    const mark = marker('cancel');
    const runningRequest = job(`bash -c 'sleep 300; : ${mark}'`);
    const first = await s.submit(runningRequest);
    const waiting = job('echo should-not-run');
    const second = await s.submit(waiting);
    await until('the job process', () => (processesWith(mark).length === 1 ? true : undefined));
    expect(await status(s, second)).toMatchObject({ state: 'PENDING', reason: 'Resources', terminal: false });
    await s.cancel([second, first, 'no-such-job']);
    expect(await status(s, first)).toMatchObject({ state: 'CANCELLED', terminal: true });
    expect(await status(s, second)).toMatchObject({ state: 'CANCELLED', terminal: true, startTime: undefined });
    expect(read(s.logs(first, runningRequest).stderr)).toMatch(new RegExp(`\\*\\*\\* JOB ${first} ON .+ CANCELLED AT \\S+ \\*\\*\\*`));
    expect(fs.existsSync(s.logs(second, waiting).stdout)).toBe(false);
    await gone(mark);
  });

  it('kills what the batch script left running when it exits, as SLURM does', async () => {
    const s = scheduler();
    const mark = marker('leftover');
    const id = await s.submit(job(`bash -c 'sleep 300; : ${mark}' &\necho started`));
    expect(await finished(s, id)).toMatchObject({ state: 'COMPLETED' });
    await gone(mark);
  });

  it('never runs more jobs than the CPUs allow', async () => {
    const s = scheduler({ cpus: 2 });
    const spans = path.join(dir, 'spans');
    fs.mkdirSync(spans);
    // The jobs hold their CPU until the test releases them, so the states seen below cannot
    // depend on how fast the machine is.
    const gate = path.join(dir, 'cpu-release');
    const body = `date +%s%N > ${spans}/$SLURM_JOB_ID.start\nuntil [ -e ${gate} ]; do sleep 0.05; done\ndate +%s%N > ${spans}/$SLURM_JOB_ID.end`;
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await s.submit(job(body)));
    const states = await s.poll(ids);
    expect(ids.map((id) => states.get(id)?.state)).toEqual(['RUNNING', 'RUNNING', 'PENDING', 'PENDING']);
    // Released once both running jobs have started (recorded their start): they surely overlap.
    // (The file exists as soon as bash opens it; the time is in it once `date` has written it.)
    const started = (id: string) => fs.existsSync(`${spans}/${id}.start`) && fs.statSync(`${spans}/${id}.start`).size > 0;
    await until('the two running jobs to start', () => (ids.slice(0, 2).every(started) ? true : undefined));
    fs.writeFileSync(gate, '');
    for (const id of ids) expect(await finished(s, id)).toMatchObject({ state: 'COMPLETED' });
    // Largest overlap of the spans the jobs measured themselves.
    const events = ids.flatMap((id) => [
      { at: BigInt(read(`${spans}/${id}.start`).trim()), delta: 1 },
      { at: BigInt(read(`${spans}/${id}.end`).trim()), delta: -1 },
    ]);
    events.sort((a, b) => (a.at === b.at ? a.delta - b.delta : a.at < b.at ? -1 : 1));
    let now = 0;
    let most = 0;
    for (const e of events) most = Math.max(most, (now += e.delta));
    expect(most, JSON.stringify(events.map((e) => [String(e.at), e.delta]))).toBe(2);
  });

  it('caps a job asking for more CPUs than the host has, instead of queueing it forever', async () => {
    const s = scheduler({ cpus: 2 });
    const id = await s.submit(job('true', { ntasks: 8, cpusPerTask: 2 }));
    expect(await finished(s, id)).toMatchObject({ state: 'COMPLETED' });
  });

  it('gives concurrent jobs distinct GPUs and queues a job until GPUs are free', async () => {
    const s = scheduler({ cpus: 8, gpus: ['GPU-a', 'GPU-b', 'GPU-c'] });
    const out = (id: string, r: JobRequest) => read(s.logs(id, r).stdout).trim();
    const requests = [0, 1, 2].map(() =>
      job('echo "$CUDA_VISIBLE_DEVICES"\nwhile [ ! -e release ]; do sleep 0.05; done', { gpusPerNode: 1 }),
    );
    const cpuOnly = job('echo "[$CUDA_VISIBLE_DEVICES]"');
    const two = job('echo "$CUDA_VISIBLE_DEVICES"', { gpusPerNode: 2 });
    const ids: string[] = [];
    for (const r of requests) ids.push(await s.submit(r));
    const twoId = await s.submit(two);
    const cpuId = await s.submit(cpuOnly);
    for (const id of ids) await running(s, id);
    expect(await status(s, twoId)).toMatchObject({ state: 'PENDING', reason: 'Resources' });
    expect(await finished(s, cpuId)).toMatchObject({ state: 'COMPLETED' });
    expect(out(cpuId, cpuOnly)).toBe('[]');
    await until('the GPU jobs to print', () => (ids.every((id, i) => out(id, requests[i]) !== '') ? true : undefined));
    expect(ids.map((id, i) => out(id, requests[i])).sort()).toEqual(['GPU-a', 'GPU-b', 'GPU-c']);
    fs.writeFileSync(path.join(dir, 'release'), '');
    expect(await finished(s, twoId)).toMatchObject({ state: 'COMPLETED' });
    expect(out(twoId, two).split(',')).toHaveLength(2);
  });

  it('runs srun -N 2 -n 4 as 4 ranks over 2 distinct virtual nodes, each node with its own GPU', async () => {
    const s = scheduler({ cpus: 4, gpus: 2 });
    const request = job(
      'echo "nodes $SLURM_JOB_NODELIST"\nsrun -N 2 -n 4 bash -c \'echo "rank $SLURM_PROCID $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES"\'',
      { nodes: 2, ntasks: 4, gpusPerNode: 1 },
    );
    const id = await s.submit(request);
    const end = await finished(s, id);
    expect(end).toMatchObject({ state: 'COMPLETED', nodes: ['127.0.0.1', '127.0.0.2'] });
    const lines = read(s.logs(id, request).stdout).trim().split('\n');
    expect(lines[0]).toBe('nodes 127.0.0.1,127.0.0.2');
    expect(lines.slice(1).sort()).toEqual(['rank 0 127.0.0.1 0', 'rank 1 127.0.0.1 0', 'rank 2 127.0.0.2 1', 'rank 3 127.0.0.2 1']);
  });

  it('propagates the exit code of a failing srun task and says which task failed', async () => {
    const s = scheduler();
    const request = job('srun -n 2 bash -c \'[ "$SLURM_PROCID" = 1 ] && exit 4; exit 0\'\nexit $?');
    const id = await s.submit(request);
    expect(await finished(s, id)).toMatchObject({ state: 'FAILED', exitCode: 4 });
    expect(read(s.logs(id, request).stderr)).toMatch(/srun: error: .+: task 1: Exited with exit code 4/);
  });

  it('runs background srun steps with distinct step ids', async () => {
    const s = scheduler();
    const request = job(
      'srun -n 1 bash -c \'sleep 0.2; echo "a $SLURM_STEP_ID"\' &\nsrun -n 1 bash -c \'echo "b $SLURM_STEP_ID"\' &\nwait\necho done',
    );
    const id = await s.submit(request);
    expect(await finished(s, id)).toMatchObject({ state: 'COMPLETED' });
    const lines = read(s.logs(id, request).stdout).trim().split('\n');
    expect(lines.at(-1)).toBe('done');
    const steps = lines.slice(0, 2).map((l) => l.split(' ')[1]);
    expect(steps.sort()).toEqual(['0', '1']);
  });

  it('lets a job cancel itself with scancel and reports CANCELLED', async () => {
    const s = scheduler();
    // Far longer than scancel can take: 'after' is printed only if the cancellation did not work.
    const request = job('echo before\nscancel "$SLURM_JOB_ID"\nsleep 60\necho after');
    const id = await s.submit(request);
    expect(await finished(s, id)).toMatchObject({ state: 'CANCELLED' });
    expect(read(s.logs(id, request).stdout)).toBe('before\n');
  });

  it('close() ends running and pending jobs, kills their processes and refuses new jobs', async () => {
    const s = scheduler({ cpus: 1 });
    const mark = marker('close');
    const first = await s.submit(job(`bash -c 'sleep 300; : ${mark}'`));
    const second = await s.submit(job('true'));
    await until('the job process', () => (processesWith(mark).length === 1 ? true : undefined));
    await s.close();
    const states = await s.poll([first, second]);
    expect(states.get(first)).toMatchObject({ state: 'CANCELLED', reason: 'local scheduler closed' });
    expect(states.get(second)).toMatchObject({ state: 'CANCELLED' });
    await gone(mark);
    await expect(s.submit(job('true'))).rejects.toBeInstanceOf(SchedulerError);
  });

  it('answers poll from memory, leaving out ids it never issued', async () => {
    const s = scheduler();
    const id = await s.submit(job('true'));
    const states = await s.poll([id, 'L1-x-1', '12345']);
    expect([...states.keys()]).toEqual([id]);
  });

  it('refuses a job whose script or work dir does not exist, saying which', async () => {
    const s = scheduler();
    const request = job('true');
    await expect(s.submit({ ...request, scriptPath: path.join(dir, 'missing.sh') })).rejects.toThrow(/missing\.sh/);
    await expect(s.submit({ ...request, workDir: path.join(dir, 'nowhere') })).rejects.toThrow(SchedulerError);
    await expect(s.submit(job('true', { nodes: 0 }))).rejects.toThrow(/resources\.nodes/);
  });

  // The scheduler runs in a child process here, so that process can die under it.
  for (const death of ['process.exit', 'SIGKILL'] as const) {
    it(`leaves no job behind when the scheduler's process ends by ${death}`, async () => {
      const mark = marker(`orphan-${death === 'SIGKILL' ? 'kill' : 'exit'}`);
      const script = job(`bash -c 'sleep 300; : ${mark}'`);
      const main = path.join(dir, 'main.mts');
      fs.writeFileSync(
        main,
        `import { LocalScheduler } from ${JSON.stringify(localTs)};\n` +
          `const s = new LocalScheduler({ stateDir: ${JSON.stringify(path.join(dir, 'state'))} });\n` +
          `await s.submit(${JSON.stringify(script)});\n` +
          `console.log('submitted');\n` +
          (death === 'process.exit' ? `process.stdin.once('data', () => process.exit(0));\n` : `setInterval(() => {}, 1000);\n`),
      );
      const child = execa('node', ['--import', 'tsx', main], { cwd: path.dirname(localTs), reject: false, stdin: 'pipe' });
      let printed = '';
      child.stdout?.on('data', (chunk: Buffer) => (printed += String(chunk)));
      // The job's process appears inside submit(), before it returns and 'submitted' is printed: wait
      // for both (a loaded run killed the child between the two), as long as a loaded machine takes
      // to start Node with tsx.
      await until('the job process and submit() returned', () => (processesWith(mark).length === 1 && printed.includes('submitted') ? true : undefined), 90_000);
      if (death === 'SIGKILL') child.kill('SIGKILL');
      else child.stdin?.write('go\n');
      const result = await child;
      expect(result.stdout).toBe('submitted');
      await gone(mark);
    });
  }
});
