// The cluster project's global setup (tests/setup/global-setup.ts) at the end of a run, tested on
// child runs of a one-test Vitest config that uses it (tests/fixtures/setup/vitest.config.ts):
// a cluster the run started is stopped, one it found up (or DISAGG_KEEP_SLURM=1) stays, and a
// process a test leaves running fails the run, named, and is killed, as does a process of a
// cluster job that outlives the cluster; a setup that fails after starting the cluster stops it. The cluster is a second
// one, with its own folder and ports (faults-cluster.ts): the shared one is never touched.
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { describeCluster } from './cluster.ts';
import { faultsCluster, faultsClusterScriptEnv } from '../fixtures/reliability/faults-cluster.ts';
import { repoRoot } from '../fixtures/reliability/suite-run.ts';
import { markedProcesses } from './leak-check.ts';

const vitestBin = `${repoRoot}/node_modules/vitest/vitest.mjs`;

/**
 * A child `vitest run` of the fixture config, with this environment on top of ours; the
 * DISAGG_KEEP_SLURM of the run that runs this test is not passed on (each case sets its own).
 * The Grid Engine cell stays off in the child: these cases are about SLURM and the leak check, and
 * a cell of two hosts brought up and down per child run cost over a minute each.
 */
async function childRun(env: Record<string, string>) {
  const { DISAGG_KEEP_SLURM: _ours, ...inherited } = process.env;
  const result = await execa('node', [vitestBin, 'run', '--config', 'tests/fixtures/setup/vitest.config.ts'], {
    cwd: repoRoot, reject: false, all: true, stdin: 'ignore', timeout: 600_000, extendEnv: false,
    env: { ...inherited, NO_COLOR: '1', DISAGG_LEAK_GRACE_MS: '2000', DISAGG_NO_GRIDENGINE: '1', ...env },
  });
  return { code: result.exitCode, output: String(result.all) };
}

/** Processes whose command line holds `word`, zombies excluded. */
async function processesWith(word: string): Promise<string[]> {
  const ps = await execa('ps', ['-eo', 'stat=,args=']);
  return ps.stdout.split('\n').filter((l) => l.includes(word) && !l.trim().startsWith('Z'));
}

describe('the leak check at the end of a run', () => {
  it('fails a run whose test left a process running, names the process and kills it', { timeout: 240_000 }, async () => {
    const word = `leak-check-${process.pid}-${Date.now()}`;
    const run = await childRun({ DISAGG_NO_SLURM: '1', DISAGG_FIXTURE_LEAK: word });
    expect(run.code, run.output).toBe(1);
    expect(run.output).toMatch(new RegExp(`leak check: 1 process\\(es\\) started by this test run were still running at its end \\(now killed\\)[^]*pid \\d+: sleep-${word} 600`));
    expect(run.output).toMatch(/1 passed/); // the test itself passed: the check failed the run
    // Where it came from, to find the test that left it: its parent and working folder.
    expect(run.output).toMatch(new RegExp(`sleep-${word} 600\\n {4}\\(parent \\d+.*; in ${repoRoot}\\)`));
    // Killed: gone once the kernel has run its exit (a moment on a loaded machine).
    await expect.poll(() => processesWith(word), { timeout: 10_000, interval: 200 }).toEqual([]);
  });

  it('passes a run that leaves nothing behind', { timeout: 240_000 }, async () => {
    const run = await childRun({ DISAGG_NO_SLURM: '1' });
    expect(run.code, run.output).toBe(0);
    expect(run.output).not.toMatch(/leak check/);
  });

  it('finds no process of a run that has not started any', () => {
    expect(markedProcesses('suite-that-never-ran')).toEqual([]);
  });
});

describeCluster('the cluster at the end of a run (a cluster of its own)', () => {
  afterAll(async () => {
    await faultsCluster('down');
  }, 300_000);

  const isUp = async () => (await faultsCluster('status').then(() => true, () => false));
  const daemons = async () => (await faultsCluster('pids')).split('\n').filter((l) => /^\d+$/.test(l)).sort();

  it('stops the cluster the run started; keeps it with DISAGG_KEEP_SLURM=1; leaves one it found up running', { timeout: 600_000 }, async () => {
    const clusterEnv = await faultsClusterScriptEnv();
    expect(await isUp()).toBe(false);

    const started = await childRun(clusterEnv);
    expect(started.code, started.output).toBe(0);
    expect(started.output).toMatch(/fixture: cluster nodes n1 n2 n3/);
    expect(started.output).toContain('local SLURM cluster stopped (this run started it');
    expect(await isUp()).toBe(false);
    expect(await daemons()).toEqual([]);

    const kept = await childRun({ ...clusterEnv, DISAGG_KEEP_SLURM: '1' });
    expect(kept.code, kept.output).toBe(0);
    expect(kept.output).not.toContain('local SLURM cluster stopped');
    expect(await isUp()).toBe(true);
    const before = await daemons();
    expect(before.length).toBe(5); // munged, slurmctld, 3 x slurmd

    const foundUp = await childRun(clusterEnv);
    expect(foundUp.code, foundUp.output).toBe(0);
    expect(foundUp.output).toMatch(/fixture: cluster nodes n1 n2 n3/);
    expect(foundUp.output).not.toContain('local SLURM cluster stopped');
    expect(await daemons()).toEqual(before); // the same daemons, not restarted
  });

  it('stops the cluster it started when the setup fails after it (Vitest runs no teardown then)', { timeout: 600_000 }, async () => {
    const clusterEnv = await faultsClusterScriptEnv();
    if (await isUp()) await faultsCluster('down');
    // The Grid Engine cell's bring-up refuses a bad setting at once, before it touches any cell; the
    // cluster comes up meanwhile, so the setup fails with the cluster up.
    const run = await childRun({ ...clusterEnv, DISAGG_NO_GRIDENGINE: '', DISAGG_GE_HOSTS: 'x' });
    expect(run.code, run.output).not.toBe(0);
    expect(run.output).toMatch(/could not bring up the local Grid Engine cell \(bash \S+ netns-check: exit code 2\)[\s\S]*DISAGG_GE_HOSTS=x is not 1\.\.9/);
    expect(run.output).not.toMatch(/fixture: cluster nodes/); // no test ran
    expect(await isUp()).toBe(false);
    expect(await daemons()).toEqual([]);
  });

  it('kills a job\'s process that outlived the cluster it stopped, names it and fails the run', { timeout: 600_000 }, async () => {
    const clusterEnv = await faultsClusterScriptEnv();
    if (await isUp()) await faultsCluster('down');
    const word = `orphan-check-${process.pid}-${Date.now()}`;
    const run = await childRun({ ...clusterEnv, DISAGG_FIXTURE_ORPHAN_JOB: word });
    expect(run.code, run.output).toBe(1);
    expect(run.output).toMatch(/1 passed/);
    // The orphan, and maybe its job's own steps where cancelling the job had not ended them yet.
    expect(run.output).toMatch(new RegExp(`leak check: \\d+ process\\(es\\) of this cluster's jobs outlived its daemons \\(killed\\): .*\\d+:orphan-${word} 600`));
    await expect.poll(() => processesWith(`orphan-${word}`), { timeout: 10_000, interval: 200 }).toEqual([]);
    expect(await isUp()).toBe(false);
  });
});
