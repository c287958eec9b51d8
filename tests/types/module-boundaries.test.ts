// DESIGN.md's boundaries, checked on the imports of every source file: no runner imports another
// runner, and a test type imports only its own runners. What two of them share lives in one neutral
// module: framework/types/common/ for the types (shell quoting, job_time), runners/common/ for
// runtime code (host lists, size tokens, seeded random); neither is a runner.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

/** The runners each test type's modules may import (framework/types/<type>.ts and <type>/). */
const TYPE_RUNNERS: Record<string, string[]> = {
  serving: ['trtllm'],
  disagg: ['trtllm'],
  wideep: ['trtllm'],
  nixl: ['nixl', 'xfer'],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return sourceFiles(rel);
    return e.name.endsWith('.ts') ? [rel] : [];
  });
}

/** Repo-relative targets of a file's relative imports (static, `export ... from`, dynamic). */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(root, file), 'utf8');
  const specs = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"](\.[^'"]+)['"]/g)].map((m) => m[1]);
  return specs.map((s) => path.relative(root, path.resolve(path.dirname(path.join(root, file)), s)).split(path.sep).join('/'));
}

/** The neutral module under runners/: not a runner, importable by every runner and the framework. */
const NEUTRAL = 'common';
const runnerOf = (file: string) => {
  const dir = /^runners\/([^/]+)\//.exec(file)?.[1];
  return dir === NEUTRAL ? undefined : dir;
};
const typeOf = (file: string) => /^framework\/types\/([^/.]+)(?:\/|\.ts$)/.exec(file)?.[1];

describe('module boundaries', () => {
  const edges = [...sourceFiles('runners'), ...sourceFiles('framework/types')].flatMap((file) => importsOf(file).map((target) => ({ file, target })));

  it('no runner imports another runner', () => {
    expect(edges.some(({ file }) => runnerOf(file) === 'nixl')).toBe(true); // the walk sees the runners
    const crossing = edges.filter(({ file, target }) => runnerOf(file) && runnerOf(target) && runnerOf(file) !== runnerOf(target));
    expect(crossing.map(({ file, target }) => `${file} -> ${target}`)).toEqual([]);
  });

  it('runners/common imports nothing from a runner or the framework; the engine nothing from the framework', () => {
    expect(sourceFiles(`runners/${NEUTRAL}`)).toEqual(expect.arrayContaining([`runners/${NEUTRAL}/hostlist.ts`, `runners/${NEUTRAL}/size.ts`]));
    const common = edges.filter(({ file, target }) => file.startsWith(`runners/${NEUTRAL}/`) && !target.startsWith(`runners/${NEUTRAL}/`));
    expect(common.map(({ file, target }) => `${file} -> ${target}`)).toEqual([]);
    const engine = edges.filter(({ file, target }) => runnerOf(file) === 'xfer' && target.startsWith('framework/'));
    expect(engine.map(({ file, target }) => `${file} -> ${target}`)).toEqual([]);
  });

  it("a test type imports its own runners only; framework/types/common imports none", () => {
    const wrong = edges.filter(({ file, target }) => {
      const type = typeOf(file);
      const runner = runnerOf(target);
      return type !== undefined && runner !== undefined && !(TYPE_RUNNERS[type] ?? []).includes(runner);
    });
    expect(wrong.map(({ file, target }) => `${file} -> ${target}`)).toEqual([]);
  });

  it('the nixl type gets shell quoting and job_time from the neutral module', () => {
    const nixl = edges.filter(({ file }) => typeOf(file) === 'nixl').map(({ target }) => target);
    expect(nixl).toContain('framework/types/common/shell.ts');
    expect(nixl).toContain('framework/types/common/job-time.ts');
  });
});
