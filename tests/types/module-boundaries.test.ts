// DESIGN.md's boundaries, checked on the imports of every source file: no runner imports another
// runner, and a test type imports only its own runners (what two of them share lives in one
// neutral module: framework/types/common/ for the types, e.g. shell quoting and job_time).
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

/**
 * Runner-to-runner imports that exist today, each to be moved into a neutral module by the change
 * that next touches it. The test fails on any other, and on one of these once it is gone (so the
 * list only shrinks).
 */
const KNOWN_RUNNER_IMPORTS = new Set([
  'runners/trtllm/serve-bench/prompts.ts -> runners/xfer/random.ts',
  'runners/nixl/tool-task.ts -> runners/xfer/clock.ts',
  'runners/nixl/tool-task.ts -> runners/xfer/rank.ts',
  'runners/nixl/tools/nixlbench.ts -> runners/xfer/matrix.ts',
]);

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

const runnerOf = (file: string) => /^runners\/([^/]+)\//.exec(file)?.[1];
const typeOf = (file: string) => /^framework\/types\/([^/.]+)(?:\/|\.ts$)/.exec(file)?.[1];

describe('module boundaries', () => {
  const edges = [...sourceFiles('runners'), ...sourceFiles('framework/types')].flatMap((file) => importsOf(file).map((target) => ({ file, target })));

  it('no runner imports another runner (beyond the listed ones, which only shrink)', () => {
    const crossing = edges.filter(({ file, target }) => runnerOf(file) && runnerOf(target) && runnerOf(file) !== runnerOf(target)).map(({ file, target }) => `${file} -> ${target}`);
    expect(crossing.filter((e) => !KNOWN_RUNNER_IMPORTS.has(e))).toEqual([]);
    expect([...KNOWN_RUNNER_IMPORTS].filter((e) => !crossing.includes(e))).toEqual([]);
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
