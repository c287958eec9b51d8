// The conventions every `disagg-bench` command keeps (framework/cli.ts, framework/commands/support/),
// through the package's bin as a user runs it: --version / -V; exit 2 for a usage error (unknown
// option, missing value, bad value; `sweep` exits 1 as nixlbench's gflags does); output into a
// closed pipe ends quietly; nothing written into the current folder; --json on the listing
// commands; help texts that name the variables the settings read (DISAGG_TEST_LIST, not TEST_LIST).
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { commands } from '../../framework/cli.ts';
import { SETTING_VARIABLES } from '../../framework/settings.ts';
import { STATE_WORDS, type TestState } from '../../framework/results/test-states.ts';
import { UPSTREAM_USAGE_EXIT, usageExitCode } from '../../framework/commands/support/exit-code.ts';

const root = path.resolve(import.meta.dirname, '../..');
const scratch = mkdtempSync(path.join(tmpdir(), 'cli-conventions-'));
/** The current folder of every command here: must stay empty. */
const cwd = path.join(scratch, 'cwd');
const workDir = path.join(scratch, 'work');
const outputPath = path.join(scratch, 'out');
const version = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version as string;

beforeAll(() => {
  mkdirSync(cwd);
  mkdirSync(outputPath);
  // A WORK_DIR holding the repository's disagg examples.
  const from = path.join(root, 'test_configs/disagg/perf');
  const to = path.join(workDir, 'test_configs/disagg/perf');
  mkdirSync(to, { recursive: true });
  for (const f of readdirSync(from)) copyFileSync(path.join(from, f), path.join(to, f));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const baseEnv = () => ({ WORK_DIR: workDir, OUTPUT_PATH: outputPath, GPU_TYPE: 'GB200', DISAGG_HISTORY: 'off' });

async function bin(args: string[], env: Record<string, string> = {}) {
  const r = await execa('node', [path.join(root, 'bin/disagg-bench.js'), ...args], {
    cwd,
    reject: false,
    timeout: 540_000, // a bound for a hang, not a speed check: a loaded 2-core box takes minutes
    extendEnv: false,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? scratch, ...baseEnv(), ...env },
  });
  return { code: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) };
}

const names = Object.keys(commands);

// Each test spawns the bin, several at once: on a loaded 2-core box that takes minutes, not seconds.
vi.setConfig({ testTimeout: 600_000 });

describe('--version and -V', () => {
  it('print the package version and Node.js, exit 0, alone and after every command', async () => {
    for (const words of [['--version'], ['-V']]) {
      const r = await bin(words);
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(`disagg-bench ${version} (node ${process.version})`);
    }
    const after = await Promise.all(names.map((name) => bin([name, ...(name === 'nixl-tool' ? ['etcd-stop'] : []), '--version'])));
    for (const [i, r] of after.entries()) {
      expect(r.code, names[i]).toBe(0);
      expect(r.stdout.trim(), names[i]).toBe(`disagg-bench ${version} (node ${process.version})`);
    }
  });
});

describe('a usage error exits 2 (an imitated tool: its own code)', () => {
  it.each(names)('%s: an unknown option', async (name) => {
    const r = await bin([name, ...(name === 'nixl-tool' ? ['etcd-stop'] : []), '--zz-no-such-option']);
    expect(r.code, r.stderr).toBe(usageExitCode(name));
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack
  });

  it('the exceptions are the documented ones', () => {
    expect(Object.keys(UPSTREAM_USAGE_EXIT)).toEqual(['sweep']);
    expect(usageExitCode('sweep')).toBe(1);
    const docs = readFileSync(path.join(root, 'docs/cli.md'), 'utf8');
    for (const [name, { code }] of Object.entries(UPSTREAM_USAGE_EXIT)) expect(docs).toMatch(new RegExp(`\\| \`${name}\` \\|[^\\n]*\\| ${code} \\|`));
  });

  it('a missing value, a bad value and a misplaced file', async () => {
    const cases: [string[], RegExp][] = [
      [['list', '--type'], /--type needs a value/],
      [['list', '--type', 'bogus'], /--type "bogus" is no test type; expected one of disagg, .*nixl/],
      [['report', '--threshold', 'lots'], /--threshold "lots": expected a percentage/],
      [['validate', path.join(scratch, 'elsewhere.yaml')], /not at test_configs\/<test_type>\/<category>\/<name>\.yaml under WORK_DIR/],
      [['ct-perftest'], /./],
      [['matgen', '--num-prefill-nodes', 'x'], /num-prefill-nodes/],
      [['nixl-tool', 'etcd-stop'], /needs --dir/],
    ];
    const results = await Promise.all(cases.map(([args]) => bin(args)));
    for (const [i, r] of results.entries()) {
      const [args, said] = cases[i];
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(said);
      expect(r.stdout, args.join(' ')).toBe('');
    }
  });

  it('a bad setting exits 2 too: TEST_LIST without DISAGG_TEST_LIST is refused in one sentence, not ignored', async () => {
    const r = await bin(['list'], { TEST_LIST: 'nightly.txt' });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe('disagg-bench list: TEST_LIST="nightly.txt": not a variable disagg-bench reads; expected DISAGG_TEST_LIST="nightly.txt"');
    // Beside the real one it is someone else's variable: the run goes on.
    mkdirSync(path.join(workDir, 'testlist'), { recursive: true });
    const ids = (await bin(['list'])).stdout.split('\n').filter(Boolean).map((l) => l.split('\t')[0]);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path.join(workDir, 'testlist', 'one.txt'), `${ids[0]}\n`);
    const both = await bin(['list'], { TEST_LIST: 'nightly.txt', DISAGG_TEST_LIST: 'testlist/one.txt' });
    expect(both.code, both.stderr).toBe(0);
    expect(both.stdout.split('\n').filter(Boolean)).toHaveLength(1);
  });
});

describe('help texts name the variables the settings read', () => {
  it('every command: each run variable a help text names is one the settings table spells so', async () => {
    const variables = new Set<string>(Object.values(SETTING_VARIABLES));
    // The run's variables as a help text would name them: DISAGG_*, and the unprefixed ones upstream uses.
    const looksLikeOne = /\b(?:DISAGG_[A-Z0-9_]+|[A-Z]+_(?:PATH|DIR|LIST)|GPU_TYPE|SCHEDULER|DEBUG_MODE|RESUME)\b/g;
    const named = new Map<string, string[]>();
    for (const name of ['list', 'validate', 'report', 'cleanup']) {
      const { usage } = await commands[name].load();
      named.set(name, [...usage.matchAll(looksLikeOne)].map((m) => m[0]));
    }
    expect([...named.values()].flat().length).toBeGreaterThan(5);
    for (const [name, words] of named) expect(words.filter((w) => !variables.has(w)), name).toEqual([]);
  });

  it('list: DISAGG_TEST_LIST and the others from the settings table, never a bare TEST_LIST', async () => {
    const help = (await bin(['list', '--help'])).stdout;
    for (const key of ['testList', 'gpuType', 'workDir', 'outputPath'] as const) expect(help).toContain(SETTING_VARIABLES[key]);
    expect(help).not.toMatch(/(?<![A-Z_])TEST_LIST/);
  });
});

describe('--json on the listing commands', () => {
  it('list --json: the same tests and states as the text', async () => {
    const [text, json] = await Promise.all([bin(['list']), bin(['list', '--json'])]);
    expect(json.code).toBe(text.code);
    const doc = JSON.parse(json.stdout) as { tests: { id: string; state: string; type: string }[]; unknown: unknown[] };
    const lines = text.stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(doc.tests.map((t) => t.id)).toEqual(lines.map(([id]) => id));
    // The text says the word of the state the JSON names, from the one table of test states.
    expect(doc.tests.map((t) => STATE_WORDS[t.state as TestState].word)).toEqual(lines.map(([, state]) => state.split(':')[0]));
    expect(doc.tests.every((t) => ['waiting', 'skipped', 'failed'].includes(t.state))).toBe(true);
    expect(doc.tests.length).toBeGreaterThan(0);
    expect(doc.tests.every((t) => t.type === 'disagg')).toBe(true);
    expect(doc.unknown).toEqual([]);
  });

  it('validate --json: each issue a record, the counts as the text says them', async () => {
    const bad = path.join(workDir, 'test_configs/disagg/perf/broken.yaml');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(bad, 'metadata:\n  model_name: x\nslurm:\n  job_time: "soon"\n');
    try {
      const [text, json] = await Promise.all([bin(['validate']), bin(['validate', '--json'])]);
      expect(text.code).toBe(1);
      expect(json.code).toBe(1);
      const doc = JSON.parse(json.stdout) as { configs: number; invalid: number; issues: { file: string; message: string }[] };
      expect(text.stdout).toContain(`${doc.configs} config(s), ${doc.invalid} invalid`);
      expect(doc.invalid).toBe(1);
      expect(doc.issues.length).toBeGreaterThan(0);
      expect(doc.issues.every((i) => i.file.endsWith('broken.yaml'))).toBe(true);
    } finally {
      rmSync(bad);
    }
  });
});

describe('output into a closed pipe', () => {
  it('list --json | head -c 10 ends quietly: no EPIPE, no stack, exit 0', async () => {
    // Enough configs that the listing outgrows the pipe's buffer after the reader has gone.
    const many = path.join(scratch, 'many');
    const from = path.join(root, 'test_configs/disagg/perf');
    const examples = readdirSync(from);
    mkdirSync(path.join(many, 'test_configs/disagg/perf'), { recursive: true });
    for (let i = 0; i < 600; i++) copyFileSync(path.join(from, examples[i % examples.length]), path.join(many, 'test_configs/disagg/perf', `c${i}_${examples[i % examples.length]}`));
    const r = await execa('bash', ['-c', `set -o pipefail; node ${path.join(root, 'bin/disagg-bench.js')} list --json | head -c 10`], {
      cwd,
      reject: false,
      timeout: 540_000,
      env: { ...baseEnv(), WORK_DIR: many },
    });
    expect(String(r.stdout)).toBe('{\n  "tests');
    expect(String(r.stderr)).not.toMatch(/EPIPE|\n\s+at /);
    expect(r.exitCode).toBe(0);
  });
});

describe('nothing is written into the current folder', () => {
  it('by the listing and checking commands', async () => {
    const lines = [['list'], ['list', '--json'], ['validate'], ['validate', '--json'], ['cleanup', '--missing-ok'], ['--version'], ['list', '--type', 'bogus']];
    const results = await Promise.all(lines.map((args) => bin(args)));
    expect(results.map((r) => r.code)).toEqual([0, 0, 0, 0, 0, 0, 2]);
    expect(readdirSync(cwd)).toEqual([]);
  });
});
