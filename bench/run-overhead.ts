// What `disagg-bench run` adds to a run: the same WORK_DIR (one config whose STAND-IN job ends at
// once, bench/fixtures/sleep-job.yaml with a 0 s sleep), the same local scheduler, run by
// `node bin/disagg-bench.js run disagg` and by `node node_modules/vitest/vitest.mjs run --project
// disagg`, rounds alternating which goes first; wall time of each, start to exit. Goal: the median
// difference at most 0.3 s.
// Command line: USAGE below (--help prints it).
// DISAGG_BIN passes through (tsx: the checkout's sources, where a shared node_modules holds another
// checkout's CLI bundle; it costs tsx's start on top, which the figure then includes).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { packageRoot } from '../framework/settings.ts';
import { startHealthStandIn } from './lib/health-standin.ts';
import { sleepJobConfig, writeSleepConfigs } from './lib/sleep-jobs.ts';
import { appendResult, printGoals, printTable, type Goal } from './lib/report.ts';
import { median } from './lib/stats.ts';
import { timedCommand } from './lib/timed-command.ts';
import { benchArgs } from './lib/smoke.ts';
import { benchOptions } from './lib/options.ts';

const USAGE = `usage: node --import tsx bench/run-overhead.ts [--rounds 5] [--smoke]
  --rounds of each form, alternating. --smoke: one round, no figure kept.`;

const cli = benchOptions({ args: benchArgs(['--rounds', '1']), options: { rounds: { type: 'string', default: '5' } } }, USAGE);
const rounds = cli.wholeNumber('rounds');

const FORMS = {
  run: ['node', path.join(packageRoot, 'bin/disagg-bench.js'), 'run', 'disagg'],
  vitest: ['node', path.join(packageRoot, 'node_modules/vitest/vitest.mjs'), 'run', '--project', 'disagg'],
} as const;
type Form = keyof typeof FORMS;

async function main(): Promise<void> {
  const health = await startHealthStandIn();
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-run-overhead-'));
  const times: Record<Form, number[]> = { run: [], vitest: [] };
  try {
    const config = sleepJobConfig(health.port, 0) as { slurm: Record<string, unknown> };
    config.slurm.partition = 'debug';
    config.slurm.account = 'bench';
    writeSleepConfigs(path.join(dir, 'work'), 1, config);
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (k === 'DISAGG_BIN' || !/^(DISAGG_|DEBUG_MODE$|RESUME$|SCHEDULER$|WORK_DIR$|OUTPUT_PATH$|VITEST|TEST$|NODE_ENV$)/.test(k)) env[k] = v;
    Object.assign(env, { WORK_DIR: path.join(dir, 'work'), SCHEDULER: 'local', GPU_TYPE: 'GB200', NO_COLOR: '1', DISAGG_POLL_MAX_SEC: '1', DISAGG_HISTORY: 'off' });
    for (let r = 0; r < rounds; r++) {
      const order: Form[] = r % 2 === 0 ? ['run', 'vitest'] : ['vitest', 'run'];
      for (const form of order) {
        const [file, ...args] = FORMS[form];
        const run = await timedCommand(file, args, { cwd: packageRoot, env: { ...env, OUTPUT_PATH: path.join(dir, `out-${form}-${r}`) }, timeoutMs: 300_000 });
        if (run.exitCode !== 0) throw new Error(`${form} exited ${run.exitCode}:\n${run.output.slice(-2000)}`);
        times[form].push(run.wallS);
        console.log(`round ${r + 1}: ${form} ${run.wallS.toFixed(2)} s`);
      }
    }
  } finally {
    await health.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const [run, vitest] = [median(times.run), median(times.vitest)];
  printTable(`disagg-bench run vs vitest run, ${rounds} rounds (medians)`, ['form', 'wall (s)'], [['disagg-bench run', run.toFixed(2)], ['vitest run', vitest.toFixed(2)]]);
  const goals: Goal[] = [{ what: 'disagg-bench run minus vitest run (median wall)', value: Number((run - vitest).toFixed(3)), limit: 0.3, atMost: true, unit: ' s' }];
  printGoals(goals);
  appendResult('run-overhead', { rounds, bin: process.env.DISAGG_BIN ?? 'bundle', times }, goals);
}

await main();
