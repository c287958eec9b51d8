// Start-up time: what every run and every listing pays before its first test, against bare Vitest
// on the same box in the same run, and, with --before REV, against an earlier commit in the same
// run (rounds alternate between the trees, so load that comes and goes falls on both alike).
//   bare      `vitest list` of a project holding one test file with one test (Vitest's own cost)
//   empty     `npx vitest list --project disagg` with no configs (the project's fixed cost)
//   bin       `node bin/disagg-bench.js list` with no configs
//   N         `npx vitest list --project disagg` of N configs (copies of the disagg examples)
// Each tree is a copy (git archive of REV; the working tree's tracked and untracked files) with a
// node_modules of its own that links the packages of this one, so its caches (the CLI bundle, the
// parse cache) are its own. Each command runs once untimed first (caches warm, as every run after a
// user's first finds them). Medians of wall time, and of CPU time (user + system of the process
// tree: what the load does not stretch as much), each also as the difference from bare Vitest of
// the same tree in the same run: the goal's "fixed cost above bare Vitest" is empty minus bare.
// Command line: USAGE below (--help prints it).
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execaSync } from 'execa';
import fg from 'fast-glob';
import { packageRoot } from '../framework/settings.ts';
import { appendResult, loadNow, printGoals, printRunHeader, printTable, type Goal } from './lib/report.ts';
import { median } from './lib/stats.ts';
import { outputTail, timedCommandCpu } from './lib/timed-command.ts';
import { benchOptions } from './lib/options.ts';

const USAGE = `usage: node --import tsx bench/startup.ts [--before REV] [--runs 5] [--configs 1000,10000] [--smoke] [--keep]
  Start-up time of \`vitest list\` and \`disagg-bench list\` against bare Vitest in the same run
  (with --before REV, against that commit too), medians of wall and CPU time. --smoke: one round of
  10 configs, no figure kept; --keep: leave the trees it copied.`;

const cli = benchOptions({
  options: {
    before: { type: 'string' },
    runs: { type: 'string', default: '5' },
    configs: { type: 'string', default: '1000,10000' },
    smoke: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
}, USAGE);
const { values } = cli;
const runs = values.smoke ? 1 : cli.wholeNumber('runs');
const configCounts = values.smoke ? [10] : cli.wholeNumbers('configs');
const GPU_TYPE = 'GB200';

interface Tree {
  name: string;
  dir: string;
}

/** A node_modules of links to this checkout's packages: the tree's own caches, the same code. */
function linkNodeModules(dir: string): void {
  const source = path.join(packageRoot, 'node_modules');
  mkdirSync(path.join(dir, 'node_modules'));
  for (const entry of readdirSync(source)) if (entry !== '.cache') symlinkSync(path.join(source, entry), path.join(dir, 'node_modules', entry));
}

function treeOfRevision(scratch: string, rev: string): Tree {
  const dir = path.join(scratch, `tree-${rev.replace(/[^\w.-]/g, '_')}`);
  mkdirSync(dir);
  const archive = execaSync('git', ['archive', '--format=tar', rev], { cwd: packageRoot, encoding: 'buffer' }).stdout;
  execaSync('tar', ['-x', '-C', dir], { input: archive });
  linkNodeModules(dir);
  return { name: rev, dir };
}

function treeOfWorkingCopy(scratch: string): Tree {
  const dir = path.join(scratch, 'tree-working');
  const files = execaSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: packageRoot }).stdout.split('\0').filter(Boolean);
  for (const file of files) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    try {
      copyFileSync(path.join(packageRoot, file), path.join(dir, file));
    } catch {
      // a file deleted in the working copy but still in the index
    }
  }
  linkNodeModules(dir);
  return { name: 'working tree', dir };
}

/** WORK_DIR with `count` configs: the disagg examples round-robin, each under a name of its own. */
function workDirWith(scratch: string, count: number): string {
  const dir = path.join(scratch, `work-${count}`);
  const examples = fg.sync('test_configs/disagg/*/*.yaml', { cwd: packageRoot }).sort();
  mkdirSync(path.join(dir, 'test_configs', 'disagg'), { recursive: true });
  for (let i = 0; i < count; i++) {
    const source = examples[i % examples.length];
    const dest = path.join(dir, 'test_configs', 'disagg', path.basename(path.dirname(source)), `${path.basename(source, '.yaml')}_${i}.yaml`);
    mkdirSync(path.dirname(dest), { recursive: true });
    copyFileSync(path.join(packageRoot, source), dest);
  }
  return dir;
}

/** A Vitest project of one test file with one test, using `tree`'s node_modules. */
function bareProject(scratch: string, tree: Tree): string {
  const dir = path.join(scratch, `bare-${path.basename(tree.dir)}`);
  mkdirSync(dir);
  symlinkSync(path.join(tree.dir, 'node_modules'), path.join(dir, 'node_modules'));
  writeFileSync(path.join(dir, 'package.json'), '{ "name": "bare", "type": "module" }\n');
  writeFileSync(path.join(dir, 'one.test.ts'), "import { expect, test } from 'vitest';\ntest('one', () => expect(1).toBe(1));\n");
  return dir;
}

interface Timing {
  wallS: number;
  cpuS: number;
}

/** One run under /usr/bin/time (wall, and user + system of the whole process tree), checking the ids listed. */
async function timed(command: string[], cwd: string, env: NodeJS.ProcessEnv, expectLines: number | undefined): Promise<Timing> {
  const [file, ...args] = command;
  const r = await timedCommandCpu(file, args, { cwd, env, timeoutMs: 1_800_000 });
  const listed = r.output.split('\n').filter((l) => /\bdisagg_\w+/.test(l) && !/no configs under/.test(l)).length;
  if (r.exitCode !== 0 || (expectLines !== undefined && listed !== expectLines)) {
    throw new Error(`${command.join(' ')} in ${cwd} (exit ${r.exitCode}, ${listed} ids, expected ${expectLines}):\n${outputTail(r.output, 15)}`);
  }
  return { wallS: r.wallS, cpuS: r.cpuS };
}

function baseEnv(workDir: string, outputPath: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(DISAGG_|GPU_TYPE$|WORK_DIR$|OUTPUT_PATH$|NODE_OPTIONS$|VITEST)/.test(k)) env[k] = v;
  return { ...env, WORK_DIR: workDir, OUTPUT_PATH: outputPath, GPU_TYPE, DISAGG_HISTORY: 'off' };
}

interface Case {
  name: string;
  run: (tree: Tree) => Promise<Timing>;
}

async function main(): Promise<void> {
  printRunHeader();
  const scratch = mkdtempSync(path.join(tmpdir(), 'bench-startup-'));
  try {
    const trees = [...(values.before ? [treeOfRevision(scratch, values.before)] : []), treeOfWorkingCopy(scratch)];
    const empty = workDirWith(scratch, 0);
    const workDirs = new Map(configCounts.map((n) => [n, workDirWith(scratch, n)]));
    const out = path.join(scratch, 'out');
    const bare = new Map(trees.map((t) => [t, bareProject(scratch, t)]));
    const vitestList = (tree: Tree, workDir: string, expect: number) =>
      timed(['npx', 'vitest', 'list', '--project', 'disagg'], tree.dir, baseEnv(workDir, out), expect);
    const cases: Case[] = [
      { name: 'bare Vitest, one test', run: (t) => timed(['npx', 'vitest', 'list'], bare.get(t)!, baseEnv(empty, out), undefined) },
      { name: 'vitest list --project disagg, no configs', run: (t) => vitestList(t, empty, 0) },
      { name: 'node bin/disagg-bench.js list, no configs', run: (t) => timed(['node', 'bin/disagg-bench.js', 'list'], t.dir, baseEnv(empty, out), 0) },
      ...configCounts.map((n) => ({ name: `vitest list --project disagg, ${n} configs`, run: (t: Tree) => vitestList(t, workDirs.get(n)!, n) })),
    ];
    const results = new Map<string, Timing[]>();
    const key = (c: Case, t: Tree) => `${c.name} @ ${t.name}`;
    for (const c of cases) for (const t of trees) await c.run(t); // warm-up: caches as a user's second run finds them
    for (let round = 0; round < runs; round++) {
      for (const c of cases) {
        for (const t of round % 2 === 0 ? trees : [...trees].reverse()) {
          const timing = await c.run(t);
          results.set(key(c, t), [...(results.get(key(c, t)) ?? []), timing]);
        }
      }
    }
    const s = (x: number) => x.toFixed(2);
    const med = (c: Case, t: Tree, what: keyof Timing) => median(results.get(key(c, t))!.map((r) => r[what]));
    const aboveBare = (c: Case, t: Tree, what: keyof Timing) => med(c, t, what) - med(cases[0], t, what);
    const rows = cases.flatMap((c) => trees.map((t) => [
      c.name, t.name, s(med(c, t, 'wallS')), s(med(c, t, 'cpuS')), s(aboveBare(c, t, 'wallS')), s(aboveBare(c, t, 'cpuS')), results.get(key(c, t))!.map((r) => s(r.wallS)).join(' '),
    ]));
    printTable(`Start-up, ${runs} run(s) each after one untimed, rounds alternating between trees; seconds`, ['', 'tree', 'wall median', 'cpu median', 'wall - bare', 'cpu - bare', 'wall runs'], rows);
    const now = trees[trees.length - 1];
    const figures: Record<string, unknown> = { runs, configs: configCounts, gpuType: GPU_TYPE, trees: trees.map((t) => t.name) };
    for (const c of cases) {
      for (const t of trees) {
        figures[key(c, t)] = {
          wallMedianS: med(c, t, 'wallS'), cpuMedianS: med(c, t, 'cpuS'), wallAboveBareS: aboveBare(c, t, 'wallS'), cpuAboveBareS: aboveBare(c, t, 'cpuS'),
          wallS: results.get(key(c, t))!.map((r) => r.wallS), cpuS: results.get(key(c, t))!.map((r) => r.cpuS),
        };
      }
    }
    const goals: Goal[] = [
      { what: 'fixed cost above bare Vitest (empty list minus bare), wall', value: Number(aboveBare(cases[1], now, 'wallS').toFixed(2)), limit: 1.5, atMost: true, unit: ' s' },
      { what: 'fixed cost above bare Vitest (empty list minus bare), CPU', value: Number(aboveBare(cases[1], now, 'cpuS').toFixed(2)), limit: 1.5, atMost: true, unit: ' s' },
      // listing N unchanged configs against bare Vitest's own start, same tree, same run
      ...configCounts.filter((n) => n === 1000 || n === 10000).flatMap((n): Goal[] => (['wallS', 'cpuS'] as const).map((what) => ({
        what: `vitest list of ${n} configs / bare Vitest, ${what === 'wallS' ? 'wall' : 'CPU'}`,
        value: Number((med(cases[3 + configCounts.indexOf(n)], now, what) / med(cases[0], now, what)).toFixed(2)), limit: n === 1000 ? 1.5 : 2.5, atMost: true, unit: 'x',
      }))),
    ];
    if (trees.length === 2) {
      console.log(`\nratios, working tree / ${trees[0].name} (wall, cpu):`);
      for (const c of cases) {
        const ratio = (what: keyof Timing) => (med(c, now, what) / med(c, trees[0], what)).toFixed(2);
        console.log(`  ${c.name}: ${ratio('wallS')}, ${ratio('cpuS')}`);
        figures[`ratio ${c.name}`] = { wall: Number(ratio('wallS')), cpu: Number(ratio('cpuS')) };
      }
    }
    printGoals(goals);
    console.log(`load average at end: ${loadNow()}`);
    appendResult('startup', figures, goals); // under --smoke it keeps nothing and says the script runs
  } finally {
    if (values.keep) console.log(`kept ${scratch}`);
    else rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
