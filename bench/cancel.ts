// Cancelling a run at any moment: `npx disagg-bench run` and `npx vitest run --project disagg`,
// each with one config whose job sleeps 60 s (bench/fixtures/sleep-job.yaml; the serving stack is
// a STAND-IN), signalled SIGTERM or SIGINT at 0.5, 2, 5, 10 and 20 s after the start, to the npx
// process or to the node process under it (disagg-bench's, or Vitest's main process). For each
// trial: how long until no process of the run is left (every process of a run carries a mark in
// its environment; a local job's processes too), whether a job is left in the scheduler (the
// ledger's jobs not ended; SLURM's queue with --scheduler slurm), and whether the run named what it
// did not run (the test, or "nothing was submitted" when nothing was). Goal: every trial within 10 s.
//   node --import tsx bench/cancel.ts [--repeat 10] [--scheduler local|slurm]
//        [--entries run,vitest] [--targets npx,node] [--signals SIGTERM,SIGINT] [--delays 0.5,2,5,10,20]
// The log (every trial, one line) goes to stdout; the summary to bench/results/cancel.jsonl.
// DISAGG_BIN passes through (tsx: the checkout's sources, where a shared node_modules holds another
// checkout's CLI bundle).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { execa } from 'execa';
import { packageRoot } from '../framework/settings.ts';
import { readLedger } from '../framework/jobs/ledger.ts';
import { startHealthStandIn } from './lib/health-standin.ts';
import { sleepJobConfig, writeSleepConfigs } from './lib/sleep-jobs.ts';
import { appendResult, printGoals, printTable, type Goal } from './lib/report.ts';
import { maxOf } from '../runners/common/stats.ts';

const { values } = parseArgs({
  options: {
    repeat: { type: 'string', default: '1' },
    scheduler: { type: 'string', default: 'local' },
    entries: { type: 'string', default: 'run,vitest' },
    targets: { type: 'string', default: 'npx,node' },
    signals: { type: 'string', default: 'SIGTERM,SIGINT' },
    delays: { type: 'string', default: '0.5,2,5,10,20' },
    'gone-within': { type: 'string', default: '10' },
  },
});
const list = (raw: string) => raw.split(',').map((s) => s.trim()).filter(Boolean);
const repeat = Number(values.repeat);
const scheduler = values.scheduler as 'local' | 'slurm';
const goneWithinS = Number(values['gone-within']);
const SLEEP_S = 60;

type Entry = 'run' | 'vitest';
const COMMANDS: Record<Entry, string[]> = {
  run: ['npx', 'disagg-bench', 'run', 'disagg'],
  vitest: ['npx', 'vitest', 'run', '--project', 'disagg'],
};
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

interface Trial {
  entry: Entry;
  target: 'npx' | 'node';
  signal: NodeJS.Signals;
  delayS: number;
  /** When the signal went out, after the start (later than the delay when the node process was not up yet). */
  sentAtS: number;
  exit: string;
  goneAfterS: number | undefined;
  jobsLeft: string[];
  named: boolean;
  /** Whether anything had been submitted (the ledger holds a job). */
  submitted: boolean;
  said: boolean;
  ok: boolean;
  /** The run's last lines, kept for a trial that failed. */
  tail?: string;
}

async function trial(entry: Entry, target: 'npx' | 'node', signal: NodeJS.Signals, delayS: number, healthPort: number): Promise<Trial> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-cancel-'));
  const workDir = path.join(dir, 'work');
  const outputPath = path.join(dir, 'out');
  const config = sleepJobConfig(healthPort, SLEEP_S) as { slurm: Record<string, unknown> };
  config.slurm.partition = 'debug';
  config.slurm.account = 'bench';
  writeSleepConfigs(workDir, 1, config);
  const mark = randomBytes(4).toString('hex');
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (k === 'DISAGG_BIN' || !/^(DISAGG_|DEBUG_MODE$|RESUME$|SCHEDULER$|WORK_DIR$|OUTPUT_PATH$|VITEST|TEST$|NODE_ENV$)/.test(k)) env[k] = v;
  Object.assign(env, { WORK_DIR: workDir, OUTPUT_PATH: outputPath, SCHEDULER: scheduler, GPU_TYPE: 'GB200', NO_COLOR: '1', DISAGG_POLL_MAX_SEC: '1', DISAGG_CANCEL_MARK: mark });
  const [file, ...args] = COMMANDS[entry];
  const started = performance.now();
  const child = execa(file, args, { cwd: packageRoot, env, extendEnv: false, all: true, reject: false, stdin: 'ignore', detached: true, timeout: 300_000 });
  await sleep(delayS * 1000);
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
  const output = String(result.all ?? '');
  // `disagg-bench run` keeps the run's ledger in the folder OUTPUT_PATH/latest names; Vitest's form in OUTPUT_PATH.
  const runFolder = existsSync(path.join(outputPath, 'latest')) ? path.join(outputPath, 'latest') : outputPath;
  const left = await jobsLeft(runFolder, env);
  // Named: the run said which tests it did not run, or that it submitted nothing. A signal that
  // lands before the process ran a line of JavaScript (Node's own start, seconds on a busy machine)
  // ends it unsaid: then the ledger must be empty, nothing having been submitted.
  const said = /test\(s\) not run .*disagg_perf_sleep_0|nothing was submitted|no test had been collected yet/.test(output);
  const submitted = readLedger(runFolder).length > 0;
  const named = said || !submitted;
  rmSync(dir, { recursive: true, force: true });
  const exit = result.exitCode !== undefined ? String(result.exitCode) : String(result.signal);
  const ok = goneAfterS !== undefined && goneAfterS <= goneWithinS && left.length === 0 && named;
  const tail = ok ? undefined : output.split('\n').slice(-6).join('\n');
  return { entry, target, signal, delayS, sentAtS, exit, goneAfterS, jobsLeft: left, named, submitted, said, ok, tail };
}

async function main(): Promise<void> {
  const health = await startHealthStandIn();
  const trials: Trial[] = [];
  try {
    for (let r = 0; r < repeat; r++) {
      for (const delayS of list(values.delays!).map(Number)) {
        for (const entry of list(values.entries!) as Entry[]) {
          for (const target of list(values.targets!) as ('npx' | 'node')[]) {
            for (const signal of list(values.signals!) as NodeJS.Signals[]) {
              const t = await trial(entry, target, signal, delayS, health.port);
              trials.push(t);
              console.log(`trial ${trials.length}: ${entry} ${target} ${signal} at ${delayS} s (sent ${t.sentAtS.toFixed(1)} s): exit ${t.exit}, ` +
                `gone after ${t.goneAfterS?.toFixed(1) ?? 'NOT GONE (60 s)'} s, jobs left ${t.jobsLeft.length}, ${t.submitted ? 'submitted' : 'nothing submitted'}, not run named ${t.said}: ${t.ok ? 'ok' : 'FAIL'}`);
              if (t.tail) console.log(t.tail.replace(/^/gm, '    | '));
            }
          }
        }
      }
    }
  } finally {
    await health.close();
  }
  const rows = new Map<string, Trial[]>();
  for (const t of trials) {
    const key = `${t.entry} ${t.target} ${t.signal} ${t.delayS}`;
    rows.set(key, [...(rows.get(key) ?? []), t]);
  }
  printTable(`cancel: ${scheduler} scheduler, ${repeat} repetition(s) per point`, ['point', 'ok', 'worst gone (s)', 'jobs left'], [...rows].map(([key, ts]) => [
    key, `${ts.filter((t) => t.ok).length}/${ts.length}`, maxOf(ts.map((t) => t.goneAfterS ?? Infinity)).toFixed(1), ts.reduce((n, t) => n + t.jobsLeft.length, 0),
  ]));
  const goals: Goal[] = [{ what: 'trials where the run was gone, no job left and the not-run named, within 10 s (fraction)', value: trials.filter((t) => t.ok).length / trials.length, limit: 1, atMost: false }];
  printGoals(goals);
  appendResult('cancel', { scheduler, repeat, trials }, goals);
}

await main();
