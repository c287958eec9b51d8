// Cancelling a run at any moment, the two ways users start one: `npx disagg-bench run` (every test
// type) and `npx vitest run --project nixl`, with one config whose job runs about a minute
// (bench/fixtures/sleep-nixl.yaml: the KV pipe on shm, paced; `--config disagg`: the serving
// STAND-IN of bench/fixtures/sleep-job.yaml under `--project disagg`), signalled SIGTERM or SIGINT at
// 0.5, 2, 5, 10 and 20 s after the start (`running`: once the ledger says its job runs, however
// long the start took), to the npx process or to the node process under it
// (disagg-bench's, or Vitest's main process), with `--busy N` busy loops loading the machine (default
// 2). For each trial: how long until no process of the run is left (every process of a run carries a
// mark in its environment; a local job's processes too), whether a job is left in the scheduler
// (the ledger's jobs not ended; SLURM's queue with --scheduler slurm), and whether the run named
// what it did not run: results.json's notRun lists the test once it was collected or submitted (a
// run cut before that says it submitted nothing). Goal: every trial within 10 s.
// Command line: USAGE below (--help prints it). The log (every trial, one line) goes to stdout; the summary to
// bench/results/cancel.jsonl. DISAGG_BIN passes through (tsx: the checkout's sources, where a shared
// node_modules holds another checkout's CLI bundle).
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { packageRoot } from '../framework/settings.ts';
import { readLedger } from '../framework/jobs/ledger.ts';
import { startHealthStandIn } from './lib/health-standin.ts';
import { sleepJobConfig, writeSleepConfigs } from './lib/sleep-jobs.ts';
import { appendResult, benchDir, printGoals, printTable, type Goal } from './lib/report.ts';
import { benchArgs } from './lib/smoke.ts';
import { benchOptions } from './lib/options.ts';
import { maxOf } from '../runners/common/stats.ts';

const USAGE = `usage: node --import tsx bench/cancel.ts [--repeat 1] [--scheduler local|slurm] [--config nixl|disagg]
    [--entries run,vitest] [--targets npx,node] [--signals SIGTERM,SIGINT] [--delays 0.5,2,5,10,20]
    [--busy 2] [--gone-within 10] [--stop-at ISO-TIME] [--smoke]
  Each repetition covers every point (entry x target x signal x delay) once; a delay is seconds after
  the start or \`running\`; --busy busy loops load the machine; --gone-within: the goal in seconds;
  --stop-at starts no repetition's trial after that time and summarises what ran. --smoke: one
  trial (SIGTERM to disagg-bench run's node process 5 s after the start), no load, no figure kept.`;

const cli = benchOptions({
  args: benchArgs(['--entries', 'run', '--targets', 'node', '--signals', 'SIGTERM', '--delays', '5', '--busy', '0']),
  options: {
    repeat: { type: 'string', default: '1' },
    scheduler: { type: 'string', default: 'local' },
    config: { type: 'string', default: 'nixl' },
    entries: { type: 'string', default: 'run,vitest' },
    targets: { type: 'string', default: 'npx,node' },
    signals: { type: 'string', default: 'SIGTERM,SIGINT' },
    delays: { type: 'string', default: '0.5,2,5,10,20' },
    busy: { type: 'string', default: '2' },
    'stop-at': { type: 'string' },
    'gone-within': { type: 'string', default: '10' },
  },
}, USAGE);
const repeat = cli.wholeNumber('repeat');
const scheduler = cli.oneOf('scheduler', ['local', 'slurm']);
const configKind = cli.oneOf('config', ['nixl', 'disagg']);
const goneWithinS = cli.number('gone-within', { above: 0 });
const stopAtText = cli.values['stop-at'];
const stopAt = stopAtText === undefined ? Infinity : Date.parse(stopAtText);
if (Number.isNaN(stopAt)) cli.refuse(`--stop-at '${stopAtText}': expected a date and time, e.g. 2026-12-07T14:00:00Z`);
const busy = cli.wholeNumber('busy', { min: 0 });
const entries = cli.someOf('entries', ['run', 'vitest']);
const targets = cli.someOf('targets', ['npx', 'node']);
const signals = cli.someOf('signals', ['SIGTERM', 'SIGINT']);
const SLEEP_S = 60;

type Entry = 'run' | 'vitest';
/** Seconds after the start, or once the run's job runs. */
type Delay = number | 'running';
const delays: Delay[] = cli.listOf('delays', (d) => (d === 'running' ? d : d !== '' && Number(d) >= 0 ? Number(d) : undefined), 'seconds after the start (0 or more) or running');
/** The README's two commands: `disagg-bench run` runs every test type; Vitest's form names the config's. */
const COMMANDS: Record<Entry, string[]> = {
  run: ['npx', 'disagg-bench', 'run'],
  vitest: ['npx', 'vitest', 'run', '--project', configKind],
};
/** The test the WORK_DIR holds. */
const TEST_ID = configKind === 'nixl' ? 'nixl_perf_sleep' : 'disagg_perf_sleep_0';
/** The node process under npx: disagg-bench's bin, or Vitest's main process (not its workers). */
const NODE_PROCESS: Record<Entry, RegExp> = {
  run: /^node\S* \S*bin\/disagg-bench(\.js)? run/,
  vitest: /^node\S* \S*vitest(\.mjs)? run/,
};

interface Proc {
  pid: number;
  argv: string;
}

function processesOf(mark: string): Proc[] {
  const found: Proc[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(`DISAGG_CANCEL_MARK=${mark}`)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      found.push({ pid: Number(entry), argv: readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim() });
    } catch {
      // ended while we looked
    }
  }
  return found;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Jobs the ledger lists whose last word is not an end; with SLURM, those the queue still holds. */
async function jobsLeft(outputPath: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const last = new Map<string, { terminal: boolean }>();
  for (const e of readLedger(outputPath)) last.set(e.job, e);
  const open = [...last].filter(([, e]) => !e.terminal).map(([job]) => job);
  if (scheduler !== 'slurm') return open;
  const all = [...last.keys()];
  if (all.length === 0) return [];
  const q = await execa('squeue', ['-h', '-o', '%i', '-j', all.join(',')], { env, reject: false });
  return [...new Set([...open, ...q.stdout.split('\n').map((s) => s.trim()).filter(Boolean)])];
}

/** The tests results.json's notRun lists (none when there is no file). */
function listedNotRun(folder: string): string[] {
  try {
    const file = JSON.parse(readFileSync(path.join(folder, 'results.json'), 'utf8')) as { notRun?: { testId: string }[] };
    return (file.notRun ?? []).map((n) => n.testId);
  } catch {
    return [];
  }
}

/** Writes the WORK_DIR's one config. */
function writeConfig(workDir: string, healthPort: number | undefined): void {
  if (configKind === 'nixl') {
    const dir = path.join(workDir, 'test_configs', 'nixl', 'perf');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'sleep.yaml'), readFileSync(path.join(benchDir, 'fixtures', 'sleep-nixl.yaml')));
    return;
  }
  const config = sleepJobConfig(healthPort!, SLEEP_S) as { slurm: Record<string, unknown> };
  config.slurm.partition = 'debug';
  config.slurm.account = 'bench';
  writeSleepConfigs(workDir, 1, config);
}

/** The run under way, ended by the benchmark if it is itself stopped. */
let current: ChildProcess | undefined;
const busyLoops: ChildProcess[] = [];

/** Ends what this benchmark started: the busy loops and a run under way (its own process group). */
function endOwn(): void {
  for (const loop of busyLoops.splice(0)) loop.kill('SIGKILL');
  if (current?.pid && current.exitCode === null) {
    try {
      process.kill(-current.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}
process.on('exit', endOwn);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    endOwn();
    process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1));
  });
}

interface Trial {
  entry: Entry;
  target: 'npx' | 'node';
  signal: NodeJS.Signals;
  delayS: Delay;
  /** When the signal went out, after the start (later than the delay when the node process was not up yet). */
  sentAtS: number;
  exit: string;
  goneAfterS: number | undefined;
  jobsLeft: string[];
  /** Whether anything had been submitted (the ledger holds a job). */
  submitted: boolean;
  /** The run's output named the test as not run, or said nothing was submitted. */
  said: boolean;
  /** results.json's notRun lists the test. */
  listed: boolean;
  named: boolean;
  ok: boolean;
  /** The run's last lines, kept for a trial that failed. */
  tail?: string;
}

/** Whether the ledger (in OUTPUT_PATH, or the run folder `latest` names) says a job runs. */
function jobRuns(outputPath: string): boolean {
  const folder = existsSync(path.join(outputPath, 'latest')) ? path.join(outputPath, 'latest') : outputPath;
  return readLedger(folder).some((e) => e.state === 'RUNNING');
}

async function trial(entry: Entry, target: 'npx' | 'node', signal: NodeJS.Signals, delayS: Delay, healthPort: number | undefined): Promise<Trial> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-cancel-'));
  const workDir = path.join(dir, 'work');
  const outputPath = path.join(dir, 'out');
  writeConfig(workDir, healthPort);
  const mark = randomBytes(4).toString('hex');
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (k === 'DISAGG_BIN' || !/^(DISAGG_|DEBUG_MODE$|RESUME$|SCHEDULER$|WORK_DIR$|OUTPUT_PATH$|VITEST|TEST$|NODE_ENV$)/.test(k)) env[k] = v;
  Object.assign(env, { WORK_DIR: workDir, OUTPUT_PATH: outputPath, SCHEDULER: scheduler, GPU_TYPE: 'GB200', NO_COLOR: '1', DISAGG_POLL_MAX_SEC: '1', DISAGG_HISTORY: 'off', DISAGG_CANCEL_MARK: mark });
  const [file, ...args] = COMMANDS[entry];
  const started = performance.now();
  const child = execa(file, args, { cwd: packageRoot, env, extendEnv: false, all: true, reject: false, stdin: 'ignore', detached: true, timeout: 300_000 });
  current = child;
  if (delayS === 'running') {
    while (!jobRuns(outputPath) && child.exitCode === null && performance.now() - started < 240_000) await sleep(100);
  } else await sleep(delayS * 1000);
  let pid = child.pid!;
  if (target === 'node') {
    // The node process may not be up yet at 0.5 s: wait for it (the trial records when the signal went).
    for (;;) {
      const node = processesOf(mark).find((p) => NODE_PROCESS[entry].test(p.argv));
      if (node) {
        pid = node.pid;
        break;
      }
      if (child.exitCode !== null || performance.now() - started > 120_000) break;
      await sleep(50);
    }
  }
  const sentAtS = (performance.now() - started) / 1000;
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
  const sentAt = performance.now();
  let goneAfterS: number | undefined;
  while (performance.now() - sentAt < 60_000) {
    if (processesOf(mark).length === 0) {
      goneAfterS = (performance.now() - sentAt) / 1000;
      break;
    }
    await sleep(100);
  }
  // Whatever the run left is this benchmark's to end (its own process group), after the measurement.
  if (goneAfterS === undefined) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  }
  const result = await child;
  current = undefined;
  const output = String(result.all ?? '');
  // `disagg-bench run` keeps the run's ledger in the folder OUTPUT_PATH/latest names; Vitest's form in OUTPUT_PATH.
  const runFolder = existsSync(path.join(outputPath, 'latest')) ? path.join(outputPath, 'latest') : outputPath;
  const left = await jobsLeft(runFolder, env);
  const submitted = readLedger(runFolder).length > 0;
  const listed = listedNotRun(runFolder).includes(TEST_ID);
  // Named: results.json lists the test once the run knew it (it said so, or it had submitted its
  // job); a run cut before it collected the test says it submitted nothing. A signal that lands
  // before the process ran a line of JavaScript (Node's own start, seconds on a busy machine) ends
  // it unsaid: then the ledger must be empty, nothing having been submitted.
  const saidNotRun = new RegExp(`test\\(s\\) not run .*${TEST_ID}`).test(output);
  const saidNothing = /nothing was submitted|no test had been collected yet/.test(output);
  const said = saidNotRun || saidNothing;
  const named = submitted || saidNotRun ? listed : true;
  rmSync(dir, { recursive: true, force: true });
  const exit = result.exitCode !== undefined ? String(result.exitCode) : String(result.signal);
  const ok = goneAfterS !== undefined && goneAfterS <= goneWithinS && left.length === 0 && named;
  const tail = ok ? undefined : output.split('\n').slice(-8).join('\n');
  return { entry, target, signal, delayS, sentAtS, exit, goneAfterS, jobsLeft: left, submitted, said, listed, named, ok, tail };
}

function startBusyLoops(n: number): void {
  for (let i = 0; i < n; i++) busyLoops.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
}

function summarise(trials: Trial[], reps: number): void {
  const rows = new Map<string, Trial[]>();
  for (const t of trials) {
    const key = `${t.entry} ${t.target} ${t.signal} ${t.delayS}`;
    rows.set(key, [...(rows.get(key) ?? []), t]);
  }
  printTable(`cancel: ${scheduler} scheduler, ${configKind} config, ${busy} busy loop(s), ${reps} repetition(s) of every point completed`, ['point', 'ok', 'worst gone (s)', 'jobs left', 'not-run listed'], [...rows].map(([key, ts]) => [
    key, `${ts.filter((t) => t.ok).length}/${ts.length}`, maxOf(ts.map((t) => t.goneAfterS ?? Infinity)).toFixed(1), ts.reduce((n, t) => n + t.jobsLeft.length, 0),
    `${ts.filter((t) => t.listed).length}/${ts.filter((t) => t.submitted || t.listed).length}`,
  ]));
  const goals: Goal[] = [{ what: 'trials where the run was gone, no job left and the not-run named, within 10 s (fraction)', value: trials.length ? trials.filter((t) => t.ok).length / trials.length : 0, limit: 1, atMost: false }];
  printGoals(goals);
  appendResult('cancel', { scheduler, config: configKind, busy, repeat, repetitionsCompleted: reps, trials }, goals);
}

async function main(): Promise<void> {
  const health = configKind === 'disagg' ? await startHealthStandIn() : undefined;
  const trials: Trial[] = [];
  let reps = 0;
  startBusyLoops(busy);
  try {
    repetitions: for (let r = 0; r < repeat; r++) {
      for (const delayS of delays) {
        for (const entry of entries) {
          for (const target of targets) {
            for (const signal of signals) {
              if (Date.now() > stopAt) break repetitions;
              const t = await trial(entry, target, signal, delayS, health?.port);
              trials.push(t);
              console.log(`trial ${trials.length}: ${entry} ${target} ${signal} at ${typeof delayS === 'number' ? `${delayS} s` : 'job running'} (sent ${t.sentAtS.toFixed(1)} s): exit ${t.exit}, ` +
                `gone after ${t.goneAfterS?.toFixed(1) ?? 'NOT GONE (60 s)'} s, jobs left ${t.jobsLeft.length}, ${t.submitted ? 'submitted' : 'nothing submitted'}, ` +
                `said ${t.said}, results.json lists it ${t.listed}: ${t.ok ? 'ok' : 'FAIL'}`);
              if (t.tail) console.log(t.tail.replace(/^/gm, '    | '));
            }
          }
        }
      }
      reps++;
    }
  } finally {
    endOwn();
    await health?.close();
  }
  summarise(trials, reps);
}

await main();
