// Loading a huge config: a valid disagg config whose worker_config.gen holds N
// extra keys (passed to the engine verbatim, so the config stays valid), timed as a user meets
// it: `disagg-bench validate <file>` as a child process (wall time, the CLI's start included).
// - linearity: N = an eighth of what fits the size bound up to what fits it; the time per key must
//   not grow with N (before the linear loader the
//   unique-key check compared every key with every earlier one: 40k keys 11.6 s);
// - the baseline in the same run: the `yaml` library parsing the same text with its own
//   uniqueKeys check on (the quadratic loader it replaced), for the two smallest N only (it is quadratic);
// - the largest key-dense file under the size bound (MAX_CONFIG_BYTES), loaded;
// - 1M keys (about 21 MB) and a 50 MB file: each refused in one line by the size bound;
// - the half-bound file listed by `vitest list --project disagg` minus an empty list: the
//   loading inside Vitest, against validate's.
// Each loader figure is the fastest of --runs runs (default 3): on a shared machine the fastest
// run is the one least slowed by others; every run is in the JSON line.
// Command line: USAGE below (--help prints it).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import fg from 'fast-glob';
import { parseDocument } from 'yaml';
import { packageRoot } from '../framework/settings.ts';
import { MAX_CONFIG_BYTES } from '../framework/config/load.ts';
import { appendResult, printGoals, printTable, type Goal } from './lib/report.ts';
import { outputTail, timedCommand } from './lib/timed-command.ts';
import { minOf } from './lib/stats.ts';
import { benchArgs } from './lib/smoke.ts';
import { benchOptions } from './lib/options.ts';

const USAGE = `usage: node --import tsx bench/config-load.ts [--runs 3] [--keep] [--smoke]
  Each loader figure the fastest of --runs runs; --keep: leave the scratch folder. --smoke: one run,
  no figure kept.`;

const cli = benchOptions({ args: benchArgs(['--runs', '1']), options: { keep: { type: 'boolean', default: false }, runs: { type: 'string', default: '3' } } }, USAGE);
const { values } = cli;
const runs = cli.wholeNumber('runs');

const example = fg.sync('test_configs/disagg/perf/*.yaml', { cwd: packageRoot }).sort()[0];
const base = readFileSync(path.join(packageRoot, example), 'utf8');
if (!/^ {2}gen:\n/m.test(base)) throw new Error(`${example} has no worker_config.gen block to add keys to`);

/** The example with `keys` extra keys in worker_config.gen (`    k<i>: <i>`). */
function withKeys(keys: number): string {
  const lines: string[] = [];
  for (let i = 0; i < keys; i++) lines.push(`    k${i}: ${i}`);
  return base.replace(/^ {2}gen:\n/m, `  gen:\n${lines.join('\n')}\n`);
}

/** The most keys whose file stays under `bytes`. */
function keysUnder(bytes: number): number {
  let lo = 0;
  let hi = 1_000_000;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (Buffer.byteLength(withKeys(mid)) <= bytes) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

const dir = mkdtempSync(path.join(tmpdir(), 'bench-config-load-'));
const env = (workDir: string): NodeJS.ProcessEnv => {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(DISAGG_|GPU_TYPE$|WORK_DIR$|OUTPUT_PATH$)/.test(k)) out[k] = v;
  // No parse cache: every run parses (a cached parse would time the cache, not the loader).
  return { ...out, WORK_DIR: workDir, OUTPUT_PATH: path.join(dir, 'out'), GPU_TYPE: 'GB200', DISAGG_PARSE_CACHE: 'off' };
};

/** A WORK_DIR holding one config of `text`; its file. */
function workDirWith(name: string, text: string): { workDir: string; file: string } {
  const workDir = path.join(dir, name);
  const file = path.join(workDir, 'test_configs/disagg/perf', `${name}.yaml`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  return { workDir, file };
}

/** `disagg-bench validate <file>`: wall seconds, and what it said. */
async function validate(name: string, text: string): Promise<{ s: number; all: number[]; exitCode: number; output: string; mb: number }> {
  const { workDir, file } = workDirWith(name, text);
  const all: number[] = [];
  let last = { exitCode: 0, output: '' };
  for (let i = 0; i < runs; i++) {
    const run = await timedCommand(path.join(packageRoot, 'bin/disagg-bench.js'), ['validate', file], { env: env(workDir), cwd: packageRoot });
    all.push(run.wallS);
    last = { exitCode: run.exitCode, output: run.output.trim() };
  }
  return { s: minOf(all), all, ...last, mb: Buffer.byteLength(text) / 1e6 };
}

/** The `yaml` library alone with its uniqueKeys check (the quadratic loader it replaced), in this process. */
function yamlUniqueKeys(text: string): number {
  const t0 = performance.now();
  parseDocument(text, { uniqueKeys: true }).toJS();
  return (performance.now() - t0) / 1000;
}

async function main(): Promise<void> {
  try {
    // The CLI bundle is built on first use: build it before timing anything.
    await validate('warmup', base);
    const rows: Array<Array<string | number>> = [];
    const scaling: Array<{ keys: number; s: number; usPerKey: number; baselineS?: number }> = [];
    // N from an eighth of what fits the size bound up to what fits it (before the bound was 256 KiB: 25k-200k).
    const fits = keysUnder(MAX_CONFIG_BYTES);
    const sizes = [Math.floor(fits / 8), Math.floor(fits / 4), Math.floor(fits / 2), fits];
    for (const keys of sizes) {
      const text = withKeys(keys);
      const r = await validate(`keys${keys}`, text);
      if (r.exitCode !== 0) throw new Error(`validate of ${keys} keys failed (exit ${r.exitCode}):\n${outputTail(r.output)}`);
      const baselineS = keys <= 50_000 ? yamlUniqueKeys(text) : undefined;
      scaling.push({ keys, s: r.s, runs: r.all, usPerKey: (r.s / keys) * 1e6, baselineS } as (typeof scaling)[number]);
      rows.push([`${keys} keys (${r.mb.toFixed(1)} MB), validate`, r.s.toFixed(2), baselineS === undefined ? '' : baselineS.toFixed(2)]);
    }
    const atLimitKeys = keysUnder(MAX_CONFIG_BYTES);
    const atLimit = await validate('atlimit', withKeys(atLimitKeys));
    if (atLimit.exitCode !== 0) throw new Error(`validate at the bound failed:\n${outputTail(atLimit.output)}`);
    rows.push([`${atLimitKeys} keys (${atLimit.mb.toFixed(1)} MB, at the ${MAX_CONFIG_BYTES / 2 ** 20} MiB bound), validate`, atLimit.s.toFixed(2), '']);
    const million = await validate('keys1m', withKeys(1_000_000));
    const fifty = await validate('mb50', `${base}# ${'x'.repeat(50e6 - base.length - 3)}\n`);
    for (const [what, r] of [['1M keys', million], ['50 MB', fifty]] as const) {
      if (r.exitCode !== 1 || !/is [\d.]+ MiB \(\d+ bytes\), more than the \d+ [KM]iB a config may be/.test(r.output)) throw new Error(`${what}: expected a one-line refusal, got exit ${r.exitCode}:\n${outputTail(r.output)}`);
      rows.push([`${what} (${r.mb.toFixed(1)} MB), validate: refused in one line`, r.s.toFixed(2), '']);
    }
    // Inside Vitest: the 100k-key config listed, minus the same listing of the bare example.
    const vitest = async (name: string, text: string) => {
      const { workDir } = workDirWith(name, text);
      const all: number[] = [];
      for (let i = 0; i < runs; i++) {
        const run = await timedCommand(path.join(packageRoot, 'node_modules/.bin/vitest'), ['list', '--project', 'disagg'], { env: env(workDir), cwd: packageRoot });
        if (run.exitCode !== 0) throw new Error(`vitest list failed:\n${outputTail(run.output)}`);
        all.push(run.wallS);
      }
      return minOf(all);
    };
    const vitestBase = await vitest('vbase', base);
    const vitest100k = await vitest('v100k', withKeys(sizes[2]));
    const validateBase = (await validate('base', base)).s;
    const validate100k = scaling[2].s;
    const inVitest = vitest100k - vitestBase;
    const inValidate = validate100k - validateBase;
    rows.push([`${sizes[2]} keys inside vitest list (minus the bare example)`, inVitest.toFixed(2), '']);
    rows.push([`${sizes[2]} keys inside validate (minus the bare example)`, inValidate.toFixed(2), '']);
    printTable(`Loading a config with N keys in worker_config.gen, seconds (wall, fastest of ${runs}; baseline one run)`, ['', 'loader', 'yaml uniqueKeys (before)'], rows);
    const growth = scaling[3].usPerKey / scaling[0].usPerKey;
    const quadratic = scaling[1].baselineS! / scaling[0].baselineS!;
    console.log(`\ntime per key: ${scaling.map((x) => `${x.keys}: ${x.usPerKey.toFixed(1)} us`).join(', ')}; 200k/25k per-key ratio ${growth.toFixed(2)} (quadratic would be 8)`);
    console.log(`baseline (yaml uniqueKeys): 50k/25k time ratio ${quadratic.toFixed(2)} (linear would be 2)`);
    const goals: Goal[] = [
      { what: 'validate, 1M keys (refused by the size bound)', value: Number(million.s.toFixed(2)), limit: 10, atMost: true, unit: ' s' },
      { what: 'validate, 50 MB (refused by the size bound)', value: Number(fifty.s.toFixed(2)), limit: 10, atMost: true, unit: ' s' },
      { what: `validate, ${atLimitKeys} keys at the size bound (loaded)`, value: Number(atLimit.s.toFixed(2)), limit: 10, atMost: true, unit: ' s' },
      { what: 'time per key, 200k keys / 25k keys', value: Number(growth.toFixed(2)), limit: 1.5, atMost: true },
    ];
    printGoals(goals);
    appendResult('config-load', {
      example, runs, load: (await import('node:os')).loadavg()[0], maxConfigBytes: MAX_CONFIG_BYTES, scaling, atLimit: { keys: atLimitKeys, mb: atLimit.mb, s: atLimit.s },
      refused: { million: { mb: million.mb, s: million.s, said: million.output.split('\n')[0] }, fiftyMb: { mb: fifty.mb, s: fifty.s } },
      vitest: { list100kS: vitest100k, listBaseS: vitestBase, loadingS: inVitest }, validateLoadingS: inValidate, perKeyGrowth: growth, baselineGrowth50kOver25k: quadratic,
    }, goals);
  } finally {
    if (values.keep) console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

await main();
