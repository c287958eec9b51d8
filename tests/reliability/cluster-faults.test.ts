// Cluster faults, end to end, on a SLURM cluster of their own (faults-cluster.ts), one after the
// other: a node dies under running jobs, the controller restarts while jobs run, the controller
// is down when the run submits; a node dies while its job starts steps. Each time the suite (a child `vitest run --project disagg`) rides
// through and reports what really happened. The cluster is brought up first and stopped at the end.
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeCluster } from '../setup/cluster.ts';
import { faultsCluster, faultsClusterEnv, faultsSlurm, keepFaultsClusterFolder } from '../fixtures/reliability/faults-cluster.ts';
import {
  jobOf, readOutputs, recordOf, release, releaseFile, runSuite, standinConfig, startSuite, statesOf, testIdOf, waitUntil, writeWorkDir, removeWorkDirs, failedIn,
} from '../fixtures/reliability/suite-run.ts';

afterAll(removeWorkDirs);

/** A job that needs a whole node of this cluster (4 CPUs, 4 GPUs): one per node. */
const wholeNode = { hardware: { gpus_per_node: 4 }, worker_config: { gen: { tensor_parallel_size: 4, enable_attention_dp: false, max_batch_size: 4, max_num_tokens: 64, max_seq_len: 64 } } };
// The child run's limit (and each test's, a minute above it) covers a fault's whole course on a
// loaded machine: SLURM noticing a dead node, the nodes or the controller coming back, a requeue.
const slurm = async (workDir: string, outputPath: string, env: Record<string, string> = {}) =>
  ({ workDir, outputPath, scheduler: 'slurm' as const, env: { ...(await faultsClusterEnv()), ...env }, timeoutMs: 420_000 });

describeCluster('cluster faults, end to end (a cluster of their own)', () => {
  beforeAll(async () => {
    await faultsCluster('up');
  }, 300_000);
  // Vitest reads a hook's parameters: fixtures first (an object pattern), the suite second.
  afterAll(async ({}, suite) => {
    // Whatever a failed test left: nodes back, then the whole cluster stopped (jobs cancelled).
    if (failedIn(suite)) keepFaultsClusterFolder();
    await faultsCluster('up').catch(() => undefined);
    await faultsCluster('down');
  }, 300_000);

  it('a node dies under two jobs: the requeued one is followed to its new end, the other fails NODE_FAIL; a third is unaffected', { timeout: 480_000 }, async () => {
    // The requeued job runs until released: it cannot end before its node dies, however slow the machine.
    const gate = releaseFile('requeued');
    const { workDir, outputPath } = writeWorkDir({
      requeued: await standinConfig({ client: `wait:${gate}`, patch: wholeNode }),
      not_requeued: await standinConfig({ client: 'sleep:600', extraArgs: '--no-requeue', patch: wholeNode }),
      bystander: await standinConfig({ client: 'ok', patch: wholeNode }),
    }, 'node-death-');
    const run = runSuite(await slurm(workDir, outputPath));
    const victims = ['requeued', 'not_requeued'].map((n) => testIdOf(n));
    const jobs = await waitUntil('both victims running', () => {
      const running = victims.every((t) => statesOf(outputPath, t).includes('RUNNING'));
      return running && victims.map((t) => jobOf(readOutputs(outputPath).ledger, t)!);
    }, 120_000);
    const nodes = await Promise.all(jobs.map((job) => faultsSlurm('squeue', ['-h', '-j', job, '-o', '%N'])));
    expect(new Set(nodes).size).toBe(2); // whole-node jobs: one node each
    for (const node of nodes) await faultsCluster('kill-node', node.trim());
    // A power loss leaves nothing of the jobs running (a step slurmd was starting included).
    expect(jobs.flatMap(processesOfJob)).toEqual([]);

    // SLURM notices after SlurmdTimeout: it requeues the one job and fails the other.
    await waitUntil('SLURM to declare the nodes dead', () => statesOf(outputPath, victims[1]).includes('NODE_FAIL'), 120_000);
    await waitUntil('the requeued job to be pending again', () => {
      const states = statesOf(outputPath, victims[0]);
      return states.lastIndexOf('PENDING') > states.indexOf('RUNNING');
    }, 60_000);
    // The nodes come back (as after a reboot); SLURM holds a requeued job ~2 minutes before it may
    // start again: the test lets it go now, as an admin would. It goes to the node that never died:
    // a revived node of this cluster is declared dead again when its slurmd misses the 10 s
    // SlurmdTimeout, which a loaded machine can make it do, and what SLURM does to a job on a
    // flapping node is not what this test is about.
    await faultsCluster('up');
    release(gate);
    await faultsSlurm('scontrol', ['update', `JobId=${jobs[0]}`, `ExcNodeList=${nodes.map((n) => n.trim()).join(',')}`]);
    await faultsSlurm('scontrol', ['update', `JobId=${jobs[0]}`, 'StartTime=now']);

    const { records, output } = await run;
    expect(recordOf(records, testIdOf('bystander')), output).toMatchObject({ verdict: 'passed', schedulerState: 'COMPLETED' });
    // On a mismatch, say why the record failed and what the run printed (a loaded run once failed it here).
    expect(recordOf(records, victims[0]), `${JSON.stringify(recordOf(records, victims[0])?.failures)}\n${output}`).toMatchObject({ verdict: 'passed', schedulerState: 'COMPLETED', jobId: jobs[0] });
    expect(statesOf(outputPath, victims[0])).toEqual(expect.arrayContaining(['RUNNING', 'PENDING', 'COMPLETED']));
    const failed = recordOf(records, victims[1])!;
    expect(failed).toMatchObject({ verdict: 'failed', schedulerState: 'NODE_FAIL' });
    expect(failed.failures.join('\n')).toMatch(new RegExp(`job ${jobs[1]} ended NODE_FAIL .*on ${nodes[1].trim()}[\\s\\S]*reason: NodeDown`));
    // The node really died: no process of the failed job survived it.
    expect(processesOfJob(jobs[1])).toEqual([]);
  });

  it('a job waiting for a node that is briefly unavailable still runs; one that breaks its partition\'s limit fails at once', { timeout: 480_000 }, async () => {
    const { workDir, outputPath } = writeWorkDir({
      // Partition `small` allows 10 minutes; SLURM queues the job with reason PartitionTimeLimit.
      too_long: await standinConfig({ client: 'ok', partition: 'small', jobTime: '00:20:00' }),
      waits_for_n3: await standinConfig({ client: 'ok', extraArgs: '--nodelist=n3' }),
    }, 'never-start-');
    await faultsSlurm('scontrol', ['update', 'NodeName=n3', 'State=DRAIN', 'Reason=reliability test']);
    try {
      const run = runSuite(await slurm(workDir, outputPath));
      await waitUntil('the pinned job to wait with ReqNodeNotAvail', () =>
        readOutputs(outputPath).ledger.some((e) => e.test === testIdOf('waits_for_n3') && /^ReqNodeNotAvail/.test(e.reason ?? '')), 60_000);
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      await faultsSlurm('scontrol', ['update', 'NodeName=n3', 'State=RESUME']);
      const { records, output } = await run;
      expect(recordOf(records, testIdOf('waits_for_n3')), output).toMatchObject({ verdict: 'passed', schedulerState: 'COMPLETED' });
      const refused = recordOf(records, testIdOf('too_long'))!;
      expect(refused).toMatchObject({ verdict: 'failed', schedulerState: 'CANCELLED' });
      expect(refused.failures.join('\n')).toMatch(/reason: the job can never start: (PartitionTimeLimit|PartitionConfig); cancelled/);
    } finally {
      await faultsSlurm('scontrol', ['update', 'NodeName=n3', 'State=RESUME']).catch(() => undefined);
    }
  });

  it('the controller is stopped while jobs run and started again once a poll has failed: polling rides through, results are collected', { timeout: 480_000 }, async () => {
    // The jobs run until released, so they are still running whenever the controller comes back.
    const gate = releaseFile('ctld-restart');
    const { workDir, outputPath } = writeWorkDir({
      first: await standinConfig({ client: `wait:${gate}` }),
      second: await standinConfig({ client: `wait:${gate}` }),
    }, 'ctld-restart-');
    const child = startSuite(await slurm(workDir, outputPath, { DISAGG_POLL_MAX_SEC: '2' }));
    let output = '';
    child.all?.on('data', (chunk: Buffer) => (output += String(chunk)));
    const failedPoll = /poll of slurm failed \(1 in a row, tolerated\): squeue status query failed[\s\S]*Unable to contact slurm controller/;
    try {
      await waitUntil('both jobs running', () => ['first', 'second'].every((n) => statesOf(outputPath, testIdOf(n)).includes('RUNNING')), 120_000);
      await faultsCluster('stop-controller');
      // Down until the run has seen a poll fail (a SLURM client retries its connection ~10 s first).
      await waitUntil('a failed poll', () => failedPoll.test(output), 120_000);
    } finally {
      await faultsCluster('up');
      release(gate);
    }
    await child;
    const { records } = readOutputs(outputPath);
    for (const name of ['first', 'second']) {
      expect(recordOf(records, testIdOf(name)), output).toMatchObject({ verdict: 'passed', schedulerState: 'COMPLETED' });
    }
  });

  it('the controller is down at submission: sbatch is retried until it is back, and the test passes', { timeout: 480_000 }, async () => {
    const { workDir, outputPath } = writeWorkDir({ late: await standinConfig({ client: 'ok' }) }, 'sbatch-retry-');
    await faultsCluster('stop-controller');
    const child = startSuite(await slurm(workDir, outputPath));
    try {
      // Two sbatch processes for the job, one after the other: the first failed, the second is the retry.
      const seen = new Set<number>();
      await waitUntil('a second sbatch attempt', () => {
        for (const pid of sbatchPidsFor(testIdOf('late'))) seen.add(pid);
        return seen.size >= 2;
      }, 90_000);
    } finally {
      await faultsCluster('up');
    }
    const result = await child;
    const { records, ledger } = readOutputs(outputPath);
    expect(recordOf(records, testIdOf('late')), String(result.all)).toMatchObject({ verdict: 'passed', schedulerState: 'COMPLETED' });
    expect(ledger.filter((e) => e.state === 'SUBMITTED')).toHaveLength(1);
  });

  it('a node dies while its job is starting steps: nothing of the job runs on (kill-node\'s own check)', { timeout: 480_000 }, async () => {
    // A step slurmd was launching as it died once ran on as an orphan (a stand-in router that CI
    // found alive at the end of a run): one look at the node's processes cannot see it.
    const job = (await faultsSlurm('sbatch', ['--parsable', '-w', 'n3', '-n1', '--no-requeue', '--output', '/dev/null',
      '--wrap', 'for i in $(seq 400); do srun -n1 --overlap sleep 600 & sleep 0.02; done; wait'])).trim();
    await waitUntil('the job to be starting steps', () => stepdsOfJob(job).length >= 10, 90_000);
    await faultsCluster('kill-node', 'n3');
    expect(processesOfJob(job)).toEqual([]);
    expect(stepdsOfJob(job)).toEqual([]);
  });
});

/** Pids of live processes whose /proc/<pid>/<file> (NUL-separated fields) passes `test`. */
function pidsWhere(file: 'cmdline' | 'environ', test: (fields: string[]) => boolean): number[] {
  return readdirSync('/proc').filter((p) => /^\d+$/.test(p)).flatMap((pid) => {
    try {
      return test(readFileSync(`/proc/${pid}/${file}`, 'utf8').split('\0')) ? [Number(pid)] : [];
    } catch {
      return [];
    }
  });
}

/** Pids of the job's slurmstepd processes (one per step and the batch script's). */
const stepdsOfJob = (job: string) => pidsWhere('cmdline', (argv) => argv[0].startsWith(`slurmstepd: [${job}.`));

/** Pids of running `sbatch` commands submitting the job named `name`. */
const sbatchPidsFor = (name: string) => pidsWhere('cmdline', (argv) => argv[0].endsWith('sbatch') && argv.includes(`--job-name=${name}`));

/** Pids of processes that carry SLURM_JOB_ID=<job> in their environment. */
const processesOfJob = (job: string) => pidsWhere('environ', (env) => env.includes(`SLURM_JOB_ID=${job}`));
