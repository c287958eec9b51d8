// The local scheduler's srun shim (and its scontrol/scancel siblings), run directly with the
// environment a local job gives them: option parsing, task layout, outputs, exit codes, signals.
import { execa, type Options } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { localBinDir } from '../../framework/scheduler/local-env.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'local-srun-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A two-node job of the local scheduler, as srun sees it from the batch script. */
function jobEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: `${localBinDir}${path.delimiter}${process.env.PATH}`,
    HOME: os.homedir(),
    SLURM_JOB_ID: 'L1-test-1',
    SLURM_JOB_NAME: 'shim-test',
    SLURM_JOB_NODELIST: '127.0.0.1,127.0.0.2',
    SLURM_NNODES: '2',
    SLURM_NTASKS: '4',
    DISAGG_LOCAL_NODE_GPUS: '0,1;2,3',
    DISAGG_LOCAL_JOB_DIR: dir,
    ...extra,
  };
}

function srun(args: string[], options: Options & { env?: Record<string, string> } = {}) {
  return execa(path.join(localBinDir, 'srun'), args, { cwd: dir, reject: false, extendEnv: false, ...options, env: options.env ?? jobEnv() });
}

/** Runs a step whose tasks print the given variables; returns one sorted line per task. */
async function layout(args: string[], vars = ['SLURM_PROCID', 'SLURM_LOCALID', 'SLURMD_NODENAME']): Promise<string[]> {
  const shown = vars.map((v) => `$${v}`).join(' ');
  const result = await srun([...args, 'bash', '-c', `echo "${shown}"`]);
  expect(result.stderr).toBe('');
  expect(result.exitCode).toBe(0);
  return String(result.stdout).split('\n').sort();
}

describe('srun shim: options', () => {
  it('reads -n4, -n 4, --ntasks=4 and --ntasks 4 alike', async () => {
    for (const form of [['-n4'], ['-n', '4'], ['--ntasks=4'], ['--ntasks', '4']]) {
      expect(await layout(form, ['SLURM_PROCID'])).toEqual(['0', '1', '2', '3']);
    }
  });

  it('names an unknown option in its error', async () => {
    const result = await srun(['-n', '1', '--frobnicate=3', 'true']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/unknown option '--frobnicate'/);
  });

  it('refuses a missing value, a value on a flag and a non-number count', async () => {
    expect((await srun(['-n'])).stderr).toMatch(/option '-n' needs a value/);
    expect((await srun(['--overlap=yes', 'true'])).stderr).toMatch(/'--overlap' takes no value/);
    expect((await srun(['--ntasks=four', 'true'])).stderr).toMatch(/'four' is not a whole number/);
    expect((await srun(['-n', '1'])).stderr).toMatch(/no command given/);
  });

  it('stops parsing at -- or at the first word that is not an option', async () => {
    const afterDashes = await srun(['-n', '1', '--', 'bash', '-c', 'echo "$*"', 'x', '-l', '--bogus']);
    expect(afterDashes.stdout).toBe('-l --bogus');
    const bare = await srun(['-n1', 'echo', '-l', '--bogus']);
    expect(bare.stdout).toBe('-l --bogus');
  });

  it('accepts the options job scripts pass and ignores container ones with one warning', async () => {
    const result = await srun([
      '--overlap', '--mpi=pmix', '--cpu-bind=none', '--gres=gpu:1', '-J', 'step', '--kill-on-bad-exit=1', '-u',
      '--container-image=nvcr.io/x:1', '--container-mounts=/a:/b', '--container-name', 'c', '-n', '1', 'echo', 'ok',
    ]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('ok');
    const warnings = String(result.stderr).split('\n');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/warning: no containers locally.*--container-image=nvcr.io\/x:1 --container-mounts=\/a:\/b --container-name=c/);
  });

  it('explains that it only works inside a local job', async () => {
    const result = await srun(['-n', '1', 'true'], { env: { PATH: process.env.PATH ?? '' } });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/SLURM_JOB_NODELIST is not set/);
  });
});

describe('srun shim: task layout', () => {
  it('defaults to the whole job and spreads tasks block-wise over the nodes', async () => {
    expect(await layout([])).toEqual(['0 0 127.0.0.1', '1 1 127.0.0.1', '2 0 127.0.0.2', '3 1 127.0.0.2']);
    expect(await layout(['-N', '2', '-n', '5'], ['SLURM_PROCID', 'SLURMD_NODENAME', 'SLURM_TASKS_PER_NODE'])).toEqual([
      '0 127.0.0.1 3,2', '1 127.0.0.1 3,2', '2 127.0.0.1 3,2', '3 127.0.0.2 3,2', '4 127.0.0.2 3,2',
    ]);
  });

  it('sets the step variables and each virtual node its own GPUs', async () => {
    const vars = ['SLURM_PROCID', 'SLURM_NODEID', 'SLURM_STEP_NUM_TASKS', 'SLURM_STEP_NUM_NODES', 'SLURM_NTASKS', 'SLURM_STEP_NODELIST', 'CUDA_VISIBLE_DEVICES'];
    expect(await layout(['--nodes=2', '--ntasks-per-node=1'], vars)).toEqual([
      '0 0 2 2 2 127.0.0.1,127.0.0.2 0,1',
      '1 1 2 2 2 127.0.0.1,127.0.0.2 2,3',
    ]);
  });

  it('runs on the nodes of --nodelist (hostlist syntax) and refuses nodes outside the job', async () => {
    expect(await layout(['-w', '127.0.0.2', '-n', '2'])).toEqual(['0 0 127.0.0.2', '1 1 127.0.0.2']);
    const env = jobEnv({ SLURM_JOB_NODELIST: 'n[1-3]', DISAGG_LOCAL_NODE_GPUS: ';;' });
    const ranged = await srun(['--nodelist=n[2-3]', '-n', '2', 'printenv', 'SLURMD_NODENAME'], { env });
    expect(String(ranged.stdout).split('\n').sort()).toEqual(['n2', 'n3']);
    fs.writeFileSync(path.join(dir, 'hosts'), 'n3\nn1\n');
    const fromFile = await srun(['-w', path.join(dir, 'hosts'), '-n', '2', 'printenv', 'SLURMD_NODENAME'], { env });
    expect(String(fromFile.stdout).split('\n').sort()).toEqual(['n1', 'n3']);
    const outside = await srun(['-w', 'n9', 'true'], { env });
    expect(outside.stderr).toMatch(/node 'n9' of --nodelist is not in this job's allocation \(n\[1-3\]\)/);
  });

  it('refuses more nodes than the job has and shrinks the nodes to the tasks like srun', async () => {
    expect((await srun(['-N', '3', 'true'])).stderr).toMatch(/--nodes=3 but the job has 2 nodes/);
    const shrunk = await srun(['-N', '2', '-n', '1', 'printenv', 'SLURM_STEP_NUM_NODES']);
    expect(shrunk.stdout).toBe('1');
    expect(shrunk.stderr).toMatch(/can't run 1 processes on 2 nodes, setting nnodes to 1/);
  });

  it('numbers steps per job, in order', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(String((await srun(['-n', '1', 'printenv', 'SLURM_STEP_ID'])).stdout));
    expect(ids).toEqual(['0', '1', '2']);
  });
});

describe('srun shim: output, exit codes, signals', () => {
  it('writes per-task files with %t, and one shared file holding every task without it', async () => {
    await srun(['-n', '2', '-o', 'task-%t.log', 'bash', '-c', 'echo "out $SLURM_PROCID"; echo "err $SLURM_PROCID" >&2']);
    expect(fs.readFileSync(path.join(dir, 'task-1.log'), 'utf8').split('\n').sort()).toEqual(['', 'err 1', 'out 1']);
    fs.writeFileSync(path.join(dir, 'shared.log'), 'stale\n');
    await srun(['-n', '3', '--output=shared.log', '--error=errors-%2t.log', 'bash', '-c', 'echo "$SLURM_PROCID"; echo e >&2']);
    expect(fs.readFileSync(path.join(dir, 'shared.log'), 'utf8').split('\n').sort()).toEqual(['', '0', '1', '2']);
    expect(fs.readFileSync(path.join(dir, 'errors-02.log'), 'utf8')).toBe('e\n');
  });

  it('labels lines with the task id under -l', async () => {
    const result = await srun(['-l', '-n', '2', 'bash', '-c', 'echo "hi"; echo "oops" >&2']);
    expect(String(result.stdout).split('\n').sort()).toEqual(['0: hi', '1: hi']);
    expect(String(result.stderr).split('\n').sort()).toEqual(['0: oops', '1: oops']);
  });

  it('exits with the failing task status and names the task', async () => {
    const result = await srun(['-n', '3', 'bash', '-c', '[ "$SLURM_PROCID" = 2 ] && exit 6; exit 0']);
    expect(result.exitCode).toBe(6);
    expect(result.stderr).toBe('srun: error: 127.0.0.2: task 2: Exited with exit code 6');
  });

  it('exits with the highest task status, as srun does, whichever task ends first', async () => {
    // SLURM 22.05's srun on the local cluster: tasks exiting 1 and 75, in either order, make srun exit 75
    // (bench/results/srun-exit-status-2026-11-27.txt).
    for (const [first, later] of [[1, 75], [75, 1]]) {
      const result = await srun(['-n', '2', 'bash', '-c', `[ "$SLURM_PROCID" = 0 ] && exit ${first}; sleep 0.3; exit ${later}`]);
      expect(result.exitCode).toBe(75);
      expect(result.stderr).toContain(`task 0: Exited with exit code ${first}`);
      expect(result.stderr).toContain(`task 1: Exited with exit code ${later}`);
    }
  });

  it('kills the other tasks when one fails under --kill-on-bad-exit, and exits with the killed task\'s status, as srun does', async () => {
    // Task 0 fails once task 1 is surely running. srun exits 143 here (SIGTERM's status beats exit code 3).
    const script = 'if [ "$SLURM_PROCID" = 1 ]; then touch up; sleep 60; fi; until [ -e up ]; do sleep 0.02; done; exit 3';
    const result = await srun(['-K', '-n', '2', 'bash', '-c', script]);
    expect(result.exitCode).toBe(143);
    expect(result.stderr).toMatch(/task 0: Exited with exit code 3/);
    expect(result.stderr).toMatch(/task 1: Terminated by signal SIGTERM/);
  });

  it('forwards SIGTERM to its tasks', async () => {
    const step = srun(['-n', '2', 'bash', '-c', 'trap "echo term $SLURM_PROCID; exit 9" TERM; echo up; sleep 60 & wait']);
    let up = 0;
    step.stdout?.on('data', (chunk: Buffer) => (up += (String(chunk).match(/up/g) ?? []).length));
    while (up < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    step.kill('SIGTERM');
    const result = await step;
    expect(result.exitCode).toBe(9);
    expect(String(result.stdout).split('\n').sort()).toEqual(['term 0', 'term 1', 'up', 'up']);
  });

  it('passes the environment by --export', async () => {
    const env = jobEnv({ KEEP_ME: 'kept' });
    const all = await srun(['--export=ALL,EXTRA=1', '-n1', 'bash', '-c', 'echo "$KEEP_ME $EXTRA $SLURM_JOB_ID"'], { env });
    expect(all.stdout).toBe('kept 1 L1-test-1');
    const none = await srun(['--export=NONE,EXTRA=1', '-n1', 'bash', '-c', 'echo "[$KEEP_ME] [$HOME] $EXTRA $SLURM_JOB_ID"'], { env });
    expect(none.stdout).toBe('[] [] 1 L1-test-1');
    const named = await srun(['--export=KEEP_ME', '-n1', 'bash', '-c', 'echo "$KEEP_ME [$HOME]"'], { env });
    expect(named.stdout).toBe('kept []');
  });

  it('runs tasks in --chdir', async () => {
    fs.mkdirSync(path.join(dir, 'sub'));
    expect((await srun(['--chdir', 'sub', '-n1', 'pwd'])).stdout).toBe(path.join(dir, 'sub'));
  });
});

describe('scontrol and scancel shims', () => {
  const run = (cmd: string, args: string[], env = jobEnv()) =>
    execa(path.join(localBinDir, cmd), args, { reject: false, extendEnv: false, env });

  it('expands hostlists like scontrol show hostnames', async () => {
    expect((await run('scontrol', ['show', 'hostnames'])).stdout).toBe('127.0.0.1\n127.0.0.2');
    expect((await run('scontrol', ['show', 'hostnames', 'gpu[01-03,7],cpu1'])).stdout).toBe('gpu01\ngpu02\ngpu03\ngpu7\ncpu1');
    expect((await run('scontrol', ['show', 'job'])).stderr).toMatch(/only 'show hostnames', 'show hostlist' and 'show node'/);
  });

  it('answers show node with the virtual node\'s own name as its address, and refuses other nodes', async () => {
    // The serving job asks for NodeAddr; a failure would read as a controller that is down.
    const shown = await run('scontrol', ['show', 'node', '-o', '127.0.0.2']);
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^NodeName=127\.0\.0\.2 NodeAddr=127\.0\.0\.2 /);
    const other = await run('scontrol', ['show', 'node', '-o', 'n9']);
    expect(other.exitCode).toBe(1);
    expect(other.stderr).toMatch(/Node n9 not found in this job's nodes/);
  });

  it('refuses to cancel a job other than its own', async () => {
    const result = await run('scancel', ['999']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/job 999 is not this job \(L1-test-1\)/);
  });
});
