// Vitest globalSetup of the cluster project. Before anything starts, it marks the run's processes
// (leak-check.ts). It brings up the real local SLURM cluster (scripts/slurm-local.sh up) and hands
// its SLURM_CONF to the tests, and, beside it, the local Grid Engine cell (scripts/gridengine-local.sh
// up; DISAGG_NO_GRIDENGINE=1 leaves it off): two execution hosts in namespaces of their own where
// this kernel allows them, else one (and the reason, for the tests that need two). At the end it stops each if it started it (not when it
// found it up, nor with DISAGG_KEEP_SLURM=1 / DISAGG_KEEP_GRIDENGINE=1), then fails the run if any
// process the run started is still alive (naming and killing each). A setup that fails stops what
// it started before it throws: Vitest runs no teardown after a failed setup.
import { execa } from 'execa';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { collectLeaks, describeLeaks, markSuiteProcesses, outlivedWarning } from './leak-check.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The local cluster's slurm.conf; '' when DISAGG_NO_SLURM=1. */
    slurmConf: string;
    /** The local Grid Engine cell is up; false with DISAGG_NO_GRIDENGINE=1. */
    gridEngine: boolean;
    /** Its execution hosts (none when it is off). */
    gridEngineHosts: string[];
    /** Why it has one host only ('' when it has several, or is off). */
    gridEngineOneHostWhy: string;
  }
}

const script = fileURLToPath(new URL('../../scripts/slurm-local.sh', import.meta.url));

const slurmLocal = (verb: string, timeoutMs = 600_000) =>
  execa('bash', [script, verb], { reject: false, stdin: 'ignore', all: true, timeout: timeoutMs });

const gridEngineScript = fileURLToPath(new URL('../../scripts/gridengine-local.sh', import.meta.url));
/** The cell's size for every verb: the script's default (two hosts), or one where namespaces cannot be made. */
const gridEngineSize: Record<string, string> = {};
const gridEngineLocal = (verb: string, timeoutMs = 600_000) =>
  execa('bash', [gridEngineScript, verb], { reject: false, stdin: 'ignore', all: true, timeout: timeoutMs, env: gridEngineSize });

type ScriptRun = Awaited<ReturnType<typeof gridEngineLocal>>;

/** The error of a bring-up script's verb that failed: its outcome, the tail of its output, what to do. */
function bringUpError(what: string, command: string, run: ScriptRun, skip: string): Error {
  const tail = String(run.all ?? '').trim().split('\n').slice(-40).join('\n');
  return new Error(`could not bring up ${what} (${command}: ${run.timedOut ? 'timed out' : `exit code ${run.exitCode}`}).\n${tail}\nFix the cause above, or set ${skip}.`);
}
const gridEngineError = (verb: string, run: ScriptRun) =>
  bringUpError('the local Grid Engine cell', `bash ${gridEngineScript} ${verb}`, run, 'DISAGG_NO_GRIDENGINE=1 to skip the tests that need it');

/** Brings the Grid Engine cell up; says whether this run started it, its hosts, and why it has one only. */
async function bringUpGridEngine(): Promise<{ startedHere: boolean; hosts: string[]; oneHostWhy: string }> {
  const check = await gridEngineLocal('netns-check', 60_000);
  // exit 3: no namespaces here (one host will do); any other failure is the script's (a bad setting)
  if (check.exitCode !== 0 && check.exitCode !== 3) throw gridEngineError('netns-check', check);
  const oneHostWhy = check.exitCode === 0 ? '' : `the cell has one host: network namespaces are not available here (${String(check.stdout ?? '').trim()})`;
  if (oneHostWhy) gridEngineSize.DISAGG_GE_HOSTS = '1';
  const wasUp = (await gridEngineLocal('status', 60_000)).exitCode === 0;
  const up = await gridEngineLocal('up');
  if (up.failed) {
    // a cell this run began to start (its qmaster up, its queue refused) is not left running
    if (!wasUp) await gridEngineLocal('down', 180_000);
    throw gridEngineError('up', up);
  }
  const hosts = String((await gridEngineLocal('hosts', 60_000)).stdout ?? '').split('\n').map((l) => l.trim()).filter(Boolean);
  return { startedHere: !wasUp, hosts, oneHostWhy };
}

/** Brings the cluster up; says whether this run started it (false: it was already up). */
async function bringUpCluster(): Promise<{ startedHere: boolean; slurmConf: string }> {
  const wasUp = (await slurmLocal('status', 60_000)).exitCode === 0;
  try {
    const up = await slurmLocal('up');
    if (up.failed) throw bringUpError('the local SLURM cluster', `bash ${script} up`, up, 'DISAGG_NO_SLURM=1 to skip the tests that need the cluster');
    const env = await execa('bash', [script, 'env'], { stdin: 'ignore', reject: false });
    const slurmConf = /SLURM_CONF=(\S+)/.exec(String(env.stdout ?? ''))?.[1];
    if (!slurmConf) throw new Error(`bash ${script} env printed no SLURM_CONF: ${env.stdout}`);
    return { startedHere: !wasUp, slurmConf };
  } catch (err) {
    // a cluster this run began to start is not left running
    if (!wasUp) await slurmLocal('down', 180_000);
    throw err;
  }
}

/** Pids of the cluster's daemons (kept running: they are no leak). */
async function clusterDaemonPids(): Promise<number[]> {
  const out = await slurmLocal('pids', 60_000);
  return String(out.stdout ?? '').split('\n').filter((l) => /^\d+$/.test(l.trim())).map(Number);
}

export default async function setup(project: TestProject) {
  const setupStart = Date.now();
  const suiteId = markSuiteProcesses();
  let cluster: { startedHere: boolean; slurmConf: string } | undefined;
  // The cell comes up while SLURM does: it adds little to the setup's time.
  const gridEngineUp = process.env.DISAGG_NO_GRIDENGINE === '1' ? undefined : bringUpGridEngine();
  gridEngineUp?.catch(() => {}); // awaited below, after SLURM's outcome
  let gridEngine: Awaited<typeof gridEngineUp>;
  try {
    if (process.env.DISAGG_NO_SLURM === '1') {
      project.provide('slurmConf', '');
    } else {
      cluster = await bringUpCluster();
      // Workers start after globalSetup and inherit this; provide() serves tests that read it explicitly.
      process.env.SLURM_CONF = cluster.slurmConf;
      project.provide('slurmConf', cluster.slurmConf);
    }
    gridEngine = await gridEngineUp;
  } catch (err) {
    // No teardown follows a setup that throws: what this run started stops here (the other one's
    // bring-up finished first, so that nothing is left half up).
    const cell = await gridEngineUp?.catch(() => undefined);
    if (cluster?.startedHere) await slurmLocal('down', 180_000);
    if (cell?.startedHere) await gridEngineLocal('down', 180_000);
    throw err;
  }
  project.provide('gridEngine', gridEngine !== undefined);
  project.provide('gridEngineHosts', gridEngine?.hosts ?? []);
  project.provide('gridEngineOneHostWhy', gridEngine?.oneHostWhy ?? '');
  // The suite's duration table (bench/suite-durations.ts) reads these two lines.
  console.log(`global setup: ${seconds(setupStart)} s (${cluster ? (cluster.startedHere ? 'started the local SLURM cluster' : 'found the local SLURM cluster up') : 'no cluster: DISAGG_NO_SLURM=1'})`);

  return async function teardown() {
    const teardownStart = Date.now();
    const keep = new Set<number>();
    if (cluster?.startedHere && process.env.DISAGG_KEEP_SLURM !== '1') {
      const down = await slurmLocal('down', 180_000);
      if (down.failed) console.error(`could not stop the local SLURM cluster this run started (bash ${script} down):\n${down.all}`);
      else console.log('local SLURM cluster stopped (this run started it; DISAGG_KEEP_SLURM=1 keeps it)');
      // Nothing kills this cluster's nodes: a job process that outlived the daemons is a leak (`down` killed it).
      const outlived = outlivedWarning(String(down.all ?? ''));
      if (outlived) {
        console.error(`leak check: ${outlived}`);
        process.exitCode = 1;
      }
    } else if (cluster) {
      for (const pid of await clusterDaemonPids()) keep.add(pid);
    }
    if (gridEngine?.startedHere && process.env.DISAGG_KEEP_GRIDENGINE !== '1') {
      const down = await gridEngineLocal('down', 180_000);
      if (down.failed) console.error(`could not stop the local Grid Engine cell this run started (bash ${gridEngineScript} down):\n${down.all}`);
      else console.log('local Grid Engine cell stopped (this run started it; DISAGG_KEEP_GRIDENGINE=1 keeps it)');
      const outlived = outlivedWarning(String(down.all ?? ''));
      if (outlived) {
        console.error(`leak check: ${outlived}`);
        process.exitCode = 1;
      }
    } else if (gridEngine) {
      for (const line of String((await gridEngineLocal('pids', 60_000)).stdout ?? '').split('\n')) if (/^\d+$/.test(line.trim())) keep.add(Number(line));
    }
    // DISAGG_LEAK_GRACE_MS: how long processes get to end after the last hook (tests of the check shorten it).
    const leaks = await collectLeaks(suiteId, { exclude: keep, graceMs: Number(process.env.DISAGG_LEAK_GRACE_MS) || 30_000 });
    if (leaks.length > 0) {
      console.error(describeLeaks(leaks));
      process.exitCode = 1;
    }
    console.log(`global teardown: ${seconds(teardownStart)} s`);
  };
}

const seconds = (since: number) => ((Date.now() - since) / 1000).toFixed(1);
