// Collection speed: 1,000 valid configs (copies of the disagg examples under
// test_configs/, with varied names) in a temporary WORK_DIR. Times `npx vitest list --project
// disagg` (median of --runs runs; the same on an empty WORK_DIR, the fixed cost; and without npx),
// and the plan alone (`planRun`: discover, parse, validate, resolve, select) in this process: the
// first call (cold: schemas compiled) and the median of the next ones. Goal: listing under 3 s.
//   node --import tsx bench/collection.ts [--configs 1000] [--runs 3] [--keep]
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import fg from 'fast-glob';
import { packageRoot, readSettings } from '../framework/settings.ts';
import { planRun } from '../framework/select/plan.ts';
import type { GpuDetection } from '../framework/select/gpu.ts';
import { appendResult, printGoals, printTable, type Goal } from './lib/report.ts';
import { median } from './lib/stats.ts';
import { outputTail, timedCommand } from './lib/timed-command.ts';
import { benchArgs } from './lib/smoke.ts';

const { values } = parseArgs({ args: benchArgs(['--configs', '20', '--runs', '1']),
  options: {
    configs: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '3' },
    keep: { type: 'boolean', default: false },
  },
});
const configCount = Number(values.configs);
const runs = Number(values.runs);
const GPU_TYPE = 'GB200';

/** Copies the examples round-robin into WORK_DIR/test_configs/disagg/<category>/<stem>_<n>.yaml. */
function writeConfigs(workDir: string, count: number): string[] {
  const examples = fg.sync('test_configs/disagg/*/*.yaml', { cwd: packageRoot }).sort();
  if (examples.length === 0) throw new Error(`no disagg example configs under ${packageRoot}/test_configs/disagg/`);
  const width = String(count - 1).length;
  const written: string[] = [];
  for (let i = 0; i < count; i++) {
    const source = examples[i % examples.length];
    const category = path.basename(path.dirname(source));
    const stem = path.basename(source, '.yaml');
    const dest = path.join(workDir, 'test_configs', 'disagg', category, `${stem}_${String(i).padStart(width, '0')}.yaml`);
    mkdirSync(path.dirname(dest), { recursive: true });
    copyFileSync(path.join(packageRoot, source), dest);
    written.push(dest);
  }
  return written;
}

/** Environment of `vitest list`: the caller's, with this WORK_DIR and nothing that filters tests. */
function listEnv(workDir: string, outputPath: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(DISAGG_|GPU_TYPE$|WORK_DIR$|OUTPUT_PATH$)/.test(k)) env[k] = v;
  return { ...env, WORK_DIR: workDir, OUTPUT_PATH: outputPath, GPU_TYPE };
}

/** Vitest through npx (what users type), or its bin directly (npx's own start-up left out). */
const VITEST = { npx: ['npx', 'vitest'], direct: [path.join(packageRoot, 'node_modules', '.bin', 'vitest')] } as const;

/** Wall times of `runs` runs of `vitest list`, checking each lists `expected` ids. */
async function timeList(workDir: string, outputPath: string, expected: number, via: keyof typeof VITEST = 'npx'): Promise<number[]> {
  const times: number[] = [];
  const [file, ...prefix] = VITEST[via];
  for (let i = 0; i < runs; i++) {
    const run = await timedCommand(file, [...prefix, 'list', '--project', 'disagg'], { env: listEnv(workDir, outputPath), cwd: packageRoot });
    const listed = run.output.split('\n').filter((l) => /\bdisagg_\w+/.test(l) && !/no configs under/.test(l)).length;
    if (run.exitCode !== 0 || listed !== expected) {
      throw new Error(`vitest list in ${workDir} printed ${listed} of ${expected} ids (exit ${run.exitCode}):\n${outputTail(run.output)}`);
    }
    times.push(run.wallS);
  }
  return times;
}

/** planRun in this process: the first (cold) call, then `runs` more. */
function timePlan(workDir: string): { coldS: number; warmS: number[]; tests: number; invalid: number } {
  const env = listEnv(workDir, path.join(workDir, 'out'));
  const gpu: GpuDetection = { gpuType: GPU_TYPE, source: 'GPU_TYPE' };
  const once = () => {
    const t0 = performance.now();
    const plan = planRun({ settings: readSettings(env), gpu, testType: 'disagg', env });
    return { s: (performance.now() - t0) / 1000, plan };
  };
  const cold = once();
  const warmS = Array.from({ length: runs }, () => once().s);
  const invalid = cold.plan.tests.filter((t) => t.issues.length > 0 || t.skipReason).length;
  return { coldS: cold.s, warmS, tests: cold.plan.tests.length, invalid };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-collection-'));
  try {
    const full = path.join(dir, 'full');
    const empty = path.join(dir, 'empty');
    mkdirSync(path.join(empty, 'test_configs', 'disagg'), { recursive: true });
    writeConfigs(full, configCount);
    const plan = timePlan(full);
    if (plan.tests !== configCount || plan.invalid > 0) {
      throw new Error(`planRun found ${plan.tests} tests, ${plan.invalid} invalid or skipped; expected ${configCount} valid`);
    }
    const listFull = await timeList(full, path.join(dir, 'out'), configCount);
    const listEmpty = await timeList(empty, path.join(dir, 'out'), 0);
    const listDirect = await timeList(full, path.join(dir, 'out'), configCount, 'direct');
    const s = (x: number) => x.toFixed(2);
    printTable(`Collection: ${configCount} disagg configs (GPU_TYPE=${GPU_TYPE}), seconds`, ['', 'median', 'runs'], [
      [`npx vitest list --project disagg (${configCount} configs)`, s(median(listFull)), listFull.map(s).join(' ')],
      ['npx vitest list --project disagg (no configs)', s(median(listEmpty)), listEmpty.map(s).join(' ')],
      [`node_modules/.bin/vitest list --project disagg (${configCount}, no npx)`, s(median(listDirect)), listDirect.map(s).join(' ')],
      ['planRun in-process, first call (cold)', s(plan.coldS), ''],
      ['planRun in-process, later calls', s(median(plan.warmS)), plan.warmS.map(s).join(' ')],
    ]);
    const perConfigMs = ((median(listFull) - median(listEmpty)) / configCount) * 1000;
    console.log(`\nper config: ${perConfigMs.toFixed(2)} ms of listing time beyond the fixed cost`);
    const goals: Goal[] = [{ what: `vitest list of ${configCount} configs`, value: Number(median(listFull).toFixed(2)), limit: 3, atMost: true, unit: ' s' }];
    printGoals(goals);
    appendResult('collection', {
      configs: configCount, runs, gpuType: GPU_TYPE,
      vitestListS: { median: median(listFull), runs: listFull },
      vitestListEmptyS: { median: median(listEmpty), runs: listEmpty },
      vitestListNoNpxS: { median: median(listDirect), runs: listDirect },
      planRunS: { cold: plan.coldS, warmMedian: median(plan.warmS) },
      perConfigMs,
    }, goals);
  } finally {
    if (values.keep) console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

await main();
