// Fuzzing the config path: a few hundred seeded mutations of the example configs (lines deleted,
// duplicated, swapped, re-indented; values of another type; tabs; random and binary bytes;
// truncation) go through loading and validation as the suite does it (loadPlannedTest). None may
// throw; every issue names its file and says something; every parse error has a line and column.
// Mutants that still validate are built into job scripts, and every script must pass `bash -n`.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fg from 'fast-glob';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { loadPlannedTest } from '../../framework/select/plan.ts';
import { readYamlFileSync } from '../../framework/config/load.ts';
import { testType } from '../../framework/types/registry.ts';
import type { GpuDetection } from '../../framework/select/gpu.ts';
import { repoRoot } from '../fixtures/reliability/suite-run.ts';
import { seededRandom } from '../../runners/common/random.ts';

const SAMPLES = 300;
const gpu: GpuDetection = { gpuType: 'GB200', source: 'GPU_TYPE' };
// Environment overrides as a user sets them (the examples' placeholders are filled in their text).
const env = { MODEL_DIR: '/models', DATASET_DIR: '/data' };

/** Seeded, so a failing sample can be reproduced by its number. */
const random = seededRandom;

const ODD_VALUES = ['"text"', '[1, 2]', '{a: 1}', 'null', '~', '-1', '0', '1e309', '.nan', 'true', "'unterminated", '"a\\u0000b"', '&anchor x', '*missing', '<<: *x', '? complex', '|', '"<placeholder>"', "'$(touch /tmp/pwned)'"];

type Mutation = (lines: string[], rnd: () => number) => string[];
const pick = <T>(items: readonly T[], rnd: () => number): T => items[Math.floor(rnd() * items.length)];
const at = (lines: string[], rnd: () => number) => Math.floor(rnd() * Math.max(lines.length, 1));

const mutations: Record<string, Mutation> = {
  deleteLine: (l, r) => l.filter((_, i) => i !== at(l, r)),
  duplicateLine: (l, r) => { const i = at(l, r); return [...l.slice(0, i + 1), l[i] ?? '', ...l.slice(i + 1)]; },
  swapLines: (l, r) => { const out = [...l]; const i = at(l, r); const j = at(l, r); [out[i], out[j]] = [out[j], out[i]]; return out; },
  reindent: (l, r) => { const out = [...l]; const i = at(l, r); out[i] = ' '.repeat(Math.floor(r() * 6)) + (out[i] ?? '').trimStart(); return out; },
  otherType: (l, r) => {
    const out = [...l];
    const i = at(l, r);
    out[i] = (out[i] ?? '').replace(/:\s.*$/, `: ${pick(ODD_VALUES, r)}`);
    return out;
  },
  tab: (l, r) => { const out = [...l]; const i = at(l, r); const s = out[i] ?? ''; const c = Math.floor(r() * (s.length + 1)); out[i] = `${s.slice(0, c)}\t${s.slice(c)}`; return out; },
  randomBytes: (l, r) => {
    const out = [...l];
    const i = at(l, r);
    const bytes = Array.from({ length: 1 + Math.floor(r() * 6) }, () => String.fromCharCode(Math.floor(r() * 256))).join('');
    out[i] = (out[i] ?? '') + bytes;
    return out;
  },
  truncate: (l, r) => { const text = l.join('\n'); return text.slice(0, Math.floor(r() * text.length)).split('\n'); },
};

/** An example's text with every `<placeholder>` filled, so that its job can be built. */
const filled = (example: string) => readFileSync(path.join(repoRoot, example), 'utf8').replace(/<([a-z_]+)>/g, '/filled/$1');

describe('config fuzzing', () => {
  const examples = fg.sync('test_configs/*/*/*.yaml', { cwd: repoRoot }).sort();
  const dir = mkdtempSync(path.join(tmpdir(), 'config-fuzz-'));
  // Files the examples name relative to their folder (matrices/...) are found beside the copies.
  for (const folder of fg.sync('test_configs/*/*/*', { cwd: repoRoot, onlyDirectories: true })) {
    cpSync(path.join(repoRoot, folder), path.join(dir, path.basename(folder)), { recursive: true });
  }

  it(`${SAMPLES} mutated configs: no throw, every issue located, built scripts pass bash -n`, { timeout: 120_000 }, async () => {
    expect(examples.length).toBeGreaterThan(2);
    const counts = { parseErrors: 0, invalid: 0, valid: 0, built: 0 };
    const scripts: string[] = [];
    for (let sample = 0; sample < SAMPLES; sample++) {
      const rnd = random(1000 + sample);
      const example = examples[sample % examples.length];
      let lines = filled(example).split('\n');
      const applied: string[] = [];
      for (let n = 1 + Math.floor(rnd() * 3); n > 0; n--) {
        const name = pick(Object.keys(mutations), rnd);
        applied.push(name);
        lines = mutations[name](lines, rnd);
      }
      const [, type, category] = example.split('/');
      const stem = `fuzz${sample}`;
      const displayFile = `test_configs/${type}/${category}/${stem}.yaml`;
      const absFile = path.join(dir, `${stem}.yaml`);
      // latin1: the random bytes land in the file as bytes, invalid UTF-8 included.
      writeFileSync(absFile, lines.join('\n'), 'latin1');
      const what = `sample ${sample} (${example}: ${applied.join(', ')})`;

      const planned = loadPlannedTest({ id: `${type}_${category}_${stem}`, testType: type, category, stem, absFile, displayFile }, gpu, env);
      for (const issue of planned.issues) {
        expect(issue.file, what).toBe(displayFile);
        expect(typeof issue.message === 'string' && issue.message.trim().length > 0, what).toBe(true);
      }
      const parse = readYamlFileSync(absFile, displayFile).issues;
      for (const issue of parse) {
        expect(issue.line, `${what}: ${issue.message}`).toBeGreaterThanOrEqual(1);
        expect(issue.col, `${what}: ${issue.message}`).toBeGreaterThanOrEqual(1);
      }
      if (parse.length > 0) counts.parseErrors++;
      else if (planned.issues.length > 0) counts.invalid++;
      else {
        counts.valid++;
        const script = await buildScript(planned, path.join(dir, 'jobs', stem)).catch((error: Error) => {
          // A valid config whose job cannot be built must say why, not crash.
          expect(error.constructor.name, `${what}: ${error.stack}`).toBe('Error');
          expect(error.message.length).toBeGreaterThan(0);
          return undefined;
        });
        if (script) scripts.push(script);
      }
    }
    counts.built = scripts.length;
    console.log(`config fuzzing: ${JSON.stringify(counts)}`);
    // The mutations reach every outcome: the test is not vacuous.
    expect(counts.parseErrors, JSON.stringify(counts)).toBeGreaterThan(20);
    expect(counts.invalid, JSON.stringify(counts)).toBeGreaterThan(20);
    expect(counts.built, JSON.stringify(counts)).toBeGreaterThan(10);
    for (const script of scripts) {
      const check = await execa('bash', ['-n', script], { reject: false });
      expect(check.exitCode, `${script}: ${check.stderr}`).toBe(0);
    }
  });

  it('every example config builds into a job script that passes bash -n', async () => {
    for (const example of examples) {
      const [, type, category, file] = example.split('/');
      const stem = file.replace(/\.yaml$/, '');
      const absFile = path.join(dir, `example-${stem}.yaml`);
      writeFileSync(absFile, filled(example));
      const planned = loadPlannedTest({ id: `${type}_${category}_${stem}`, testType: type, category, stem, absFile, displayFile: example }, gpu, env);
      expect(planned.issues, example).toEqual([]);
      const script = await buildScript(planned, path.join(dir, 'examples', stem));
      const check = await execa('bash', ['-n', script], { reject: false });
      expect(check.exitCode, `${example}: ${check.stderr}`).toBe(0);
    }
  });
});

async function buildScript(planned: ReturnType<typeof loadPlannedTest>, logDir: string): Promise<string> {
  const built = await testType(planned.testType)!.buildJob({
    testId: planned.id, category: planned.category, config: planned.resolved!.config, logDir, workDir: repoRoot, packageRoot: repoRoot, gpuType: 'GB200',
  });
  return built.scriptPath;
}
