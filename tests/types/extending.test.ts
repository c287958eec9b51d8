// docs/extending.md, followed to the letter: its code blocks are applied to a copy of the
// repository's source (a new file where it says `new`, its diff where it says `edit`), and the copy
// then runs: the new scheduler is chosen by SCHEDULER and takes a job, the new test type lists and
// validates its configs. The file counts of the page's table are counted from the same blocks, so
// the page cannot promise fewer files than it takes.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const page = readFileSync(path.join(repoRoot, 'docs/extending.md'), 'utf8');

interface Block {
  section: string;
  kind: 'new' | 'edit';
  file: string;
  body: string;
}

/** The page's `<!-- extending:new|edit FILE -->` blocks, each with the `## ` section it is in. */
function blocks(): Block[] {
  const found: Block[] = [];
  for (const m of page.matchAll(/<!-- extending:(new|edit) (\S+) -->\n```\w+\n([\s\S]*?)\n```/g)) {
    const section = [...page.slice(0, m.index).matchAll(/^## (.+)$/gm)].at(-1)?.[1] ?? '';
    found.push({ section, kind: m[1] as Block['kind'], file: m[2], body: m[3] });
  }
  return found;
}

/** One hunk of a diff block applied: its context and `-` lines, contiguous, found once, become its context and `+` lines. */
function applyEdit(text: string, diff: string, file: string): string {
  const lines = diff.split('\n');
  const before = lines.filter((l) => !l.startsWith('+')).map((l) => l.slice(1)).join('\n');
  const after = lines.filter((l) => !l.startsWith('-')).map((l) => l.slice(1)).join('\n');
  const at = text.indexOf(before);
  if (at < 0 || text.indexOf(before, at + 1) >= 0) throw new Error(`docs/extending.md: ${file}: the lines the diff changes are not found once:\n${before}`);
  return text.slice(0, at) + after + text.slice(at + before.length);
}

const copy = mkdtempSync(path.join(tmpdir(), 'extending-'));
afterAll(() => rmSync(copy, { recursive: true, force: true }));

beforeAll(() => {
  for (const part of ['framework', 'runners', 'bin', 'package.json', 'tsconfig.json']) cpSync(path.join(repoRoot, part), path.join(copy, part), { recursive: true });
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(copy, 'node_modules'));
  for (const b of blocks()) {
    const file = path.join(copy, b.file);
    if (b.kind === 'new') {
      if (existsSync(file)) throw new Error(`docs/extending.md: ${b.file} exists already; a new file was expected`);
      writeFileSync(file, `${b.body}\n`);
    } else {
      writeFileSync(file, applyEdit(readFileSync(file, 'utf8'), b.body, b.file));
    }
  }
});

/** The files a section's blocks create or change, and the lines its edits add. */
function cost(section: string): { files: string[]; addedLines: string[] } {
  const mine = blocks().filter((b) => b.section === section);
  return {
    files: [...new Set(mine.map((b) => b.file))],
    addedLines: mine.filter((b) => b.kind === 'edit').flatMap((b) => b.body.split('\n').filter((l) => l.startsWith('+'))),
  };
}

const tsx = (args: string[], env: Record<string, string> = {}) =>
  execa('node', ['--import', 'tsx', ...args], { cwd: copy, env: { ...env, DISAGG_BIN: 'tsx' }, reject: false, all: true, timeout: 180_000 });

describe('docs/extending.md, followed to the letter', () => {
  it('its table says what its blocks take', () => {
    expect(page).toMatch(/\| a scheduler \| 1 file and 1 registration line \(with its import\) \|/);
    expect(page).toMatch(/\| a test type that is not a serving one \| 3 files \|/);
    const scheduler = cost('A scheduler');
    expect(scheduler.files).toEqual(['framework/scheduler/echo.ts', 'framework/scheduler/schedulers.ts']);
    expect(scheduler.addedLines).toEqual(["+import { echoDefinition } from './echo.ts';", '+registerScheduler(echoDefinition);']);
    expect(cost('A test type').files).toHaveLength(3);
  });

  it('a scheduler: SCHEDULER=echo chooses it, it takes a job, and an unknown name lists it', { timeout: 200_000 }, async () => {
    const script = `
      const { createScheduler, schedulerProblem } = await import('./framework/scheduler/create.ts');
      const s = await createScheduler({ debugMode: false, scheduler: 'echo', outputPath: '${copy}/out' });
      const id = await s.submit({});
      console.log(s.name, id, (await s.poll([id])).get(id).state, s.capabilities.jobsOutliveRun);
      console.log(schedulerProblem({ SCHEDULER: 'ehco' }));`;
    const run = await tsx(['--input-type=module', '-e', script]);
    expect(run.exitCode, run.all).toBe(0);
    expect(run.stdout.split('\n')).toEqual([
      'echo echo-1 COMPLETED false',
      'SCHEDULER="ehco": expected slurm or local or echo (the scheduler; unset: slurm when sbatch is on PATH)',
    ]);
  });

  it('a test type: its configs are listed and validated, each problem at its file and line', { timeout: 200_000 }, async () => {
    const work = path.join(copy, 'work');
    mkdirSync(path.join(work, 'test_configs/echo/perf'), { recursive: true });
    writeFileSync(path.join(work, 'test_configs/echo/perf/fast.yaml'), 'benchmark:\n  latency_ms: 1.5\n');
    writeFileSync(path.join(work, 'test_configs/echo/perf/broken.yaml'), 'benchmark:\n  latency_ms: -1\n');
    const env = { WORK_DIR: work, OUTPUT_PATH: path.join(copy, 'out'), SCHEDULER: 'local', PATH: process.env.PATH ?? '' };
    const list = await tsx(['bin/disagg-bench.js', 'list', '--type', 'echo'], env);
    expect(list.all).toContain('echo_perf_fast');
    const validate = await tsx(['bin/disagg-bench.js', 'validate'], env);
    expect(validate.exitCode, validate.all).toBe(1);
    expect(validate.stdout).toMatch(/test_configs\/echo\/perf\/broken\.yaml:2.*latency_ms/);
    expect(validate.stdout).not.toMatch(/fast\.yaml/);
  });
});
