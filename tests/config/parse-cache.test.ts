import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { flushParseCache, openParseCache, readYamlFileCached } from '../../framework/config/parse-cache.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'parse-cache-'));
const file = path.join(dir, 'c.yaml');

describe('parse cache', () => {
  it('returns the new content at once when a file changes, even within one mtime tick', () => {
    openParseCache(`test:${dir}`);
    writeFileSync(file, 'a: 1\nb: 2\n');
    expect(readYamlFileCached(file, 'c.yaml').data).toEqual({ a: 1, b: 2 });
    writeFileSync(file, 'a: 7\nb: 2\n'); // same size, written immediately
    expect(readYamlFileCached(file, 'c.yaml').data).toEqual({ a: 7, b: 2 });
    flushParseCache();
  });

  it('serves a cached parse whose positions are still found for an issue', () => {
    openParseCache(`test2:${dir}`);
    writeFileSync(file, 'top:\n  inner: 3\n');
    readYamlFileCached(file, 'c.yaml');
    flushParseCache();
    openParseCache(`other:${dir}`); // forget the in-memory copy, then reopen: read from disk
    openParseCache(`test2:${dir}`);
    const cached = readYamlFileCached(file, 'c.yaml');
    expect(cached.data).toEqual({ top: { inner: 3 } });
    expect(cached.locate(['top', 'inner'])).toEqual({ line: 2, col: 3 });
  });

  it('never caches what JSON would change (NaN, Infinity) nor files with parse errors', () => {
    openParseCache(`test3:${dir}`);
    writeFileSync(file, 'x: .nan\ny: 1.0e+309\n');
    const first = readYamlFileCached(file, 'c.yaml').data as { x: number; y: number };
    expect(Number.isNaN(first.x)).toBe(true);
    expect(readYamlFileCached(file, 'c.yaml').data).toEqual({ x: NaN, y: Infinity });
    writeFileSync(file, 'a: 1\na: 2\n');
    expect(readYamlFileCached(file, 'c.yaml').issues[0].message).toMatch(/^duplicate key 'a'/);
    expect(readYamlFileCached(file, 'c.yaml').issues).toHaveLength(1);
  });
});
