// Collection speed: N valid configs (copies of the disagg examples under test_configs/, with varied
// names) in a temporary WORK_DIR, for each N of --configs. Times, in one run: bare Vitest listing
// one test (a project of one test file: Vitest's own cost on this box, now), `npx vitest list
// --project disagg` of no configs (the project's fixed cost) and of each N (median of --runs runs,
// wall and CPU time of the process tree), the same without npx, and the plan alone (`planRun`:
// discover, parse, validate, resolve, select) in this process: the first call (cold: schemas
// compiled) and the median of the next ones. Goals: 1,000 configs listed in at most 2.0 s, 10,000
// in at most 4 s (bench/startup.ts: the same against an earlier commit in one run).
// Command line: USAGE below (--help prints it).
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import fg from 'fast-glob';
import { packageRoot, readSettings } from '../framework/settings.ts';
import { planRun } from '../framework/select/plan.ts';
import type { GpuDetection } from '../framework/select/gpu.ts';
import { appendResult, loadNow, printGoals, printRunHeader, printTable, type Goal } from './lib/report.ts';
import { median } from './lib/stats.ts';
import { outputTail, timedCommandCpu } from './lib/timed-command.ts';
import { benchArgs } from './lib/smoke.ts';
import { benchOptions } from './lib/options.ts';

const USAGE = `usage: node --import tsx bench/collection.ts [--configs 1000,10000] [--runs 3] [--keep] [--smoke]
  Listing N valid configs for each N of --configs, median of --runs runs each, against bare Vitest
  in the same run; --keep: leave the WORK_DIRs. --smoke: 20 configs, one run, no figure kept.`;

const cli = benchOptions({ args: benchArgs(['--configs', '20', '--runs', '1']),
  options: {
    configs: { type: 'string', default: '1000,10000' },
    runs: { type: 'string', default: '3' },
    keep: { type: 'boolean', default: false },
  },
}, USAGE);
const { values } = cli;
const configCounts = cli.wholeNumbers('configs');
const runs = cli.wholeNumber('runs');
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

interface Timing {
  wallS: number;
  cpuS: number;
}

/** `runs` runs of `vitest list` (wall and CPU), checking each lists `expected` ids. */
async function timeList(workDir: string, outputPath: string, expected: number, via: keyof typeof VITEST = 'npx', count = runs): Promise<Timing[]> {
  const times: Timing[] = [];
  const [file, ...prefix] = VITEST[via];
  for (let i = 0; i < count; i++) {
    const run = await timedCommandCpu(file, [...prefix, 'list', '--project', 'disagg'], { env: listEnv(workDir, outputPath), cwd: packageRoot });
    const listed = run.output.split('\n').filter((l) => /\bdisagg_\w+/.test(l) && !/no configs under/.test(l)).length;
    if (run.exitCode !== 0 || listed !== expected) {
      throw new Error(`vitest list in ${workDir} printed ${listed} of ${expected} ids (exit ${run.exitCode}):\n${outputTail(run.output)}`);
    }
    times.push({ wallS: run.wallS, cpuS: run.cpuS });
  }
  return times;
}

/** `runs` runs of `npx vitest list` in a project of one test file with one test: bare Vitest on this box. */
async function timeBare(dir: string, workDir: string): Promise<Timing[]> {
  mkdirSync(dir);
  symlinkSync(path.join(packageRoot, 'node_modules'), path.join(dir, 'node_modules'));
  writeFileSync(path.join(dir, 'package.json'), '{ "name": "bare", "type": "module" }\n');
  writeFileSync(path.join(dir, 'one.test.ts'), "import { expect, test } from 'vitest';\ntest('one', () => expect(1).toBe(1));\n");
  const times: Timing[] = [];
  for (let i = 0; i < runs; i++) {
    const run = await timedCommandCpu('npx', ['vitest', 'list'], { env: listEnv(workDir, path.join(dir, 'out')), cwd: dir });
    if (run.exitCode !== 0 || !/one\.test\.ts > one/.test(run.output)) throw new Error(`bare vitest list (exit ${run.exitCode}):\n${outputTail(run.output)}`);
    times.push({ wallS: run.wallS, cpuS: run.cpuS });
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
  printRunHeader();
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-collection-'));
  try {
    const out = path.join(dir, 'out');
    const empty = path.join(dir, 'empty');
    mkdirSync(path.join(empty, 'test_configs', 'disagg'), { recursive: true });
    const s = (x: number) => x.toFixed(2);
    const wall = (t: Timing[]) => median(t.map((r) => r.wallS));
    const cpu = (t: Timing[]) => median(t.map((r) => r.cpuS));
    // One untimed listing first: Vitest's module cache and the parse cache as a user's second run finds them.
    await timeList(empty, out, 0, 'npx', 1);
    const bare = await timeBare(path.join(dir, 'bare'), empty);
    const listEmpty = await timeList(empty, out, 0);
    const rows: Array<Array<string | number>> = [
      ['bare Vitest, one test (npx vitest list)', s(wall(bare)), s(cpu(bare)), '', '', bare.map((r) => s(r.wallS)).join(' ')],
      ['npx vitest list --project disagg, no configs', s(wall(listEmpty)), s(cpu(listEmpty)), s(wall(listEmpty) - wall(bare)), s(cpu(listEmpty) - cpu(bare)), listEmpty.map((r) => s(r.wallS)).join(' ')],
    ];
    const figures: Record<string, unknown> = {
      runs, gpuType: GPU_TYPE, bareVitestS: { wallMedian: wall(bare), cpuMedian: cpu(bare), runs: bare },
      vitestListEmptyS: { wallMedian: wall(listEmpty), cpuMedian: cpu(listEmpty), runs: listEmpty },
    };
    const goals: Goal[] = [];
    for (const count of configCounts) {
      const full = path.join(dir, `configs-${count}`);
      writeConfigs(full, count);
      const plan = timePlan(full);
      if (plan.tests !== count || plan.invalid > 0) throw new Error(`planRun found ${plan.tests} tests, ${plan.invalid} invalid or skipped; expected ${count} valid`);
      await timeList(full, out, count, 'npx', 1); // untimed: the parse cache filled, as a user's second listing finds it
      const listFull = await timeList(full, out, count);
      const listDirect = await timeList(full, out, count, 'direct');
      rows.push(
        [`npx vitest list --project disagg, ${count} configs`, s(wall(listFull)), s(cpu(listFull)), s(wall(listFull) - wall(bare)), s(cpu(listFull) - cpu(bare)), listFull.map((r) => s(r.wallS)).join(' ')],
        [`node_modules/.bin/vitest list (no npx), ${count} configs`, s(wall(listDirect)), s(cpu(listDirect)), '', '', listDirect.map((r) => s(r.wallS)).join(' ')],
        [`planRun in-process, ${count} configs, first call / later calls`, `${s(plan.coldS)} / ${s(median(plan.warmS))}`, '', '', '', plan.warmS.map(s).join(' ')],
      );
      const perConfigMs = ((wall(listFull) - wall(listEmpty)) / count) * 1000;
      figures[`configs${count}`] = {
        vitestListS: { wallMedian: wall(listFull), cpuMedian: cpu(listFull), runs: listFull },
        vitestListNoNpxS: { wallMedian: wall(listDirect), cpuMedian: cpu(listDirect), runs: listDirect },
        planRunS: { cold: plan.coldS, warmMedian: median(plan.warmS) },
        perConfigMs,
      };
      goals.push({ what: `vitest list of ${count} configs`, value: Number(wall(listFull).toFixed(2)), limit: count <= 1000 ? 2.0 : 4.0, atMost: true, unit: ' s' });
    }
    printTable(`Collection: disagg configs (GPU_TYPE=${GPU_TYPE}), ${runs} run(s) each; seconds`, ['', 'wall median', 'cpu median', 'wall - bare', 'cpu - bare', 'wall runs'], rows);
    printGoals(goals);
    console.log(`load average at end: ${loadNow()}`);
    appendResult('collection', figures, goals);
  } finally {
    if (values.keep) console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

await main();
