// A lint over the project's own sources: no array spread into Math.min / Math.max / Math.hypot,
// String.fromCharCode / fromCodePoint, or `.apply(`. Each passes the whole array as call arguments,
// which overflows the stack past ~100k elements: a long run's samples once lost a whole
// measurement that way. Loops (minOf, maxOf, RunningStats in runners/common/stats.ts)
// do the same in constant stack.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const FOLDERS = ['framework', 'runners', 'bench', 'scripts', 'bin', 'tests'];
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;
const SKIP = new Set(['node_modules', '.gpu-bundle', 'results', 'logs']);

/** Spreads into calls whose arguments all land on the stack. */
const SPREAD_INTO_CALL = /\b(?:Math\.(?:min|max|hypot)|String\.fromCharCode|String\.fromCodePoint)\s*\(\s*\.\.\.|\.apply\s*\(/;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIP.has(name)) return [];
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return sources(file);
    return SOURCE.test(name) ? [file] : [];
  });
}

/** The code of a file with comments blanked (line numbers kept), so prose may name the pattern. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

function spreadCalls(text: string): number[] {
  return withoutComments(text).split('\n').flatMap((line, i) => (SPREAD_INTO_CALL.test(line) ? [i + 1] : []));
}

describe('no array spread into Math.min/max and similar calls', () => {
  it('catches what it must, and nothing in comments', () => {
    expect(spreadCalls('const a = Math.max(...xs);\nconst b = Math.min( ...ys);\nf.apply(null, xs);\nString.fromCharCode(...codes);')).toEqual([1, 2, 3, 4]);
    expect(spreadCalls('// Math.max(...xs) overflows\n/* Math.min(...ys) */\nconst c = Math.max(a, b);\nconst d = [...xs];')).toEqual([]);
  });

  it('finds none in the sources', () => {
    // This file holds examples of the pattern in strings, for the check above.
    const files = FOLDERS.flatMap((folder) => sources(path.join(root, folder))).filter((f) => f !== import.meta.filename);
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((file) => spreadCalls(readFileSync(file, 'utf8')).map((line) => `${path.relative(root, file)}:${line}`));
    expect(found, 'use minOf/maxOf/RunningStats (runners/common/stats.ts) or a loop').toEqual([]);
  });
});
